/**
 * The turn-taking corpus through the leg's input chain offline (issue 15):
 * media/echo-guard.ts over the speexdsp canceller, then the speech gate, the
 * classes the leg builds, fed each call's caller channel as the bench's
 * speakerphone makes it (the answer's echo through the call's echo path plus
 * its near-end track, u-law) with the answer as played as the reference,
 * faster than real time. Per call: when the gate confirms the caller's
 * speech after its known onset, and onsets before it (false barge-ins).
 *
 * The chain's classes come from a checkout (`loadChain`): this one, or a
 * baseline's (baseline-checkout.ts), so today's code and a change run on the
 * same frames in the same process, call after call (issue 40).
 *
 * What it leaves out, the real-time bench's part (turn-taking.bench.ts): the
 * policy, the playout's `clear` and the wire, and a live line's alignment of
 * the reference (here the reference is exact, or shifted by `referenceLagMs`).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { decodeMulaw, encodeMulaw } from "../../src/codecs/mulaw.js";
import { dbfs } from "../../src/codecs/pcm.js";
import type * as CancellerModule from "../../src/codecs/echo-canceller.js";
import type * as GuardModule from "../../src/voice/media/echo-guard.js";
import type * as GateModule from "../../src/voice/media/speech-gate.js";
import type { WordsDecode, WordsProbe } from "./words-probe.js";
import { SpeechGate } from "../../src/voice/media/speech-gate.js";
import { EchoPath, lineResponse, roomResponse } from "../../test/support/echo-path.js";
import { espeak, levelDb, rng } from "./corpus-audio.js";
import { activeOnsetMs, ANSWER, type CorpusCall } from "./turn-corpus.js";

const FRAME = 160;

export interface OnsetChain {
  /** talk.input.echoCancellation as configured (undefined: no echo cancellation, the gate hears the line as it comes). */
  echo: Record<string, unknown> | undefined;
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
  /**
   * Print this call's frames from just before its onset to a second after (levels, the guard's verdict, the
   * gate); "id@ms": from 600 ms before that stream time instead (an echo-only call's false onset).
   */
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

/** The input chain's classes from one checkout. */
export interface ChainModules {
  /** What the rows call it ("change", "baseline"). */
  name: string;
  /** talk.input.echoCancellation for this chain, over the run's (OnsetChain.echo); ignored without it. */
  echo?: Record<string, unknown> | undefined;
  /** The leg's EchoGuard, or a peer's canceller in its place (webrtc-aec-peer.ts). */
  EchoGuard: new (
    create: GuardModule.EchoCancellerFactory,
    options: GuardModule.ResolvedEchoCancellation,
    sampleRate: number,
    words?: GuardModule.WordsProbePort,
  ) => ChainGuard;
  resolveEchoCancellation: typeof GuardModule.resolveEchoCancellation;
  SpeechGate: typeof GateModule.SpeechGate;
  createEchoCanceller: typeof CancellerModule.createEchoCanceller;
  /** A words probe for each call's guard (this checkout's only: --words), told of each decode. */
  wordsProbe?: ((onDecode: (decode: WordsDecode) => void) => WordsProbe) | undefined;
}

/** What a chain's guard does for runChain: the leg's EchoGuard has this shape, a peer's canceller too. */
export interface ChainGuard {
  /** The caller channel's frame and the reference played over it; what the gate hears. */
  process(mic: Int16Array, reference: Int16Array | undefined): Int16Array;
  /** Frames held as residual echo, and let through as double talk (0 for a guard that holds none). */
  readonly suppressedFrames: number;
  readonly doubleTalkFrames: number;
  /** The gate hears the caller (as the media leg tells it). */
  callerSpeaking(): void;
  /** The echo return and delay as measured so far (--trace prints them; a peer's guard may not tell). */
  stats?(): { echoReturnLossDb?: number; delayMs?: number };
  close(): void;
}

/** The chain's modules from the checkout at `root` (default: this one). */
export async function loadChain(
  name: string,
  root = resolve(import.meta.dirname, "..", ".."),
): Promise<ChainModules> {
  const load = async <T>(path: string): Promise<T> =>
    (await import(pathToFileURL(join(root, path)).href)) as T;
  // The media leg's classes live in the voice engine's folder, or in core's before it had one.
  const media = ["src/voice/media", "src/core/media"].find((dir) =>
    existsSync(join(root, dir, "echo-guard.ts")),
  );
  if (!media) throw new Error(`${root}: no echo-guard.ts in src/voice/media or src/core/media`);
  const guard = await load<typeof GuardModule>(`${media}/echo-guard.ts`);
  const gate = await load<typeof GateModule>(`${media}/speech-gate.ts`);
  const canceller = await load<typeof CancellerModule>("src/codecs/echo-canceller.ts");
  return {
    name,
    EchoGuard: guard.EchoGuard,
    resolveEchoCancellation: guard.resolveEchoCancellation,
    SpeechGate: gate.SpeechGate,
    createEchoCanceller: canceller.createEchoCanceller,
  };
}

/** What one chain did on one call. */
export interface ChainResult {
  /** The gate's first speech-start at or after the onset minus the onset (the frame it came in ends at it), ms. */
  detectMs?: number | undefined;
  /** ...minus the P.56-active onset instead, ms. */
  activeDetectMs?: number | undefined;
  /** Speech-starts before the onset (all of them on an echo-only call): barge-ins on echo. */
  falseOnsets: number;
  /** Stream ms of the first false onset. */
  firstFalseMs?: number | undefined;
  /** Frames the guard attenuated as residual echo. */
  suppressedFrames: number;
  /** Frames under the guard's bar let through as double talk. */
  doubleTalkFrames: number;
  /** The words probe's decodes (--words). */
  decodes: number;
  /** CPU of the guard and the gate over the call, microseconds, and the frames they took. */
  cpuUs: number;
  frames: number;
}

export interface OnsetResult {
  id: string;
  kind: CorpusCall["kind"];
  lossDb: number;
  terDb?: number | undefined;
  delayMs: number;
  response: string;
  noise?: string | undefined;
  /** The caller's onset (stream ms), when the call has speech. */
  onsetMs?: number | undefined;
  /** The first P.56-active 10 ms of the caller's speech, stream ms. */
  activeOnsetMs?: number | undefined;
  /** The same gate on the caller's near-end track alone (no echo, no guard): what the gate itself takes, ms. */
  aloneMs?: number | undefined;
  /** The first 10 ms the gate hears as speech on the track alone (after the corpus onset's soft lead-in), minus the onset, ms. */
  voicedMs?: number | undefined;
  /** A noise-step call: the gate's speech-starts on its near-end track alone (the noise without the answer). */
  aloneFalseOnsets?: number | undefined;
  /** Answer audio the chain heard echo of, minutes (the answer plays to its end offline: a false onset cuts nothing). */
  answerMinutes: number;
  /** When the answer started, stream ms. */
  answerStartMs: number;
  /** Per chain, by its name. */
  chains: Record<string, ChainResult>;
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

/** The guard's echo return and delay as measured so far, as the trace's last column ("-": not yet). */
function traceMeasured(guard: ChainGuard | undefined): string {
  const stats = guard?.stats?.();
  return stats ? ` | return ${stats.echoReturnLossDb ?? "-"} dB, delay ${stats.delayMs ?? "-"} ms` : "";
}

/** A level (dBFS) as a trace column. */
const column = (db: number): string => (Number.isFinite(db) ? db.toFixed(0) : "-inf").padStart(4);

/** The caller channel as the line carries it, the reference as the leg's mirror gives it, the near end alone. */
interface CallFrames {
  line: Int16Array[];
  reference: Int16Array[];
  near: Int16Array[];
  echo: Float64Array[];
}

function callAudio(call: CorpusCall, chain: OnsetChain): CallFrames {
  const far = answer();
  const response = call.echo.response === "line" ? lineResponse() : roomResponse(call.echo.responseSeed);
  const path = new EchoPath({ delayMs: call.echo.delayMs, lossDb: call.echo.lossDb, response });
  const startFrame = Math.round(chain.answerStartMs / 20);
  let lagFrames = Math.round(chain.referenceLagMs / 20);
  const drift = rng(call.id, "drift");
  const slice = (k: number): Int16Array => {
    const out = new Int16Array(FRAME);
    const at = (k - startFrame) * FRAME;
    if (at < 0 || at >= far.length) return out;
    out.set(far.subarray(at, Math.min(far.length, at + FRAME)));
    return out;
  };
  const frames = callFrames(call);
  const out: CallFrames = { line: [], reference: [], near: [], echo: [] };
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
    out.line.push(decodeMulaw(encodeMulaw(mic)));
    out.reference.push(slice(k - lagFrames));
    out.near.push(near);
    out.echo.push(echo);
  }
  return out;
}

/** The gate on the caller's track alone (no echo), as the chain's gate is set but for `minSpeechMs`: the figures' reference. */
function aloneGate(chain: OnsetChain, minSpeechMs: number): SpeechGate {
  return new SpeechGate({ threshold: chain.threshold, minSpeechMs, silenceMs: 800 });
}

/** Runs `call` through every chain of `chains` (in turn, on the same frames). */
export async function runOnsetCall(
  call: CorpusCall,
  chain: OnsetChain,
  chains: readonly ChainModules[],
  wordsLog?: (line: string) => void,
): Promise<OnsetResult> {
  const audio = callAudio(call, chain);
  const onsetMs = call.speech?.onsetMs;
  const active = activeOnsetMs(call);
  let aloneMs: number | undefined;
  let voicedMs: number | undefined;
  if (onsetMs !== undefined) {
    const alone = aloneGate(chain, chain.minSpeechMs);
    const voiced = aloneGate(chain, 10);
    for (let k = 0; k < audio.near.length; k++) {
      const endMs = (k + 1) * 20;
      const nearLine = decodeMulaw(encodeMulaw(audio.near[k]!));
      if (alone.process(nearLine) === "speech-start" && endMs > onsetMs) aloneMs ??= endMs - onsetMs;
      // The sub-frame that confirmed it ended 10 or 20 ms into the frame: counted from the frame's start.
      if (voiced.process(nearLine) === "speech-start" && endMs > onsetMs) voicedMs ??= endMs - 20 - onsetMs;
    }
    alone.close();
    voiced.close();
  }
  let aloneFalseOnsets: number | undefined;
  if (call.noiseStartMs !== undefined) {
    const gate = aloneGate(chain, chain.minSpeechMs);
    aloneFalseOnsets = 0;
    for (const frame of audio.near)
      if (gate.process(decodeMulaw(encodeMulaw(frame))) === "speech-start") aloneFalseOnsets++;
    gate.close();
  }
  const answerFrames = Math.ceil(answer().length / FRAME);
  const startFrame = Math.round(chain.answerStartMs / 20);
  const heardFrames = Math.max(0, Math.min(answerFrames, audio.line.length - startFrame));
  const results: Record<string, ChainResult> = {};
  for (const modules of chains)
    results[modules.name] = await runChain(call, chain, modules, audio, active, wordsLog);
  return {
    id: call.id,
    kind: call.kind,
    lossDb: call.echo.lossDb,
    terDb: call.terDb,
    delayMs: call.echo.delayMs,
    response: call.echo.response,
    noise: call.noise ? `${call.noise.kind} ${call.noise.snrDb} dB` : undefined,
    onsetMs,
    activeOnsetMs: active,
    aloneMs,
    voicedMs,
    aloneFalseOnsets,
    answerMinutes: (heardFrames * 20) / 60_000,
    answerStartMs: chain.answerStartMs,
    chains: results,
  };
}

async function runChain(
  call: CorpusCall,
  chain: OnsetChain,
  m: ChainModules,
  audio: CallFrames,
  activeOnset: number | undefined,
  wordsLog?: (line: string) => void,
): Promise<ChainResult> {
  const echo = chain.echo ? m.resolveEchoCancellation({ ...chain.echo, ...m.echo }) : undefined;
  const at = (frame: number): string => {
    const ms = frame * 20 - (call.speech?.onsetMs ?? 0);
    return call.speech ? `onset${ms >= 0 ? "+" : ""}${ms} ms` : `${ms} ms`;
  };
  const probe = m.wordsProbe?.((d) =>
    wordsLog?.(
      `  words ${call.id} ${at(d.frame)}: ${d.verdict.padEnd(6)} ${d.distance.toFixed(2)} ${JSON.stringify(d.text)}`,
    ),
  );
  const guard = echo
    ? new m.EchoGuard((o) => m.createEchoCanceller({ ...o, frameMs: 20 }), echo, 8000, probe)
    : undefined;
  const gate = new m.SpeechGate({
    threshold: chain.threshold,
    minSpeechMs: chain.minSpeechMs,
    silenceMs: 800,
  });
  const onsetMs = call.speech?.onsetMs;
  const result: ChainResult = {
    falseOnsets: 0,
    suppressedFrames: 0,
    doubleTalkFrames: 0,
    decodes: 0,
    cpuUs: 0,
    frames: 0,
  };
  const [traceId, traceAt] = (chain.traceCallId ?? "").split("@");
  const traceMs = traceAt !== undefined ? Number(traceAt) : onsetMs;
  const trace = traceId === call.id && traceMs !== undefined;
  const started = process.cpuUsage();
  for (let k = 0; k < audio.line.length; k++) {
    const suppressedBefore = guard?.suppressedFrames ?? 0;
    const doubleTalkBefore = guard?.doubleTalkFrames ?? 0;
    const heard = guard ? guard.process(audio.line[k]!, audio.reference[k]) : audio.line[k]!;
    // Offline the stream waits for a decode (its verdict counts from the modelled latency on).
    if (probe) await probe.settle();
    const endMs = (k + 1) * 20;
    if (trace && endMs > traceMs - (traceAt !== undefined ? 600 : 60) && endMs < traceMs + 1000)
      console.log(
        `  ${m.name} ${call.id} t${endMs - traceMs >= 0 ? "+" : ""}${endMs - traceMs} ms: caller ${column(dbfs(audio.near[k]!))} echo ${column(levelDb(audio.echo[k]!))} ` +
          `reference ${column(dbfs(audio.reference[k]!))} heard ${column(dbfs(heard))} dBFS` +
          `${guard && guard.suppressedFrames > suppressedBefore ? " (attenuated as residual)" : ""}` +
          `${guard && guard.doubleTalkFrames > doubleTalkBefore ? " (double talk)" : ""} gate ${gate.speaking ? "speech" : gate.voiced ? "voiced" : "-"}` +
          traceMeasured(guard),
      );
    if (heard.length > 0 && gate.process(heard) === "speech-start") {
      if (onsetMs === undefined || endMs <= onsetMs) {
        result.falseOnsets++;
        result.firstFalseMs ??= endMs;
      } else if (result.detectMs === undefined) {
        result.detectMs = endMs - onsetMs;
        if (activeOnset !== undefined) result.activeDetectMs = endMs - activeOnset;
      }
    }
    if (gate.speaking) guard?.callerSpeaking(); // as the media leg tells it
  }
  const used = process.cpuUsage(started);
  result.cpuUs = used.user + used.system;
  result.frames = audio.line.length;
  result.suppressedFrames = guard?.suppressedFrames ?? 0;
  result.doubleTalkFrames = guard?.doubleTalkFrames ?? 0;
  result.decodes = probe?.decodes ?? 0;
  guard?.close();
  gate.close();
  return result;
}
