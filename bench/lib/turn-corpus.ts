/**
 * The turn-taking corpus (issue 15): phone calls on a speakerphone, built by
 * script from real recordings (pocketsphinx-testdata) and espeak-ng, seeded,
 * so the same seed and size give the same calls, byte for byte.
 *
 * Each call is a caller's near-end track (what their microphone hears besides
 * the assistant's echo: their speech at a known onset, background noise, the
 * line's hiss) and the echo path their phone returns the assistant's audio
 * through (delay 20-250 ms, echo return loss 6-25 dB, a line or room impulse
 * response; u-law on the way). The echo itself is made live from what the
 * carrier stand-in plays (test/support/echo-path.ts), so it is exactly the
 * audio the server sent, when it was played.
 *
 *   echo-only          the caller never speaks: the whole answer plays back as echo
 *   interruption       real speech at a known onset while the answer plays (some with a pause inside)
 *   backchannel        "mm-hmm", "yeah", "okay", "right" (espeak-ng, six voices) while the answer plays
 *   noisy-echo         echo-only in pink, babble or street noise at 20, 10, 5 dB SNR
 *   noisy-interruption an interruption in the same noise
 */
import { createHash } from "node:crypto";
import {
  activeLevelDb,
  atLevel,
  espeak,
  lineHiss,
  noise,
  RATE,
  RECORDINGS,
  recording,
  rng,
  trim,
  type NoiseKind,
  type Rng,
} from "./corpus-audio.js";

/** The assistant's answer every corpus call hears (telephony.greeting): about 20 s of espeak-ng. */
export const ANSWER =
  "Thank you for calling the test line. I will read you the details of your order while you listen, " +
  "so please stay on the line until I am finished. Your order number is four five six seven, it was placed " +
  "on Monday, it contains three items, and it will be shipped to the address we have on file. The package " +
  "should arrive within five working days. If anything about the order looks wrong, you can tell me at any time.";

export const ECHO_RETURN_LOSSES_DB = [6, 10, 15, 20, 25] as const;
export const NOISE_KINDS: readonly NoiseKind[] = ["pink", "babble", "street"];
export const BACKCHANNELS = ["Mm-hmm.", "Yeah.", "Okay.", "Right."] as const;
/**
 * What espeak-ng is given for a backchannel whose spelling it does not hum: it reads "Mm-hmm." as
 * "em em-hum" (`espeak-ng -x`), which no caller says; its phoneme input `[[m'hm]]` is the hummed
 * "mm-hm".
 */
const SPOKEN: Readonly<Record<string, string>> = { "Mm-hmm.": "[[m'hm]]" };

/** The caller's speech active level (about the assistant's own), dBFS; each call within +-3 dB of it. */
export const SPEECH_LEVEL_DB = -20;
/** A phone line's hiss under everything, dBFS. */
const HISS_DB = -66;

export type CallKind = "echo-only" | "interruption" | "backchannel" | "noisy-echo" | "noisy-interruption";

export interface CorpusEcho {
  delayMs: number;
  lossDb: number;
  response: "line" | "room";
  /** The room response's seed (roomResponse). */
  responseSeed: number;
}

export interface CorpusSpeech {
  /** Stream time of the first and last speech sample, ms (the stream starts when the call connects). */
  onsetMs: number;
  endMs: number;
  /** What is said: a recording's name, or the backchannel's text. */
  label: string;
  /** Pauses inside the utterance, ms (an endpoint that commits in one cuts the caller off). */
  pausesMs: number[];
}

export interface CorpusCall {
  id: string;
  kind: CallKind;
  echo: CorpusEcho;
  noise?: { kind: NoiseKind; snrDb: number };
  /** Stream ms at which noise switches on in an echo-only call (the grid's noise steps), when it does. */
  noiseStartMs?: number;
  speech?: CorpusSpeech;
  /**
   * The talker-to-echo ratio of a grid call (talker-echo-grid.ts): the caller's active level over the
   * returned echo's, dB. Absent in the base corpus (the caller near the answer's own level there).
   */
  terDb?: number;
  /** The caller's near-end sound from stream time 0 (8 kHz PCM, 16-bit scale), as long as the call. */
  track: Float64Array;
  /** Stream time the caller hangs up, ms; an echo-only call also ends when the answer has played. */
  hangUpMs: number;
}

export interface CorpusOptions {
  seed: number;
  /** Minutes of echo-only answer audio (the false barge-in figure's exposure); the other sets scale with it. */
  minutes: number;
}

/** Rough length of ANSWER as the local TTS speaks it, s: sizes the echo-only set. */
const ANSWER_SECONDS = 21;
/** Silence kept after the caller's speech before hanging up: the endpoint commits in it. */
export const TAIL_MS = 3000;

export function buildCorpus(options: CorpusOptions): CorpusCall[] {
  const { seed, minutes } = options;
  const calls: CorpusCall[] = [];
  const echoCalls = Math.max(2, Math.ceil((minutes * 60) / ANSWER_SECONDS));
  for (let i = 0; i < echoCalls; i++) calls.push(echoOnly(seed, i, "echo-only"));
  const interruptions = Math.max(3, Math.round(minutes * 4));
  for (let i = 0; i < interruptions; i++) calls.push(interruption(seed, i, "interruption"));
  // At least three of each backchannel (in different voices), so "0 of N" says something.
  const backchannels = Math.max(3 * BACKCHANNELS.length, Math.round(minutes * 8));
  for (let i = 0; i < backchannels; i++) calls.push(backchannel(seed, i));
  const snrs = minutes >= 2 ? [20, 10, 5] : [10];
  let n = 0;
  for (const kind of NOISE_KINDS)
    for (const snrDb of snrs) {
      calls.push(echoOnly(seed, n, "noisy-echo", { kind, snrDb }));
      calls.push(interruption(seed, n, "noisy-interruption", { kind, snrDb }));
      n++;
    }
  return calls;
}

/** A digest of the whole corpus (every track and parameter): equal digests, equal corpora. */
export function corpusDigest(calls: readonly CorpusCall[]): string {
  const h = createHash("sha256");
  for (const c of calls) {
    const { track, ...rest } = c;
    h.update(JSON.stringify(rest));
    h.update(new Uint8Array(Float64Array.from(track, Math.round).buffer));
  }
  return h.digest("hex");
}

function echoPath(r: Rng, i: number): CorpusEcho {
  return {
    delayMs: Math.round(20 + 230 * r()),
    lossDb: ECHO_RETURN_LOSSES_DB[i % ECHO_RETURN_LOSSES_DB.length]!,
    response: i % 2 === 0 ? "line" : "room",
    responseSeed: Math.floor(r() * 0xffff_ffff),
  };
}

/** The near-end bed of a call: hiss, and noise at `snrDb` below the speech level when asked. */
export function bed(r: Rng, ms: number, background?: { kind: NoiseKind; snrDb: number }): Float64Array {
  const n = Math.round((ms / 1000) * RATE);
  const track = lineHiss(r, n, HISS_DB);
  if (background) {
    const bg = noise(background.kind, r, n, SPEECH_LEVEL_DB - background.snrDb);
    for (let i = 0; i < n; i++) track[i] = track[i]! + bg[i]!;
  }
  return track;
}

export function place(track: Float64Array, pcm: Float64Array, atMs: number): void {
  const at = Math.round((atMs / 1000) * RATE);
  for (let i = 0; i < pcm.length && at + i < track.length; i++) track[at + i] = track[at + i]! + pcm[i]!;
}

function echoOnly(
  seed: number,
  i: number,
  kind: "echo-only" | "noisy-echo",
  background?: { kind: NoiseKind; snrDb: number },
): CorpusCall {
  const r = rng(seed, kind, i);
  const echo = echoPath(r, i);
  // A quiet echo-only call lasts the whole answer; a noisy one 12 s of it (the noise is the variable).
  const hangUpMs = kind === "echo-only" ? 40_000 : 12_000;
  const noiseTag = background ? `-${background.kind}-${background.snrDb}dB` : "";
  return {
    id: `${kind}-${i}${noiseTag}`,
    kind,
    echo,
    ...(background ? { noise: background } : {}),
    track: bed(r, hangUpMs, background),
    hangUpMs,
  };
}

/** The caller's utterance: one recording, or (every other call) two with a pause between them. */
function utterance(r: Rng, i: number): { pcm: Float64Array; label: string; pausesMs: number[] } {
  const pick = (): string => RECORDINGS[Math.floor(r() * RECORDINGS.length)]!;
  const first = pick();
  const level = SPEECH_LEVEL_DB + 6 * r() - 3;
  const a = atLevel(trim(recording(first)), level, activeLevelDb);
  const name = (p: string): string =>
    p
      .split("/")
      .pop()!
      .replace(/\.(raw|wav)$/, "");
  if (i % 2 === 0) return { pcm: a, label: name(first), pausesMs: [] };
  const second = pick();
  const b = atLevel(trim(recording(second)), level, activeLevelDb);
  const pauseMs = Math.round(250 + 750 * r());
  const gap = Math.round((pauseMs / 1000) * RATE);
  const pcm = new Float64Array(a.length + gap + b.length);
  pcm.set(a, 0);
  pcm.set(b, a.length + gap);
  return { pcm, label: `${name(first)} + ${pauseMs} ms + ${name(second)}`, pausesMs: [pauseMs] };
}

function interruption(
  seed: number,
  i: number,
  kind: "interruption" | "noisy-interruption",
  background?: { kind: NoiseKind; snrDb: number },
): CorpusCall {
  const r = rng(seed, kind, i);
  const echo = echoPath(r, i + 1);
  const { pcm, label, pausesMs } = utterance(r, i);
  const onsetMs = Math.round(2000 + 4000 * r());
  const endMs = onsetMs + Math.round((pcm.length / RATE) * 1000);
  const hangUpMs = endMs + TAIL_MS;
  const track = bed(r, hangUpMs, background);
  place(track, pcm, onsetMs);
  const noiseTag = background ? `-${background.kind}-${background.snrDb}dB` : "";
  return {
    id: `${kind}-${i}${noiseTag}`,
    kind,
    echo,
    ...(background ? { noise: background } : {}),
    speech: { onsetMs, endMs, label, pausesMs },
    track,
    hangUpMs,
  };
}

const BACKCHANNEL_VOICES = ["en-us", "en-gb", "en-us+f3", "en-gb-x-rp+m3", "en-us+m2", "en-gb+f4"] as const;

function backchannel(seed: number, i: number): CorpusCall {
  const r = rng(seed, "backchannel", i);
  const echo = echoPath(r, i + 2);
  const text = BACKCHANNELS[i % BACKCHANNELS.length]!;
  const voice = BACKCHANNEL_VOICES[Math.floor(r() * BACKCHANNEL_VOICES.length)]!;
  const spoken = espeak(SPOKEN[text] ?? text, voice, Math.round(150 + 40 * r()), Math.round(35 + 30 * r()));
  const pcm = atLevel(trim(spoken), SPEECH_LEVEL_DB + 6 * r() - 3, activeLevelDb);
  const onsetMs = Math.round(2500 + 3500 * r());
  const endMs = onsetMs + Math.round((pcm.length / RATE) * 1000);
  const hangUpMs = endMs + 2500;
  const track = bed(r, hangUpMs);
  place(track, pcm, onsetMs);
  return {
    id: `backchannel-${i}`,
    kind: "backchannel",
    echo,
    speech: { onsetMs, endMs, label: `${text} (${voice})`, pausesMs: [] },
    track,
    hangUpMs,
  };
}

/**
 * Where the caller's speech becomes active by ITU-T P.56's rule (a 10 ms frame of the call's near-end track
 * at most 15.9 dB under the utterance's active level), stream ms. The corpus onset (`speech.onsetMs`) is the
 * recording trimmed at 35 dB under its peak, which keeps 100-270 ms of breath and room sound at -35 to
 * -50 dBFS before the first syllable; latency figures are printed from both.
 */
export function activeOnsetMs(call: CorpusCall): number | undefined {
  if (!call.speech) return undefined;
  const from = Math.floor((call.speech.onsetMs / 1000) * RATE);
  const to = Math.min(call.track.length, Math.ceil((call.speech.endMs / 1000) * RATE));
  const span = call.track.subarray(from, to);
  const threshold = activeLevelDb(span) - P56_MARGIN_DB;
  const step = RATE / 100;
  for (let at = 0; at + step <= span.length; at += step) {
    let sum = 0;
    for (let i = at; i < at + step; i++) sum += span[i]! * span[i]!;
    if (10 * Math.log10(sum / step / 32768 ** 2 + 1e-12) >= threshold)
      return call.speech.onsetMs + Math.round((at / RATE) * 1000);
  }
  return call.speech.onsetMs;
}

/** P.56's activity threshold under the active speech level, dB. */
const P56_MARGIN_DB = 15.9;
