/**
 * The end-of-turn rule replayed offline on the turn-taking corpus (issue 15):
 * each interruption call's near-end track (the caller's speech, noise and
 * hiss, through u-law) goes through the speech gate and the endpoint as a
 * media leg runs them (voice/media/local-turns.ts), with the recognizer's
 * words at the times a real run heard them (turn-taking.bench.ts --details).
 * It answers "what would this rule have done on those calls" in seconds, to
 * compare rules before a real-time run confirms one. Not the figure of record:
 * no echo, no server, the words of the run replayed rather than recognized.
 *
 *   node --import tsx bench/turn-endpoint-replay.ts --details out.json [--config adaptive-eot] [--seed 1 --minutes 2]
 *     [--rule '{"mode":"adaptive","minMs":300,"maxMs":1500}' ...] [--no-voice-restart] [--calls]
 *
 * --no-voice-restart: the endpoint's silence is not restarted by voice the gate has not confirmed (the
 * rule before that fix); --calls: every call's outcome.
 *
 * --seed / --minutes must be the ones of the run that wrote --details (the corpus is rebuilt from them).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { decodeMulaw, encodeMulaw } from "../src/codecs/mulaw.js";
import { SpeechGate } from "../src/voice/media/speech-gate.js";
import { TurnEndpoint } from "../src/voice/media/turn-endpoint.js";
import { resolveEndOfTurn, type EndOfTurnOptions } from "../src/voice/speech/end-of-turn.js";
import type { CallResult } from "./lib/turn-call.js";
import { buildCorpus, type CorpusCall } from "./lib/turn-corpus.js";
import { percentile } from "./lib/turn-figures.js";

const { values } = parseArgs({
  options: {
    details: { type: "string" },
    config: { type: "string", default: "adaptive-eot" },
    seed: { type: "string", default: "1" },
    minutes: { type: "string", default: "2" },
    rule: { type: "string", multiple: true },
    "no-voice-restart": { type: "boolean", default: false },
    calls: { type: "boolean", default: false },
  },
  strict: true,
});
if (!values.details)
  throw new Error("--details FILE (written by turn-taking.bench.ts --details) is required");
const details = JSON.parse(readFileSync(values.details, "utf8")) as Record<string, CallResult[]>;
const runs = details[values.config];
if (!runs) throw new Error(`--config: ${values.config} not in ${Object.keys(details).join(", ")}`);
const corpus = new Map(
  buildCorpus({ seed: Number(values.seed), minutes: Number(values.minutes) }).map((c) => [c.id, c]),
);
const rules: EndOfTurnOptions[] = (values.rule ?? []).map((r) => JSON.parse(r) as EndOfTurnOptions);
if (rules.length === 0) rules.push({ mode: "fixed" }, { mode: "adaptive" });

/** talk.input's telephony gate defaults (telephony-schema.ts): -45 dBFS for 120 ms. */
const GATE = { threshold: -45, minSpeechMs: 120 };
const SILENCE_MS = 800;
/** The replay starts this long before the caller's onset (the gate learns the line's floor). */
const LEAD_MS = 1500;

interface Replayed {
  id: string;
  premature: boolean;
  endToCommitMs: number | undefined;
}

function replay(call: CorpusCall, run: CallResult, options: EndOfTurnOptions): Replayed {
  const speech = call.speech!;
  const rule = resolveEndOfTurn(options, SILENCE_MS);
  const endpoint = new TurnEndpoint(rule);
  const gate = new SpeechGate({ ...GATE, silenceMs: endpoint.gateSilenceMs, sampleRate: 8000 });
  // The words as the run heard them: each utterance's text at its time from the onset.
  const words = run.log.filter((e) => e.type === "transcript.delta" && e.text);
  const from = Math.max(0, Math.round(((speech.onsetMs - LEAD_MS) / 1000) * 8000));
  const pcm = decodeMulaw(
    encodeMulaw(Int16Array.from(call.track.subarray(from), (v) => Math.max(-32768, Math.min(32767, v)))),
  );
  const commits: number[] = [];
  let turn = 0;
  let capturing = false;
  let heard = 0;
  for (let at = 0; at + 160 <= pcm.length; at += 160) {
    const nowMs = (from + at + 160) / 8 - speech.onsetMs; // ms from the onset, at this frame's end
    const event = gate.process(pcm.subarray(at, at + 160));
    while (heard < words.length && words[heard]!.at <= nowMs) {
      if (capturing) endpoint.transcriptDelta(`t${turn}`, `${words[heard]!.text!} `, false);
      heard++;
    }
    if (event === "speech-start") {
      if (capturing) endpoint.speechResumed();
      else {
        capturing = true;
        endpoint.begin(`t${++turn}`);
      }
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
  const endMs = speech.endMs - speech.onsetMs;
  const after = commits.find((t) => t >= endMs);
  return {
    id: call.id,
    premature: commits.some((t) => t >= 0 && t < endMs),
    endToCommitMs: after !== undefined ? after - endMs : undefined,
  };
}

const spoken = runs.filter(
  (r) => (r.kind === "interruption" || r.kind === "noisy-interruption") && !r.preempted && r.speech,
);
console.log(
  `replaying ${spoken.length} calls of "${values.config}" (${values.details}), seed ${values.seed}, ${values.minutes} min corpus${values["no-voice-restart"] ? ", voice does not restart the silence" : ""}`,
);
console.log("| rule | speech end -> commit p50 / p95, ms | premature | premature calls |");
console.log("|---|---|---|---|");
for (const options of rules) {
  const out = spoken.map((r) => replay(corpus.get(r.id)!, r, options));
  const ok = out.flatMap((o) => (!o.premature && o.endToCommitMs !== undefined ? [o.endToCommitMs] : []));
  const premature = out.filter((o) => o.premature);
  if (values.calls)
    for (const o of out)
      console.log(
        `  ${o.id} ${o.premature ? "premature" : ""} ${o.endToCommitMs === undefined ? "-" : Math.round(o.endToCommitMs)}`,
      );
  console.log(
    `| ${JSON.stringify(options)} | ${Math.round(percentile(ok, 0.5))} / ${Math.round(percentile(ok, 0.95))} (${ok.length} turns) | ${premature.length} / ${out.length} | ${premature.map((o) => o.id).join(", ")} |`,
  );
}
