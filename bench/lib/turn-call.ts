/**
 * One corpus call through the real leg: the Twilio stand-in dials the
 * server (signed voice webhook, then the media stream), plays what the server
 * sends at 1x (marks echoed as Twilio does), and sends the caller's channel
 * every 20 ms in real time: the answer's echo through the call's echo path
 * plus the call's near-end track. What the caller hears cut (`clear`) and what
 * the server decided (`input.audio.committed`, `turn.cancelled`) are stamped
 * as they arrive, on this process's clock, which is also the clock the frames
 * were sent on.
 *
 * Real time because the server's playout is paced by the stand-in's marks and
 * the echo reference is the audio it played: faster than 1x would change when
 * the answer plays against the caller's audio, the thing measured.
 */
import { EchoPath, lineResponse, roomResponse, speakerphone } from "../../test/support/echo-path.js";
import { activeOnsetMs, type CorpusCall } from "./turn-corpus.js";
import type { NoiseKind } from "./corpus-audio.js";
import type { ServerEvent, TurnServer } from "./turn-server.js";
import type { TwilioStreamClient } from "../../test/support/twilio-stream-client.js";

/** A clear this long after the onset still counts as the interruption's; later, it was missed. */
export const INTERRUPT_WINDOW_MS = 2000;

export interface CallResult {
  id: string;
  kind: CorpusCall["kind"];
  lossDb: number;
  /** The talker-to-echo ratio of a grid call (talker-echo-grid.ts), dB. */
  terDb?: number | undefined;
  noise?: { kind: NoiseKind; snrDb: number } | undefined;
  /** Answer audio the caller heard, ms (the echo-only figure's exposure). */
  heardMs: number;
  /** Clears before the caller said anything (every clear of an echo-only call). */
  falseBargeIns: number;
  /** The answer was already cut by a false barge-in when the caller began. */
  preempted: boolean;
  /** A clear came within INTERRUPT_WINDOW_MS of the caller's onset. */
  interrupted: boolean;
  /**
   * The answer was cancelled after the onset (a clear that the policy follows with a resume, words
   * confirming a barge-in, is a pause of the answer, not a cut).
   */
  cut: boolean;
  /** The answer resumed after the onset (held at the onset, then a backchannel or no words). */
  resumed: boolean;
  /** The answer resumed while the caller was still speaking (before the end of their utterance). */
  resumedOverCaller: boolean;
  /** Answers cancelled on an echo-only call (a clear followed by a resume is not one). */
  answersCut: number;
  /** Onset (the frame carrying the first speech sample sent) -> `clear` received, ms. */
  onsetToClearMs?: number | undefined;
  /** From the first P.56-active 10 ms of the caller's speech (activeOnsetMs) to the clear, ms. */
  activeOnsetToClearMs?: number | undefined;
  /** A turn was committed between the onset and the end of the caller's speech (cut off mid-utterance). */
  premature: boolean;
  /** End of speech (its last frame sent) -> the first commit after it, ms. */
  endToCommitMs?: number | undefined;
  /** End of speech -> the first assistant audio on the caller's line after it (the reply to the turn), ms. */
  voiceToVoiceMs?: number | undefined;
  /** The caller's utterance has a pause inside. */
  paused: boolean;
  turnCancelled: number;
  /** How long the call lasted, ms. */
  callMs: number;
  /** What the caller said (the corpus label) and where, stream ms. */
  speech?: { label: string; onsetMs: number; endMs: number; pausesMs: number[] } | undefined;
  /**
   * The server's events of the call (--details): `at` in ms from the caller's onset (from the call's start
   * when the caller never speaks); a user transcript's `text`, a speech stop's `endpointMs`, a resume's `reason`.
   */
  log: ServerEvent[];
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function runCall(server: TurnServer, call: CorpusCall): Promise<CallResult> {
  const client = await server.dial();
  const events = (type: string): number[] => server.events(client.callSid, type);
  const response = call.echo.response === "line" ? lineResponse() : roomResponse(call.echo.responseSeed);
  const path = new EchoPath({ delayMs: call.echo.delayMs, lossDb: call.echo.lossDb, response });
  const line = speakerphone(client, path, { track: call.track });
  const started = performance.now();
  const answerEnded = (): boolean =>
    events("output.audio.done").length + events("output.audio.cancelled").length > 0;
  let endedAt: number | undefined;
  for (;;) {
    const now = performance.now();
    if (now - started >= call.hangUpMs || client.closeCode !== undefined) break;
    // Echo-only: the call is over once the answer ended (played or cut) and its last audio reached the line.
    if (call.speech === undefined && answerEnded()) {
      endedAt ??= now;
      if (now - endedAt > 1000) break;
    }
    await sleep(50);
  }
  await line.stop();
  await client.stop();
  const callMs = performance.now() - started;
  const heardMs = client.played.reduce((n, a) => n + a.byteLength, 0) / 8;
  const at = (ms: number): number => line.sentAt[Math.min(line.sentAt.length - 1, Math.floor(ms / 20))]!;
  const clears = client.clearedAt;
  // The end of the caller's turn: the local stack commits its audio (input.audio.committed, with the turn's
  // turn.ended); on the realtime relay the provider takes the audio, so the turn's end is its turn.ended alone.
  const committed = events("input.audio.committed");
  const commits = committed.length > 0 ? committed : events("turn.ended");
  const cancels = events("output.audio.cancelled");
  const resumes = events("output.audio.resumed");
  const zero = call.speech ? at(call.speech.onsetMs) : started;
  const log = server
    .log(client.callSid)
    .filter((e) => e.type !== "output.audio.done" || call.speech === undefined)
    .map((e) => ({ ...e, at: Math.round(e.at - zero) }));
  const base = {
    id: call.id,
    speech: call.speech,
    log,
    kind: call.kind,
    lossDb: call.echo.lossDb,
    ...(call.terDb !== undefined ? { terDb: call.terDb } : {}),
    noise: call.noise,
    heardMs,
    turnCancelled: events("turn.cancelled").length,
    paused: (call.speech?.pausesMs.length ?? 0) > 0,
    callMs,
  };
  if (!call.speech)
    return {
      ...base,
      falseBargeIns: clears.length,
      answersCut: cancels.length,
      preempted: false,
      interrupted: false,
      cut: false,
      resumed: false,
      resumedOverCaller: false,
      premature: false,
    };
  const onset = at(call.speech.onsetMs);
  const end = at(call.speech.endMs);
  const before = clears.filter((t) => t < onset).length;
  const clear = clears.find((t) => t >= onset && t - onset <= INTERRUPT_WINDOW_MS);
  const commitsAfterOnset = commits.filter((t) => t >= onset);
  const commit = commitsAfterOnset.find((t) => t >= end);
  return {
    ...base,
    falseBargeIns: before,
    preempted: before > 0,
    interrupted: clear !== undefined,
    cut: cancels.some((t) => t >= onset),
    resumed: resumes.some((t) => t >= onset),
    resumedOverCaller: resumes.some((t) => t >= onset && t < end),
    answersCut: cancels.filter((t) => t < onset).length,
    onsetToClearMs: clear !== undefined ? clear - onset : undefined,
    activeOnsetToClearMs:
      clear !== undefined ? clear - at(activeOnsetMs(call) ?? call.speech.onsetMs) : undefined,
    premature: commitsAfterOnset.some((t) => t < end),
    endToCommitMs: commit !== undefined ? commit - end : undefined,
    voiceToVoiceMs: firstAudibleAfter(client, end),
  };
}

/** u-law's two codes for silence (+0 and -0). */
const ULAW_SILENCE = new Set([0xff, 0x7f]);

/**
 * The first assistant audio the caller's loudspeaker gave out at or after `at` (performance.now() ms), minus
 * `at`: the line's record (realtime playback) from its clock's start, u-law silence where nothing played.
 */
function firstAudibleAfter(client: TwilioStreamClient, at: number): number | undefined {
  let bytes = 0;
  for (const chunk of client.line) {
    const startMs = client.lineStartedAt + bytes / 8;
    bytes += chunk.length;
    if (client.lineStartedAt + bytes / 8 < at) continue;
    for (let i = Math.max(0, Math.ceil((at - startMs) * 8)); i < chunk.length; i++)
      if (!ULAW_SILENCE.has(chunk[i]!)) return startMs + i / 8 - at;
  }
  return undefined;
}

/**
 * Calls are dialled at least this far apart at the start: as calls arrive on a line, not all at the same
 * instant (six answers synthesized at once on this 2-core box delayed every greeting and gave the
 * canceller's cold start false barge-ins at any echo return loss, a load pattern no carrier produces).
 */
export const STAGGER_MS = 1500;

/** Runs `calls` through `server`, `concurrency` at a time; results in corpus order. */
export async function runCalls(
  server: TurnServer,
  calls: readonly CorpusCall[],
  concurrency: number,
  progress?: (done: number) => void,
): Promise<CallResult[]> {
  const results: CallResult[] = new Array<CallResult>(calls.length);
  let next = 0;
  let done = 0;
  const worker = async (w: number): Promise<void> => {
    await sleep(w * STAGGER_MS);
    for (let i = next++; i < calls.length; i = next++) {
      results[i] = await runCall(server, calls[i]!);
      progress?.(++done);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, calls.length) }, (_, w) => worker(w)));
  return results;
}
