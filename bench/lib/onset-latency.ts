/**
 * The turn-taking corpus through the leg's input chain offline (issue 15):
 * media/echo-guard.ts over the speexdsp canceller, then the speech gate, the
 * classes the leg builds, fed each call's caller channel as the bench's
 * speakerphone makes it (the answer's echo through the call's echo path plus
 * its near-end track, u-law) with the answer as played as the reference,
 * faster than real time. Per call: when the gate confirms the caller's
 * speech after its known onset, and onsets before it (false barge-ins).
 *
 * What it leaves out, the real-time bench's part (turn-taking.bench.ts): the
 * policy, the playout's `clear` and the wire, and a live line's alignment of
 * the reference (here the reference is exact, or shifted by `referenceLagMs`).
 */
import { createEchoCanceller } from "../../src/codecs/echo-canceller.js";
import { decodeMulaw, encodeMulaw } from "../../src/codecs/mulaw.js";
import { dbfs } from "../../src/codecs/pcm.js";
import { EchoGuard, type ResolvedEchoCancellation } from "../../src/voice/media/echo-guard.js";
import { SpeechGate } from "../../src/voice/media/speech-gate.js";
import { EchoPath, lineResponse, roomResponse } from "../../test/support/echo-path.js";
import { espeak, levelDb, rng } from "./corpus-audio.js";
import { ANSWER, type CorpusCall } from "./turn-corpus.js";

const FRAME = 160;

export interface OnsetChain {
  /** The guard's options (undefined: no echo cancellation, the gate hears the line as it comes). */
  echo: ResolvedEchoCancellation | undefined;
  /** The gate's onset, ms (telephony vad.minSpeechMs). */
  minSpeechMs: number;
  /** The gate's level, dBFS (telephony vad.threshold). */
  threshold: number;
  /** When the answer starts playing after the call connects, ms (the greeting's synthesis). */
  answerStartMs: number;
  /** The reference reaches the guard this much later than the line played it, ms (a live mirror's slip). */
  referenceLagMs: number;
  /**
   * A live mirror's drift: every second the reference's lag moves by -1, 0 or +1 frame (seeded per call),
   * within +-this many frames of `referenceLagMs` (0: none).
   */
  jitterFrames: number;
  /** Print this call's frames from just before its onset to a second after (levels, the guard's verdict, the gate). */
  traceCallId?: string | undefined;
}

export const DEFAULT_CHAIN: OnsetChain = {
  echo: undefined,
  minSpeechMs: 120,
  threshold: -45,
  answerStartMs: 400,
  referenceLagMs: 0,
  jitterFrames: 0,
};

export interface OnsetResult {
  id: string;
  kind: CorpusCall["kind"];
  lossDb: number;
  delayMs: number;
  response: string;
  noise?: string | undefined;
  /** The caller's onset (stream ms), when the call has speech. */
  onsetMs?: number | undefined;
  /** The gate's first speech-start at or after the onset minus the onset (the frame it came in ends at it), ms. */
  detectMs?: number | undefined;
  /** The same gate on the caller's near-end track alone (no echo, no guard): what the gate itself takes, ms. */
  aloneMs?: number | undefined;
  /** The first 10 ms the gate hears as speech on the track alone (after the corpus onset's soft lead-in), minus the onset, ms. */
  voicedMs?: number | undefined;
  /** Speech-starts before the onset (all of them on an echo-only call): barge-ins on echo. */
  falseOnsets: number;
  /** Stream ms of the first false onset. */
  firstFalseMs?: number | undefined;
  /** Frames the guard attenuated as residual echo. */
  suppressedFrames: number;
}

let answerPcm: Int16Array | undefined;

/** The answer as the server sends it (espeak-ng, u-law on the wire), 8 kHz PCM. */
function answer(): Int16Array {
  answerPcm ??= decodeMulaw(encodeMulaw(Int16Array.from(espeak(ANSWER), (v) => Math.round(v))));
  return answerPcm;
}

/** How long a call is simulated: an echo-only one to its hang-up, a spoken one to 2 s after the onset. */
function callFrames(call: CorpusCall): number {
  const ms = call.speech ? Math.min(call.hangUpMs, call.speech.onsetMs + 2000) : call.hangUpMs;
  return Math.floor(ms / 20);
}

/** A level (dBFS) as a trace column. */
const column = (db: number): string => (Number.isFinite(db) ? db.toFixed(0) : "-inf").padStart(4);

export function runOnsetCall(call: CorpusCall, chain: OnsetChain): OnsetResult {
  const far = answer();
  const response = call.echo.response === "line" ? lineResponse() : roomResponse(call.echo.responseSeed);
  const path = new EchoPath({ delayMs: call.echo.delayMs, lossDb: call.echo.lossDb, response });
  const guard = chain.echo
    ? new EchoGuard((o) => createEchoCanceller({ ...o, frameMs: 20 }), chain.echo, 8000)
    : undefined;
  const gate = new SpeechGate({ threshold: chain.threshold, minSpeechMs: chain.minSpeechMs, silenceMs: 800 });
  const alone = new SpeechGate({
    threshold: chain.threshold,
    minSpeechMs: chain.minSpeechMs,
    silenceMs: 800,
  });
  const voiced = new SpeechGate({ threshold: chain.threshold, minSpeechMs: 10, silenceMs: 800 });
  let voicedMs: number | undefined;
  const startFrame = Math.round(chain.answerStartMs / 20);
  let lagFrames = Math.round(chain.referenceLagMs / 20);
  const drift = rng(call.id, "drift");
  const frames = callFrames(call);
  const onsetMs = call.speech?.onsetMs;
  let detectMs: number | undefined;
  let aloneMs: number | undefined;
  let falseOnsets = 0;
  let firstFalseMs: number | undefined;
  const slice = (k: number): Int16Array => {
    const at = (k - startFrame) * FRAME;
    if (at < 0 || at >= far.length) return new Int16Array(FRAME);
    const out = new Int16Array(FRAME);
    out.set(far.subarray(at, Math.min(far.length, at + FRAME)));
    return out;
  };
  for (let k = 0; k < frames; k++) {
    if (chain.jitterFrames > 0 && k % 50 === 49) {
      const base = Math.round(chain.referenceLagMs / 20);
      const step = Math.floor(drift() * 3) - 1;
      lagFrames = Math.max(base - chain.jitterFrames, Math.min(base + chain.jitterFrames, lagFrames + step));
    }
    path.playedPcm(slice(k));
    const echo = path.next();
    const mic = new Int16Array(FRAME);
    const near = new Int16Array(FRAME);
    for (let i = 0; i < FRAME; i++) {
      const v = call.track[k * FRAME + i] ?? 0;
      near[i] = Math.max(-32768, Math.min(32767, Math.round(v)));
      mic[i] = Math.max(-32768, Math.min(32767, Math.round(echo[i]! + v)));
    }
    const line = decodeMulaw(encodeMulaw(mic));
    const suppressedBefore = guard?.suppressedFrames ?? 0;
    const reference = slice(k - lagFrames);
    const heard = guard ? guard.process(line, reference) : line;
    const endMs = (k + 1) * 20;
    if (
      chain.traceCallId === call.id &&
      onsetMs !== undefined &&
      endMs > onsetMs - 60 &&
      endMs < onsetMs + 1000
    )
      console.log(
        `  ${call.id} t${endMs - onsetMs >= 0 ? "+" : ""}${endMs - onsetMs} ms: caller ${column(dbfs(near))} echo ${column(levelDb(echo))} ` +
          `reference ${column(dbfs(reference))} heard ${column(dbfs(heard))} dBFS` +
          `${guard && guard.suppressedFrames > suppressedBefore ? " (attenuated as residual)" : ""} gate ${gate.speaking ? "speech" : gate.voiced ? "voiced" : "-"}`,
      );
    if (heard.length > 0 && gate.process(heard) === "speech-start") {
      if (onsetMs === undefined || endMs <= onsetMs) {
        falseOnsets++;
        firstFalseMs ??= endMs;
      } else if (detectMs === undefined) detectMs = endMs - onsetMs;
    }
    if (gate.speaking) guard?.callerSpeaking(); // as the media leg tells it
    if (onsetMs !== undefined) {
      const nearLine = decodeMulaw(encodeMulaw(near));
      if (alone.process(nearLine) === "speech-start" && endMs > onsetMs) aloneMs ??= endMs - onsetMs;
      // The sub-frame that confirmed it ended 10 or 20 ms into the frame: counted from the frame's start.
      if (voiced.process(nearLine) === "speech-start" && endMs > onsetMs) voicedMs ??= endMs - 20 - onsetMs;
    }
  }
  const suppressedFrames = guard?.suppressedFrames ?? 0;
  guard?.close();
  gate.close();
  alone.close();
  voiced.close();
  return {
    id: call.id,
    kind: call.kind,
    lossDb: call.echo.lossDb,
    delayMs: call.echo.delayMs,
    response: call.echo.response,
    noise: call.noise ? `${call.noise.kind} ${call.noise.snrDb} dB` : undefined,
    onsetMs,
    detectMs,
    aloneMs,
    voicedMs,
    falseOnsets,
    firstFalseMs,
    suppressedFrames,
  };
}
