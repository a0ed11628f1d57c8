/**
 * Caller onset -> speech gate, offline (issue 15): the turn-taking corpus's
 * calls through the leg's input chain (echo guard over the speexdsp
 * canceller, then the speech gate) faster than real time
 * (bench/lib/onset-latency.ts). For each call with speech: how long after
 * its known onset the gate confirms it, beside the same gate on the
 * caller's track alone (no echo): the difference is what the echo path
 * costs. For the echo-only calls: onsets on echo (false barge-ins), by echo
 * return loss. Seconds, not minutes: the loop to tune the echo guard on,
 * before the real-time bench confirms on the real leg.
 *
 *   node --import tsx bench/onset-latency.bench.ts [--seeds 1,2,3] [--minutes 3] [--min-speech-ms 120]
 *     [--tail-ms 300] [--no-ec] [--no-double-talk] [--lag-ms 0] [--jitter-frames 0] [--answer-start-ms 400] [--calls]
 *     [--trace interruption-9]   (that call's frames around its onset, per seed: levels, the guard, the gate)
 */
import { parseArgs } from "node:util";
import { echoCancellerAvailable } from "../src/codecs/echo-canceller.js";
import { resolveEchoCancellation } from "../src/voice/media/echo-guard.js";
import { DEFAULT_CHAIN, runOnsetCall, type OnsetResult } from "./lib/onset-latency.js";
import { buildCorpus, ECHO_RETURN_LOSSES_DB } from "./lib/turn-corpus.js";
import { percentile } from "./lib/turn-figures.js";

const { values } = parseArgs({
  options: {
    seeds: { type: "string", default: "1" },
    minutes: { type: "string", default: "3" },
    "min-speech-ms": { type: "string", default: String(DEFAULT_CHAIN.minSpeechMs) },
    "tail-ms": { type: "string", default: "300" },
    "no-ec": { type: "boolean", default: false },
    "no-double-talk": { type: "boolean", default: false },
    "lag-ms": { type: "string", default: "0" },
    "jitter-frames": { type: "string", default: "0" },
    "answer-start-ms": { type: "string", default: String(DEFAULT_CHAIN.answerStartMs) },
    calls: { type: "boolean", default: false },
    trace: { type: "string" },
  },
  strict: true,
});
const number = (v: string | undefined, name: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number >= 0`);
  return n;
};
if (!values["no-ec"] && !echoCancellerAvailable())
  throw new Error("the speexdsp canceller is not built here");
const chain = {
  echo: values["no-ec"]
    ? undefined
    : resolveEchoCancellation({
        tailMs: number(values["tail-ms"], "tail-ms"),
        doubleTalk: !values["no-double-talk"],
      }),
  minSpeechMs: number(values["min-speech-ms"], "min-speech-ms"),
  threshold: DEFAULT_CHAIN.threshold,
  answerStartMs: number(values["answer-start-ms"], "answer-start-ms"),
  referenceLagMs: number(values["lag-ms"], "lag-ms"),
  jitterFrames: Math.trunc(number(values["jitter-frames"], "jitter-frames")),
  traceCallId: values.trace,
};
const seeds = values.seeds.split(",").map((s) => Math.trunc(number(s, "seeds")));
const minutes = number(values.minutes, "minutes");

const started = performance.now();
const results: OnsetResult[] = [];
for (const seed of seeds)
  for (const call of buildCorpus({ seed, minutes })) {
    const r = runOnsetCall(call, chain);
    results.push({ ...r, id: `s${seed}/${r.id}` });
  }
const wallS = (performance.now() - started) / 1000;

const row = (label: string, cell: string): void => console.log(`${label.padEnd(58)} ${cell}`);
const ms = (v: number): string => (Number.isNaN(v) ? "-" : String(Math.round(v)));
console.log(
  `onset-latency: seeds ${seeds.join(",")}, --minutes ${minutes}, ${chain.echo ? `echo guard (tail ${chain.echo.tailMs} ms)` : "no echo cancellation"}, ` +
    `minSpeechMs ${chain.minSpeechMs}, reference lag ${chain.referenceLagMs} ms (drift +-${chain.jitterFrames} frames); ${results.length} calls in ${wallS.toFixed(1)} s`,
);
if (values.calls)
  for (const r of results) {
    const what =
      r.onsetMs !== undefined
        ? `detect ${r.detectMs ?? "MISSED"} (alone ${r.aloneMs ?? "-"}, voiced ${r.voicedMs ?? "-"})`
        : "";
    console.log(
      `  ${r.id.padEnd(40)} ERL ${String(r.lossDb).padStart(2)} delay ${String(r.delayMs).padStart(3)} ${r.response.padEnd(4)} ` +
        `${what} false ${r.falseOnsets}${r.firstFalseMs !== undefined ? ` (first at ${r.firstFalseMs})` : ""} suppressed ${r.suppressedFrames}`,
    );
  }
for (const loss of ECHO_RETURN_LOSSES_DB) {
  const calls = results.filter((r) => r.kind === "echo-only" && r.lossDb === loss);
  row(
    `echo-only, ERL ${loss} dB: false onsets (calls with one)`,
    `${calls.reduce((n, r) => n + r.falseOnsets, 0)} (${calls.filter((r) => r.falseOnsets > 0).length} of ${calls.length})`,
  );
}
const noisyEcho = results.filter((r) => r.kind === "noisy-echo");
row(
  "noisy echo: false onsets (calls with one)",
  `${noisyEcho.reduce((n, r) => n + r.falseOnsets, 0)} (${noisyEcho.filter((r) => r.falseOnsets > 0).length} of ${noisyEcho.length})`,
);
for (const kinds of [["interruption"], ["noisy-interruption"], ["backchannel"]] as const) {
  const calls = results.filter((r) => (kinds as readonly string[]).includes(r.kind));
  const live = calls.filter((r) => r.falseOnsets === 0);
  const detect = live.flatMap((r) => (r.detectMs !== undefined ? [r.detectMs] : []));
  const alone = live.flatMap((r) => (r.aloneMs !== undefined ? [r.aloneMs] : []));
  const voiced = live.flatMap((r) =>
    r.detectMs !== undefined && r.voicedMs !== undefined ? [r.detectMs - Math.max(0, r.voicedMs)] : [],
  );
  const extra = live.flatMap((r) =>
    r.detectMs !== undefined && r.aloneMs !== undefined ? [r.detectMs - r.aloneMs] : [],
  );
  const p = (v: number[]): string =>
    `${ms(percentile(v, 0.5))} / ${ms(percentile(v, 0.95))} / max ${ms(Math.max(...v))}`;
  row(
    `${kinds[0]}: missed (within 2 s) / pre-empted`,
    `${live.length - detect.length} / ${calls.length - live.length} of ${calls.length}`,
  );
  row(`${kinds[0]}: onset -> gate p50 / p95, ms`, p(detect));
  row(`${kinds[0]}: same gate, caller alone p50 / p95, ms`, p(alone));
  row(`${kinds[0]}: first voiced 10 ms -> gate p50 / p95, ms`, p(voiced));
  row(`${kinds[0]}: echo path's cost p50 / p95, ms`, p(extra));
}
