/**
 * The end-of-turn rule replayed offline on the turn-taking corpus (issue 15)
 * or on issue 40's talker-to-echo grid (--grid): each interruption call's
 * caller channel goes through the echo guard, the speech gate and the
 * endpoint as a media leg runs them (voice/media/media-leg.ts, local-turns.ts),
 * with the recognizer's words at the times a real run heard them
 * (turn-taking.bench.ts --details). The caller channel is the call's near-end
 * track plus the answer's echo through the call's echo path, the answer
 * playing from `ANSWER_START_MS` until the run cut it (its
 * output.audio.cancelled after the onset; on to its end when the run never
 * cut it), both through u-law; --no-echo: the near-end track alone (the rule
 * as the gate hears a quiet line). The first turn starts where the run's gate
 * started it (--onset run, the default: the onset is no end-of-turn rule's,
 * and a live line's double talk holds it back more than this replay's exact
 * reference does); --onset gate: where this replay's gate hears it. A call the
 * run's leg never heard (no speech start) has no turn. It answers "what would
 * this rule have done on those calls" in seconds, to compare rules before a
 * real-time run confirms one. Not the figure of record: no server or wire
 * (speech end -> commit here is audio time, the real bench's adds the event's
 * trip), the words of the run replayed rather than recognized (a rule that
 * commits where the run did not still hears that run's later words, in the
 * turn it is in), no reply played after a commit.
 *
 *   node --import tsx bench/turn-endpoint-replay.ts --details out.json [--config adaptive-eot] [--seed 1 --minutes 2]
 *     [--grid --per-cell 8 --erls 6,20 --ters=-10,-3,3,10 --echo-minutes 2]
 *     [--rule '{"mode":"adaptive","minMs":300,"maxMs":1500}' ...] [--no-voice-restart] [--no-echo] [--onset run|gate]
 *     [--calls]
 *
 * A --rule is talk.input.endOfTurn plus variants tried offline (RuleVariant): "punctuation" ("keep",
 * "ignore", or N ms the running text must stay unchanged for its final punctuation to count) and
 * "silenceMs" (talk.input.silenceTimeoutMs, default 800). --no-voice-restart: the endpoint's silence is
 * not restarted by voice the gate has not confirmed (the rule before that fix); --calls: every call's
 * outcome.
 *
 * --seed / --minutes (or --grid and its --per-cell / --erls / --ters / --echo-minutes) must be the ones of
 * the run that wrote --details (the corpus is rebuilt from them; a call of the run not in it is an error).
 */
import { readFileSync } from "node:fs";
import { benchParseArgs } from "./lib/bench-cli.js";
import { createEchoCanceller, echoCancellerAvailable } from "../src/codecs/echo-canceller.js";
import { decodeMulaw, encodeMulaw } from "../src/codecs/mulaw.js";
import { EchoGuard, resolveEchoCancellation } from "../src/voice/media/echo-guard.js";
import { SpeechGate } from "../src/voice/media/speech-gate.js";
import { TurnEndpoint } from "../src/voice/media/turn-endpoint.js";
import { resolveEndOfTurn, type EndOfTurnOptions } from "../src/voice/speech/end-of-turn.js";
import { EchoPath, lineResponse, roomResponse } from "../test/support/echo-path.js";
import { espeak } from "./lib/corpus-audio.js";
import { buildGrid, GRID_ERLS_DB, GRID_TERS_DB } from "./lib/talker-echo-grid.js";
import type { CallResult } from "./lib/turn-call.js";
import { ANSWER, buildCorpus, type CorpusCall } from "./lib/turn-corpus.js";
import { percentile } from "./lib/turn-figures.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    details: { type: "string" },
    config: { type: "string", default: "adaptive-eot" },
    seed: { type: "string", default: "1" },
    minutes: { type: "string", default: "2" },
    grid: { type: "boolean", default: false },
    "per-cell": { type: "string", default: "2" },
    "echo-minutes": { type: "string", default: "2" },
    erls: { type: "string" },
    ters: { type: "string" },
    rule: { type: "string", multiple: true },
    "no-voice-restart": { type: "boolean", default: false },
    "no-echo": { type: "boolean", default: false },
    onset: { type: "string", default: "run" },
    calls: { type: "boolean", default: false },
  },
  strict: true,
});
if (!values.details)
  throw new Error("--details FILE (written by turn-taking.bench.ts --details) is required");
const details = JSON.parse(readFileSync(values.details, "utf8")) as Record<string, CallResult[]>;
const runs = details[values.config];
if (!runs) throw new Error(`--config: ${values.config} not in ${Object.keys(details).join(", ")}`);
const dbList = (v: string | undefined, all: readonly number[]): number[] =>
  v === undefined ? [...all] : v.split(",").map(Number);
const built = values.grid
  ? buildGrid({
      seed: Number(values.seed),
      perCell: Number(values["per-cell"]),
      echoMinutes: Number(values["echo-minutes"]),
      erls: dbList(values.erls, GRID_ERLS_DB),
      ters: dbList(values.ters, GRID_TERS_DB),
    })
  : buildCorpus({ seed: Number(values.seed), minutes: Number(values.minutes) });
const corpus = new Map(built.map((c) => [c.id, c]));
/**
 * A rule to replay: talk.input.endOfTurn, and variants the rule does not have (yet), tried offline:
 * `punctuation` "keep" (the rule reads the recognizer's running text as it is), "ignore" (its final
 * punctuation removed: no sentence_end endpoint), or N (kept once the running text has not changed for
 * N ms of audio, removed before); `silenceMs`, talk.input.silenceTimeoutMs (the fixed endpoint, and the
 * words rule's midpoint with minMs). Default "keep", 800.
 */
type RuleVariant = EndOfTurnOptions & { punctuation?: "keep" | "ignore" | number; silenceMs?: number };
const rules: RuleVariant[] = (values.rule ?? []).map((r) => JSON.parse(r) as RuleVariant);
if (rules.length === 0) rules.push({ mode: "fixed" }, { mode: "adaptive" });
const withEcho = !values["no-echo"];
if (values.onset !== "run" && values.onset !== "gate") throw new Error(`--onset must be "run" or "gate"`);
const anchored = values.onset === "run";
if (withEcho && !echoCancellerAvailable())
  throw new Error("the speexdsp canceller is not built here (native/speexdsp): run with --no-echo");

/** talk.input's telephony gate defaults (telephony-schema.ts): -45 dBFS for 120 ms. */
const GATE = { threshold: -45, minSpeechMs: 120 };
const SILENCE_MS = 800;
/** The replay's turns start this long before the caller's onset (the gate learns the line's floor). */
const LEAD_MS = 1500;
/** When the answer starts on the line after the call connects, ms (as bench/lib/onset-latency.ts). */
const ANSWER_START_MS = 400;
const FRAME = 160;

interface Replayed {
  id: string;
  paused: boolean;
  premature: boolean;
  endToCommitMs: number | undefined;
}

let answerPcm: Int16Array | undefined;
/** The answer as the server sends it (espeak-ng, u-law on the wire), 8 kHz PCM. */
function answer(): Int16Array {
  answerPcm ??= decodeMulaw(encodeMulaw(Int16Array.from(espeak(ANSWER), (v) => Math.round(v))));
  return answerPcm;
}

const clip = (v: number): number => Math.max(-32768, Math.min(32767, Math.round(v)));

/** The caller channel as the line carried it and the answer as played (the guard's reference), per 20 ms. */
function lineFrames(call: CorpusCall, run: CallResult): { line: Int16Array[]; reference: Int16Array[] } {
  const speech = call.speech!;
  const frames = Math.floor(call.hangUpMs / 20);
  const line: Int16Array[] = [];
  const reference: Int16Array[] = [];
  if (!withEcho) {
    for (let k = 0; k < frames; k++)
      line.push(
        decodeMulaw(encodeMulaw(Int16Array.from(call.track.subarray(k * FRAME, (k + 1) * FRAME), clip))),
      );
    return { line, reference };
  }
  const cut = run.log.find((e) => e.type === "output.audio.cancelled" && e.at >= 0);
  const cutMs = cut ? speech.onsetMs + cut.at : Infinity;
  const far = answer();
  const response = call.echo.response === "line" ? lineResponse() : roomResponse(call.echo.responseSeed);
  const path = new EchoPath({ delayMs: call.echo.delayMs, lossDb: call.echo.lossDb, response });
  for (let k = 0; k < frames; k++) {
    const played = new Int16Array(FRAME);
    const at = k * FRAME - (ANSWER_START_MS / 1000) * 8000;
    if (at >= 0 && at < far.length && k * 20 < cutMs)
      played.set(far.subarray(at, Math.min(far.length, at + FRAME)));
    path.playedPcm(played);
    const echo = path.next();
    const mic = new Int16Array(FRAME);
    for (let i = 0; i < FRAME; i++) mic[i] = clip(echo[i]! + (call.track[k * FRAME + i] ?? 0));
    line.push(decodeMulaw(encodeMulaw(mic)));
    reference.push(played);
  }
  return { line, reference };
}

function replay(
  call: CorpusCall,
  run: CallResult,
  audio: { line: Int16Array[]; reference: Int16Array[] },
  variant: RuleVariant,
): Replayed {
  const speech = call.speech!;
  const { punctuation = "keep", silenceMs = SILENCE_MS, ...options } = variant;
  const rule = resolveEndOfTurn(options, silenceMs);
  const endpoint = new TurnEndpoint(rule);
  const gate = new SpeechGate({ ...GATE, silenceMs: endpoint.gateSilenceMs, sampleRate: 8000 });
  const guard = withEcho
    ? new EchoGuard(
        (o) => createEchoCanceller({ ...o, frameMs: 20 }),
        resolveEchoCancellation({ enabled: true }),
        8000,
      )
    : undefined;
  // The words as the run heard them: each running-text change at its time from the onset.
  const words = run.log.filter((e) => e.type === "transcript.delta" && e.text);
  const commits: number[] = [];
  // The run's first speech start after the onset: none, the leg never heard the caller, no turn at all.
  const anchor = anchored
    ? (run.log.find((e) => e.type === "input.audio.speech_started" && e.at >= 0)?.at ?? Infinity)
    : undefined;
  let turn = 0;
  let capturing = false;
  let heard = 0;
  /** The turn's running text as the recognizer gave it, and when it last changed (ms from the onset). */
  let running = "";
  let changedAtMs = 0;
  const begin = (nowMs: number): void => {
    capturing = true;
    running = "";
    changedAtMs = nowMs;
    endpoint.begin(`t${++turn}`);
  };
  /** What the rule reads (a variant's --rule "punctuation"): the text, or without its final punctuation. */
  const view = (text: string, unchangedMs: number): string =>
    punctuation === "keep" || (typeof punctuation === "number" && unchangedMs >= punctuation)
      ? text
      : text.replace(/[.?!]["')\]]*\s*$/, "");
  const first = Math.max(0, Math.floor((speech.onsetMs - LEAD_MS) / 20));
  // The guard learns the echo from the call's start; the gate and the turns from LEAD_MS before the onset.
  for (let k = withEcho ? 0 : first; k < audio.line.length; k++) {
    const nowMs = (k + 1) * 20 - speech.onsetMs; // ms from the onset, at this frame's end
    const pcm = guard ? guard.process(audio.line[k]!, audio.reference[k]) : audio.line[k]!;
    if (k < first || pcm.length === 0) continue;
    const event = gate.process(pcm);
    while (heard < words.length && words[heard]!.at <= nowMs) {
      const w = words[heard]!;
      // A delta extends the running text, or (replace) is all of it; older details files lack `replace`.
      if (capturing) {
        running = w.replace ? w.text! : running + w.text!;
        changedAtMs = nowMs;
      }
      heard++;
    }
    if (capturing) endpoint.transcriptDelta(`t${turn}`, view(running, nowMs - changedAtMs), true);
    if (gate.speaking) guard?.callerSpeaking(); // as the media leg tells it
    // The first turn starts where the run's gate started it (--onset run): no end-of-turn rule moves it.
    if (anchor !== undefined && turn === 0) {
      if (nowMs < anchor) continue;
      begin(nowMs);
      if (gate.speaking || event === "speech-start") continue;
    }
    if (event === "speech-start") {
      if (capturing) endpoint.speechResumed();
      else begin(nowMs);
      continue;
    }
    if (!capturing) continue;
    const voiced = gate.voiced && !values["no-voice-restart"];
    if (endpoint.frame(event, { speaking: gate.speaking, voiced }, 20)) {
      capturing = false;
      commits.push(nowMs);
    }
  }
  gate.close();
  guard?.close();
  const endMs = speech.endMs - speech.onsetMs;
  const after = commits.find((t) => t >= endMs);
  return {
    id: run.id,
    paused: speech.pausesMs.length > 0,
    premature: commits.some((t) => t >= 0 && t < endMs),
    endToCommitMs: after !== undefined ? after - endMs : undefined,
  };
}

const spoken = runs.filter(
  (r) => (r.kind === "interruption" || r.kind === "noisy-interruption") && !r.preempted && r.speech,
);
const callOf = (r: CallResult): CorpusCall => {
  const call = corpus.get(r.id.replace(/#\d+$/, ""));
  if (!call?.speech)
    throw new Error(
      `call ${r.id} of ${values.details} is not in this corpus: --seed / --grid options differ`,
    );
  return call;
};
const audio = new Map(spoken.map((r) => [r.id, lineFrames(callOf(r), r)]));
const ratio = (n: number, of: number): string => `${n} / ${of}`;
console.log(
  `replaying ${spoken.length} calls of "${values.config}" (${values.details}), seed ${values.seed}, ${values.grid ? "grid" : `${values.minutes} min corpus`}, ${withEcho ? "the answer's echo through the echo guard until the run cut it" : "no echo"}${values["no-voice-restart"] ? ", voice does not restart the silence" : ""}`,
);
const recorded = spoken.flatMap((r) =>
  !r.premature && r.endToCommitMs !== undefined ? [r.endToCommitMs] : [],
);
console.log(
  `the run itself (real time): speech end -> commit p50 / p95 ${Math.round(percentile(recorded, 0.5))} / ${Math.round(percentile(recorded, 0.95))} ms (${recorded.length} turns), premature ${ratio(spoken.filter((r) => r.premature).length, spoken.length)}; with a pause inside: ${ratio(spoken.filter((r) => r.premature && r.paused).length, spoken.filter((r) => r.paused).length)}`,
);
console.log(
  "| rule | speech end -> commit p50 / p95, ms | premature | with a pause inside | premature calls |",
);
console.log("|---|---|---|---|---|");
for (const options of rules) {
  const out = spoken.map((r) => replay(callOf(r), r, audio.get(r.id)!, options));
  const ok = out.flatMap((o) => (!o.premature && o.endToCommitMs !== undefined ? [o.endToCommitMs] : []));
  const premature = out.filter((o) => o.premature);
  if (values.calls)
    for (const o of out)
      console.log(
        `  ${o.id} ${o.premature ? "premature" : ""} ${o.endToCommitMs === undefined ? "-" : Math.round(o.endToCommitMs)}`,
      );
  console.log(
    `| ${JSON.stringify(options)} | ${Math.round(percentile(ok, 0.5))} / ${Math.round(percentile(ok, 0.95))} (${ok.length} turns) | ${ratio(premature.length, out.length)} | ${ratio(premature.filter((o) => o.paused).length, out.filter((o) => o.paused).length)} | ${premature.map((o) => o.id).join(", ")} |`,
  );
}
