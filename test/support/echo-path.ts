/**
 * A speakerphone caller for the Twilio stand-in: what the stand-in plays
 * (its realtime playback) comes back into its inbound stream through an echo
 * path (a delay, an echo return loss, a line or room impulse response, u-law),
 * mixed with the caller's own sound (speech at a known onset, or a whole
 * near-end track: speech, noise, line hiss). Frames go out every 20 ms on the
 * test's clock, as a phone would send them.
 */
import { decodeMulaw, encodeMulaw } from "../../src/codecs/mulaw.js";
import type { TwilioStreamClient } from "./twilio-stream-client.js";

const RATE = 8000;
const FRAME = 160;

/** The 3-tap line response of the first speakerphone tests (not normalized: about 0.6 dB of gain). */
const LEGACY_TAPS = [1, 0.35, -0.15];

export interface EchoPathOptions {
  /** Round-trip delay of the echo, ms. */
  delayMs: number;
  /** Echo return loss, dB (6-25 on phones). */
  lossDb: number;
  /**
   * The echo's impulse response after the delay (taps at 8 kHz): lineResponse(), roomResponse(seed) or
   * any taps. Normalized to unit energy, so the echo returns exactly `lossDb` below what was played.
   * Default: the 3-tap line of the first tests, as it was (not normalized).
   */
  response?: Float64Array | undefined;
}

/** A hybrid's line echo: a direct tap and a short dispersive tail, unit energy. */
export function lineResponse(): Float64Array {
  return normalize(Float64Array.from([1, 0.35, -0.15, 0.08, -0.04]));
}

/**
 * A small room seen by a speakerphone: the direct path, then a reverberant tail (seeded noise under an
 * exponential decay, RT60 `rt60Ms`) over `lengthMs`, unit energy; the direct tap stays the largest.
 */
export function roomResponse(seed: number, rt60Ms = 250, lengthMs = 60): Float64Array {
  const n = Math.round((RATE * lengthMs) / 1000);
  const taps = new Float64Array(n);
  let state = seed >>> 0 || 1;
  const rand = (): number => {
    // xorshift32: the response must be the same for the same seed.
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
  const decayPerSample = Math.log(1000) / ((RATE * rt60Ms) / 1000); // -60 dB over rt60
  taps[0] = 1;
  for (let i = 8; i < n; i++) taps[i] = 0.5 * (rand() * 2 - 1) * Math.exp(-decayPerSample * i);
  return normalize(taps);
}

function normalize(taps: Float64Array): Float64Array {
  let energy = 0;
  for (const t of taps) energy += t * t;
  const scale = 1 / Math.sqrt(energy);
  return taps.map((t) => t * scale);
}

/** The line from the caller's loudspeaker back to its microphone: played audio in, echo out, 20 ms at a time. */
export class EchoPath {
  readonly #taps: Float64Array;
  /** Played PCM not yet returned, behind `delay` samples of silence. */
  #queue: number[];
  /** The last taps.length dry samples, newest at #at (a ring). */
  readonly #history: Float64Array;
  #at = 0;

  constructor(options: EchoPathOptions) {
    const gain = 10 ** (-options.lossDb / 20);
    const response = options.response ? normalize(options.response) : Float64Array.from(LEGACY_TAPS);
    this.#taps = response.map((t) => t * gain);
    this.#history = new Float64Array(this.#taps.length);
    this.#queue = new Array<number>(Math.round((RATE * options.delayMs) / 1000)).fill(0);
  }

  /** u-law the caller's phone played. */
  played(ulaw: Uint8Array): void {
    for (const s of decodeMulaw(ulaw)) this.#queue.push(s);
  }

  /** PCM the caller's phone played (the path measured without u-law). */
  playedPcm(pcm: ArrayLike<number>): void {
    for (let i = 0; i < pcm.length; i++) this.#queue.push(pcm[i]!);
  }

  /** The next 20 ms of echo (PCM; silence when the line played nothing). */
  next(): Float64Array {
    const out = new Float64Array(FRAME);
    const n = Math.min(FRAME, this.#queue.length);
    const dry = this.#queue.splice(0, n);
    const taps = this.#taps;
    const history = this.#history;
    const len = taps.length;
    for (let i = 0; i < FRAME; i++) {
      this.#at = (this.#at + 1) % len;
      history[this.#at] = dry[i] ?? 0;
      let y = 0;
      for (let k = 0, j = this.#at; k < len; k++, j = j === 0 ? len - 1 : j - 1) {
        const t = taps[k]!;
        if (t !== 0) y += t * history[j]!;
      }
      out[i] = y;
    }
    return out;
  }
}

export interface SpeakerphoneCall {
  /** Stops sending; resolves once the loop ended. */
  stop(): Promise<void>;
  /** Frames sent so far. */
  readonly framesSent: number;
  /** performance.now() when each frame was sent, by frame index (frame k holds samples k*160 .. k*160+159). */
  readonly sentAt: readonly number[];
}

export interface NearEnd {
  /** The caller's own sound from the stream's first sample on (PCM 8 kHz, any length; silence after it). */
  track?: ArrayLike<number>;
  /** Or speech (u-law 8 kHz) from `atMs` of the stream on, `gainDb` louder than the recording. */
  ulaw?: Uint8Array;
  atMs?: number;
  gainDb?: number;
}

/**
 * Sends the caller's inbound stream: echo of what `client` played plus the caller's near-end sound
 * (`speech`: u-law speech at `atMs`, or a whole PCM `track`). Runs until stopped or the socket closes.
 */
export function speakerphone(
  client: TwilioStreamClient,
  path: EchoPath,
  speech?: NearEnd & ({ ulaw: Uint8Array; atMs: number } | { track: ArrayLike<number> }),
): SpeakerphoneCall {
  const track: ArrayLike<number> | undefined = speech?.track ?? placed(speech);
  // At 1x the loudspeaker's whole output, silence included, keeps the echo's delay fixed through the
  // gaps (a hold after a clear drained the path's queue and brought the resumed answer's echo back at
  // once); otherwise only the audio played exists, without a clock.
  const source = client.realtime ? client.line : client.played;
  const started = performance.now();
  // One clock for the loudspeaker and the microphone, as on a phone: frame k is sent at started + k * 20
  // ms, right after the line played up to then (the marks its playback echoes go out before it).
  client.driveLine();
  client.advanceLine(started);
  let read = client.realtime ? source.length : 0;
  let frames = 0;
  let stopped = false;
  const sentAt: number[] = [];
  const send = (): void => {
    client.advanceLine(started + frames * 20);
    for (; read < source.length; read++) path.played(source[read]!);
    const echo = path.next();
    const pcm = new Int16Array(FRAME);
    const at = frames * FRAME;
    for (let i = 0; i < FRAME; i++) {
      const v = track ? (track[at + i] ?? 0) : 0;
      pcm[i] = Math.max(-32768, Math.min(32767, Math.round(echo[i]! + v)));
    }
    sentAt.push(performance.now());
    client.sendMedia(encodeMulaw(pcm));
    frames++;
  };
  const loop = (async () => {
    while (!stopped && client.closeCode === undefined) {
      // Every frame due by now at once: a starved process sends late frames in a burst, as a carrier's
      // frames reach a starved server, never by a clock of its own that falls behind the line's (one
      // frame per timer turn did: the marks, on the line's clock, then ran ahead of the echo).
      do send();
      while (started + frames * 20 <= performance.now() && client.closeCode === undefined);
      const wait = started + frames * 20 - performance.now();
      await new Promise((r) => setTimeout(r, Math.max(0, wait)));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      client.driveLine(false);
    },
    get framesSent() {
      return frames;
    },
    sentAt,
  };
}

/** u-law speech placed at `atMs` with `gainDb`, as a PCM track. */
function placed(speech: NearEnd | undefined): Float64Array | undefined {
  if (!speech?.ulaw) return undefined;
  const voice = decodeMulaw(speech.ulaw);
  const gain = 10 ** ((speech.gainDb ?? 0) / 20);
  const offset = Math.round(((speech.atMs ?? 0) / 1000) * RATE);
  const out = new Float64Array(offset + voice.length);
  for (let i = 0; i < voice.length; i++) out[offset + i] = voice[i]! * gain;
  return out;
}
