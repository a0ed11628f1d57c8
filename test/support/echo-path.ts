/**
 * A speakerphone caller for the Twilio stand-in: what the stand-in plays
 * (its realtime playback) comes back into its inbound stream through an echo
 * path (a delay, an echo return loss, a 3-tap line response, u-law), mixed
 * with the caller's own speech at a known onset, if any. Frames go out every
 * 20 ms on the test's clock, as a phone would send them.
 */
import { decodeMulaw, encodeMulaw } from "../../src/codecs/mulaw.js";
import type { TwilioStreamClient } from "./twilio-stream-client.js";

const RATE = 8000;
const FRAME = 160;

export interface EchoPathOptions {
  /** Round-trip delay of the echo, ms. */
  delayMs: number;
  /** Echo return loss, dB (6-25 on phones). */
  lossDb: number;
}

/** The line from the caller's loudspeaker back to its microphone: played audio in, echo out, 20 ms at a time. */
export class EchoPath {
  readonly #gain: number;
  readonly #taps = [1, 0.35, -0.15];
  /** Played PCM not yet returned, behind `delay` samples of silence. */
  #queue: number[];
  #last = [0, 0];

  constructor(options: EchoPathOptions) {
    this.#gain = 10 ** (-options.lossDb / 20);
    this.#queue = new Array<number>(Math.round((RATE * options.delayMs) / 1000)).fill(0);
  }

  /** u-law the caller's phone played. */
  played(ulaw: Uint8Array): void {
    for (const s of decodeMulaw(ulaw)) this.#queue.push(s);
  }

  /** The next 20 ms of echo (PCM; silence when the line played nothing). */
  next(): Float64Array {
    const out = new Float64Array(FRAME);
    const n = Math.min(FRAME, this.#queue.length);
    const dry = this.#queue.splice(0, n);
    for (let i = 0; i < FRAME; i++) {
      const x = dry[i] ?? 0;
      out[i] =
        (x * this.#taps[0]! + this.#last[0]! * this.#taps[1]! + this.#last[1]! * this.#taps[2]!) * this.#gain;
      this.#last = [x, this.#last[0]!];
    }
    return out;
  }
}

export interface SpeakerphoneCall {
  /** Stops sending; resolves once the loop ended. */
  stop(): Promise<void>;
  /** Frames sent so far. */
  readonly framesSent: number;
}

/**
 * Sends the caller's inbound stream: echo of what `client` played plus `speech` (u-law 8 kHz) from
 * `atMs` of the stream on, `gainDb` louder than the recording. Runs until stopped or the socket closes.
 */
export function speakerphone(
  client: TwilioStreamClient,
  path: EchoPath,
  speech?: { ulaw: Uint8Array; atMs: number; gainDb?: number },
): SpeakerphoneCall {
  const voice = speech ? decodeMulaw(speech.ulaw) : undefined;
  const voiceGain = 10 ** ((speech?.gainDb ?? 0) / 20);
  const voiceAt = speech ? Math.round((speech.atMs / 1000) * RATE) : 0;
  let read = 0;
  let frames = 0;
  let stopped = false;
  const started = performance.now();
  const loop = (async () => {
    while (!stopped && client.closeCode === undefined) {
      for (; read < client.played.length; read++) path.played(client.played[read]!);
      const echo = path.next();
      const pcm = new Int16Array(FRAME);
      const at = frames * FRAME;
      for (let i = 0; i < FRAME; i++) {
        const v = voice ? (voice[at + i - voiceAt] ?? 0) * voiceGain : 0;
        pcm[i] = Math.max(-32768, Math.min(32767, Math.round(echo[i]! + v)));
      }
      client.sendMedia(encodeMulaw(pcm));
      frames++;
      const wait = started + frames * 20 - performance.now();
      await new Promise((r) => setTimeout(r, Math.max(0, wait)));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
    },
    get framesSent() {
      return frames;
    },
  };
}
