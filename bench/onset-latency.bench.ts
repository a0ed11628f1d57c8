/**
 * Caller onset -> speech gate, offline (issues 15 and 40): the turn-taking
 * corpus's calls through the leg's input chain (echo guard over the speexdsp
 * canceller, then the speech gate) faster than real time
 * (bench/lib/onset-latency.ts). For each call with speech: how long after
 * its known onset the gate confirms it, beside the same gate on the
 * caller's track alone (no echo): the difference is what the echo path
 * costs. For the echo-only calls: onsets on echo (false barge-ins), by echo
 * return loss. Seconds, not minutes: the loop to tune the echo guard on,
 * before the real-time bench confirms on the real leg.
 *
 *   node --import tsx bench/onset-latency.bench.ts [--seeds 1,2,3] [--minutes 3] [--min-speech-ms 120]
 *     [--threshold=-45] [--tail-ms 300] [--no-ec] [--no-double-talk] [--lag-ms 0] [--jitter-frames 0] [--answer-start-ms 400[,800,...]] [--calls]
 *     [--trace interruption-9]   (that call's frames around its onset, per seed: levels, the guard, the gate;
 *       grid-echo-erl3-2@6060: an echo-only call's frames around a stream time, its false onset's)
 *     [--grid [--per-cell 4] [--echo-minutes 10] [--erls 3,6,10,20] [--ters=-10,-6,-3,0,3,6,10]]   (issue 40's talker-to-echo grid instead of the corpus)
 *       [--noise-steps N [--noise-step-db=-6]]   (N echo-only calls per ERL and noise kind where noise switches on
 *       mid-answer, that many dB against the echo's level)
 *     [--answer-start-ms 400,800,1200,1600]   (every call with speech once per start, its id suffixed /start800:
 *       where in the answer the caller's onset falls; echo-only calls at the first start)
 *     [--baseline <commit or checkout dir>]   (today's code on the same frames, call after call)
 *     [--peer webrtc-aec[:low|moderate|high],...]   (the peer on the same frames: WebRTC's echo canceller from
 *       Debian's webrtc-audio-processing, as PulseAudio runs it, then the same gate; bench/lib/webrtc-aec-peer.ts)
 *     [--peer webrtc-aec3,webrtc-aec3+guard]   (WebRTC's AEC3, npm @ennuicastr/webrtcaec3.js: alone before the gate, or
 *       under talkgate's guard in libspeexdsp's place; bench/lib/webrtc-aec3-peer.ts)
 *     [--peer silero-gate]   (the same guard, the gate's detector the Silero VAD: talk.input.vad "silero")
 *     [--echo-json '{"doubleTalk":true}']   (talk.input.echoCancellation for the change, over the flags)
 *     [--words [--words-json '{"maxDistance":0.6}'] [--words-log]]   (the words probe on the change's guard:
 *       Moonshine on the canceller's output while frames are held as echo, bench/lib/words-probe.ts; each decode printed)
 *
 * With --baseline, every call runs through this checkout's chain and the
 * baseline's in turn, in one process, so a shared machine's load falls on both
 * alike; each figure prints both (this checkout first). CPU per 20 ms frame is
 * the guard and the gate's, over every call, per chain.
 */
import { benchParseArgs } from "./lib/bench-cli.js";
import { echoCancellerAvailable } from "../src/codecs/echo-canceller.js";
import { createSileroVad } from "../src/codecs/silero-vad.js";
import { baselineCheckout } from "./lib/baseline-checkout.js";
import { gridSummary, gridTables, type GridOutcome } from "./lib/grid-figures.js";
import {
  DEFAULT_CHAIN,
  loadChain,
  runOnsetCall,
  type ChainModules,
  type OnsetResult,
} from "./lib/onset-latency.js";
import {
  buildGrid,
  echoLevelDb,
  GRID_ERLS_DB,
  GRID_TERS_DB,
  NOISE_STEP_KINDS,
} from "./lib/talker-echo-grid.js";
import { ANSWER, buildCorpus, ECHO_RETURN_LOSSES_DB } from "./lib/turn-corpus.js";
import { defaultMoonshineModelDir, MoonshineModel } from "../src/providers/moonshine/moonshine-model.js";
import { WordsProbe, type WordsDecode, type WordsProbeOptions } from "./lib/words-probe.js";
import { WEBRTC_SUPPRESSION, webrtcAecChain, type WebrtcSuppression } from "./lib/webrtc-aec-peer.js";
import { webrtcAec3Chain } from "./lib/webrtc-aec3-peer.js";
import { percentile } from "./lib/turn-figures.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    seeds: { type: "string", default: "1" },
    minutes: { type: "string", default: "3" },
    "min-speech-ms": { type: "string", default: String(DEFAULT_CHAIN.minSpeechMs) },
    threshold: { type: "string", default: String(DEFAULT_CHAIN.threshold) },
    "tail-ms": { type: "string", default: "300" },
    "no-ec": { type: "boolean", default: false },
    "no-double-talk": { type: "boolean", default: false },
    "lag-ms": { type: "string", default: "0" },
    "jitter-frames": { type: "string", default: "0" },
    "noise-steps": { type: "string", default: "0" },
    "noise-step-db": { type: "string", default: "-6" },
    "answer-start-ms": { type: "string", default: String(DEFAULT_CHAIN.answerStartMs) },
    calls: { type: "boolean", default: false },
    trace: { type: "string" },
    grid: { type: "boolean", default: false },
    "per-cell": { type: "string", default: "4" },
    "echo-minutes": { type: "string", default: "10" },
    erls: { type: "string" },
    ters: { type: "string" },
    baseline: { type: "string" },
    peer: { type: "string" },
    "echo-json": { type: "string" },
    words: { type: "boolean", default: false },
    "words-json": { type: "string" },
    "words-log": { type: "boolean", default: false },
  },
  strict: true,
});
const number = (v: string | undefined, name: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name} must be a number >= 0`);
  return n;
};
function dbfsArg(v: string | undefined, name: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n > 0 || n < -90)
    throw new Error(`--${name} must be a level -90..0 dBFS (--${name}=-45)`);
  return n;
}
if (!values["no-ec"] && !echoCancellerAvailable())
  throw new Error("the speexdsp canceller is not built here");
const echoFlags = { tailMs: number(values["tail-ms"], "tail-ms"), doubleTalk: !values["no-double-talk"] };
let echoJson: Record<string, unknown> = {};
if (values["echo-json"]) {
  try {
    echoJson = JSON.parse(values["echo-json"]) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`--echo-json is not JSON: ${(err as Error).message}`);
  }
}
// Where the caller's onset falls in the answer moves the figures more than most rules (at 400 / 800 ms seed 2's
// grid missed 1 / 22 of 96 where TER >= -6 dB): a list runs every call with speech once at each start.
const answerStarts = values["answer-start-ms"].split(",").map((v) => {
  if (v.trim() === "")
    throw new Error("--answer-start-ms takes ms after the call connects, comma-separated (400,800)");
  return number(v, "answer-start-ms");
});
const chain = {
  echo: values["no-ec"] ? undefined : echoFlags,
  minSpeechMs: number(values["min-speech-ms"], "min-speech-ms"),
  threshold: dbfsArg(values.threshold, "threshold"),
  answerStartMs: answerStarts[0]!,
  referenceLagMs: number(values["lag-ms"], "lag-ms"),
  jitterFrames: Math.trunc(number(values["jitter-frames"], "jitter-frames")),
  traceCallId: values.trace,
};
const seeds = values.seeds.split(",").map((s) => Math.trunc(number(s, "seeds")));
const minutes = number(values.minutes, "minutes");
const perCell = Math.trunc(number(values["per-cell"], "per-cell"));
const echoMinutes = number(values["echo-minutes"], "echo-minutes");
const noiseSteps = Math.trunc(number(values["noise-steps"], "noise-steps"));
const noiseStepDb = Number(values["noise-step-db"]);
if (!Number.isFinite(noiseStepDb) || Math.abs(noiseStepDb) > 40)
  throw new Error(`--noise-step-db must be -40..40 dB against the echo's level (--noise-step-db=-6)`);
const dbList = (v: string | undefined): number[] | undefined =>
  v === undefined ? undefined : v.split(",").map((s) => Number(s));
const erls = dbList(values.erls) ?? [...GRID_ERLS_DB];
const ters = dbList(values.ters) ?? [...GRID_TERS_DB];

const words = values.words ? await wordsProbes(values["words-json"]) : undefined;
const chains: ChainModules[] = [
  { ...(await loadChain("change")), echo: echoJson, wordsProbe: words?.create },
];
if (values.baseline) {
  const base = baselineCheckout(values.baseline);
  chains.push(await loadChain("baseline", base.dir));
  console.log(`baseline: ${base.describe} (${base.dir})`);
}
for (const peer of values.peer?.split(",") ?? []) {
  if (peer === "silero-gate") {
    // The same guard; the gate's detector the Silero VAD (talk.input.vad: "silero") instead of the WebRTC VAD.
    const base = chains[0]!;
    chains.push({
      ...base,
      name: peer,
      wordsProbe: undefined,
      SpeechGate: class extends base.SpeechGate {
        constructor(options: ConstructorParameters<typeof base.SpeechGate>[0]) {
          super({ ...options, detector: (o) => createSileroVad(o) });
        }
      },
    });
    continue;
  }
  if (peer === "webrtc-aec3" || peer === "webrtc-aec3+guard") {
    chains.push(await webrtcAec3Chain(chains[0]!, peer));
    continue;
  }
  const [kind, level = "moderate"] = peer.split(":");
  if (kind !== "webrtc-aec" || !Object.hasOwn(WEBRTC_SUPPRESSION, level))
    throw new Error(
      `--peer takes webrtc-aec[:low|moderate|high], webrtc-aec3, webrtc-aec3+guard or silero-gate, got ${peer}`,
    );
  chains.push(webrtcAecChain(chains[0]!, level as WebrtcSuppression));
}
const names = chains.map((c) => c.name);

const started = performance.now();
const results: OnsetResult[] = [];
for (const seed of seeds) {
  const calls = values.grid
    ? buildGrid({
        seed,
        perCell,
        echoMinutes: echoMinutes / seeds.length,
        erls,
        ters,
        noiseSteps,
        noiseStepDb,
      })
    : buildCorpus({ seed, minutes });
  for (const call of calls) {
    // Echo-only calls once, at the first start: with no caller, where the answer starts moves nothing.
    const starts = call.speech && answerStarts.length > 1 ? answerStarts : answerStarts.slice(0, 1);
    for (const answerStartMs of starts) {
      const at = starts.length > 1 ? { ...call, id: `${call.id}/start${answerStartMs}` } : call;
      const r = await runOnsetCall(
        at,
        { ...chain, answerStartMs },
        chains,
        values["words-log"] ? (line) => console.log(`${line} (s${seed})`) : undefined,
      );
      results.push({ ...r, id: `s${seed}/${r.id}` });
    }
  }
}
const wallS = (performance.now() - started) / 1000;

const row = (label: string, cells: string[]): void =>
  console.log(`${label.padEnd(58)} ${cells.join("  |  ")}`);
const ms = (v: number): string => (Number.isNaN(v) ? "-" : String(Math.round(v)));
console.log(
  `onset-latency: seeds ${seeds.join(",")}, ${values.grid ? `talker-to-echo grid, ${perCell} calls a cell, ${echoMinutes} min of echo-only answer per ERL` : `--minutes ${minutes}`}, ` +
    `${chain.echo ? `echo cancellation ${JSON.stringify(chain.echo)}${values["echo-json"] ? ` (the change: + ${values["echo-json"]})` : ""}` : "no echo cancellation"}, ` +
    `gate ${chain.threshold} dBFS for ${chain.minSpeechMs} ms, answer from ${answerStarts.join(" / ")} ms, reference lag ${chain.referenceLagMs} ms (drift +-${chain.jitterFrames} frames); ${results.length} calls in ${wallS.toFixed(1)} s; chains: ${names.join(" | ")}`,
);
if (values.calls)
  for (const r of results)
    for (const name of names) {
      const c = r.chains[name]!;
      const what =
        r.onsetMs !== undefined
          ? `detect ${c.detectMs ?? "MISSED"} (P.56 ${c.activeDetectMs ?? "-"}, alone ${r.aloneMs ?? "-"}, voiced ${r.voicedMs ?? "-"})`
          : "";
      console.log(
        `  ${name.padEnd(8)} ${r.id.padEnd(40)} ERL ${String(r.lossDb).padStart(2)}${r.terDb !== undefined ? ` TER ${String(r.terDb).padStart(3)}` : ""} delay ${String(r.delayMs).padStart(3)} ${r.response.padEnd(4)} ` +
          `${what} false ${c.falseOnsets}${c.firstFalseMs !== undefined ? ` (first at ${c.firstFalseMs})` : ""} suppressed ${c.suppressedFrames} double-talk ${c.doubleTalkFrames}`,
      );
    }
const cpu = names.map((name) => {
  const us = results.reduce((n, r) => n + r.chains[name]!.cpuUs, 0);
  const frames = results.reduce((n, r) => n + r.chains[name]!.frames, 0);
  return `${(us / frames).toFixed(1)} us`;
});

if (values.grid) printGrid();
else printCorpus();
row("input chain CPU per 20 ms frame (guard + gate)", cpu);
if (words) {
  const decodes = results.reduce((n, r) => n + r.chains.change!.decodes, 0);
  const frames = results.reduce((n, r) => n + r.chains.change!.frames, 0);
  const { decodeMs } = words.model.stats;
  console.log(
    `words probe ${JSON.stringify(words.options)}: ${decodes} decodes (${((decodes / frames) * 3000).toFixed(1)} a minute of call), ` +
      `recognizer thread ${(decodeMs / Math.max(1, decodes)).toFixed(1)} ms a decode, ${((decodeMs * 1000) / frames).toFixed(1)} us per 20 ms frame (in the change's CPU above)`,
  );
  await words.model.close();
}

function printGrid(): void {
  const byConfig = new Map<string, GridOutcome[]>();
  for (const name of names)
    byConfig.set(
      name,
      // The noise steps have their own table (printNoiseSteps).
      results
        .filter((r) => r.aloneFalseOnsets === undefined)
        .map((r) => {
          const c = r.chains[name]!;
          const spoken = r.onsetMs !== undefined;
          return {
            kind: r.kind,
            lossDb: r.lossDb,
            terDb: r.terDb,
            selfInterruptions: c.falseOnsets,
            echoMinutes: spoken ? Math.max(0, (r.onsetMs! - r.answerStartMs) / 60_000) : r.answerMinutes,
            preempted: spoken && c.falseOnsets > 0,
            missed: spoken && c.detectMs === undefined,
            latencyMs: c.detectMs,
            activeLatencyMs: c.activeDetectMs,
            aloneHeard: spoken ? r.aloneMs !== undefined : undefined,
            aloneActiveLatencyMs:
              r.aloneMs !== undefined && r.activeOnsetMs !== undefined
                ? r.aloneMs + r.onsetMs! - r.activeOnsetMs
                : undefined,
          };
        }),
    );
  const level = (erl: number, ter: number): number =>
    echoLevelDb({ delayMs: 0, lossDb: erl, response: "line", responseSeed: 0 }) + ter;
  for (const line of gridTables(byConfig, erls, ters, level)) console.log(line);
  console.log("");
  for (const [name, outcomes] of byConfig) console.log(`${name}: ${gridSummary(outcomes, -6)}`);
  printNoiseSteps();
}

/** The grid's noise-step calls (--noise-steps): echo-only answers cut once noise switched on, per chain. */
function printNoiseSteps(): void {
  const steps = results.filter((r) => r.aloneFalseOnsets !== undefined);
  if (steps.length === 0) return;
  console.log("");
  console.log(
    "Noise switching on during the answer: echo-only answers cut (calls with an onset through the chain, of the cell's; " +
      "in brackets, of those where the default gate on the noise alone, no answer playing, started no turn)",
  );
  console.log("");
  console.log(`| ERL \\ noise | ${NOISE_STEP_KINDS.join(" | ")} |`);
  console.log(`|---|${NOISE_STEP_KINDS.map(() => "---").join("|")}|`);
  const cut = (calls: readonly OnsetResult[], n: string): number =>
    calls.filter((r) => r.chains[n]!.falseOnsets > 0).length;
  for (const erl of erls) {
    const cells = NOISE_STEP_KINDS.map((kind) => {
      const calls = steps.filter((r) => r.lossDb === erl && r.id.includes(`grid-noise-${kind}-`));
      const quiet = calls.filter((r) => r.aloneFalseOnsets === 0);
      return names
        .map((n) => `${cut(calls, n)} of ${calls.length} (${cut(quiet, n)} of ${quiet.length})`)
        .join(" · ");
    });
    console.log(`| ${erl} dB | ${cells.join(" | ")} |`);
  }
  const quiet = steps.filter((r) => r.aloneFalseOnsets === 0);
  for (const n of names)
    console.log(
      `${n}: noise steps: ${cut(steps, n)} of ${steps.length} answers cut; of the ${quiet.length} where the default gate on the noise alone started no turn, ${cut(quiet, n)}`,
    );
}

function printCorpus(): void {
  for (const loss of ECHO_RETURN_LOSSES_DB) {
    const calls = results.filter((r) => r.kind === "echo-only" && r.lossDb === loss);
    row(
      `echo-only, ERL ${loss} dB: false onsets (calls with one)`,
      names.map(
        (n) =>
          `${calls.reduce((k, r) => k + r.chains[n]!.falseOnsets, 0)} (${calls.filter((r) => r.chains[n]!.falseOnsets > 0).length} of ${calls.length})`,
      ),
    );
  }
  const noisyEcho = results.filter((r) => r.kind === "noisy-echo");
  row(
    "noisy echo: false onsets (calls with one)",
    names.map(
      (n) =>
        `${noisyEcho.reduce((k, r) => k + r.chains[n]!.falseOnsets, 0)} (${noisyEcho.filter((r) => r.chains[n]!.falseOnsets > 0).length} of ${noisyEcho.length})`,
    ),
  );
  const p = (v: number[]): string =>
    `${ms(percentile(v, 0.5))} / ${ms(percentile(v, 0.95))} / max ${ms(v.length ? Math.max(...v) : NaN)}`;
  for (const kinds of [["interruption"], ["noisy-interruption"], ["backchannel"]] as const) {
    const calls = results.filter((r) => (kinds as readonly string[]).includes(r.kind));
    const cells = (figure: (live: OnsetResult[], n: string) => string): string[] =>
      names.map((n) =>
        figure(
          calls.filter((r) => r.chains[n]!.falseOnsets === 0),
          n,
        ),
      );
    row(
      `${kinds[0]}: missed (within 2 s) / pre-empted`,
      cells(
        (live, n) =>
          `${live.filter((r) => r.chains[n]!.detectMs === undefined).length} / ${calls.length - live.length} of ${calls.length}`,
      ),
    );
    row(
      `${kinds[0]}: onset -> gate p50 / p95, ms`,
      cells((live, n) =>
        p(live.flatMap((r) => (r.chains[n]!.detectMs !== undefined ? [r.chains[n]!.detectMs!] : []))),
      ),
    );
    row(
      `${kinds[0]}: P.56-active onset -> gate p50 / p95, ms`,
      cells((live, n) =>
        p(
          live.flatMap((r) =>
            r.chains[n]!.activeDetectMs !== undefined ? [r.chains[n]!.activeDetectMs!] : [],
          ),
        ),
      ),
    );
    row(
      `${kinds[0]}: same gate, caller alone p50 / p95, ms`,
      cells((live) => p(live.flatMap((r) => (r.aloneMs !== undefined ? [r.aloneMs] : [])))),
    );
    row(
      `${kinds[0]}: first voiced 10 ms -> gate p50 / p95, ms`,
      cells((live, n) =>
        p(
          live.flatMap((r) =>
            r.chains[n]!.detectMs !== undefined && r.voicedMs !== undefined
              ? [r.chains[n]!.detectMs! - Math.max(0, r.voicedMs)]
              : [],
          ),
        ),
      ),
    );
    row(
      `${kinds[0]}: echo path's cost p50 / p95, ms`,
      cells((live, n) =>
        p(
          live.flatMap((r) =>
            r.chains[n]!.detectMs !== undefined && r.aloneMs !== undefined
              ? [r.chains[n]!.detectMs! - r.aloneMs]
              : [],
          ),
        ),
      ),
    );
  }
}

/**
 * --words: a words probe (src/voice/media/words-probe.ts) on the change's guard, Moonshine's tiny model
 * on its thread, the answer's text the corpus's ANSWER; --words-json sets its options (windowMs, stepMs,
 * minHeldMs, hangMs, maxDistance, minLetters, maxExplained, latencyMs: the decode's modelled wait, default 100 ms).
 */
async function wordsProbes(json: string | undefined): Promise<{
  model: MoonshineModel;
  options: Partial<WordsProbeOptions>;
  create: (onDecode: (d: WordsDecode) => void) => WordsProbe;
}> {
  const dir = defaultMoonshineModelDir();
  if (!dir) throw new Error("--words: the Moonshine model is not installed (@usefulsensors/moonshine-js)");
  const model = new MoonshineModel(dir);
  let options: Partial<WordsProbeOptions> = { latencyMs: 100 };
  if (json) {
    try {
      options = { ...options, ...(JSON.parse(json) as Partial<WordsProbeOptions>) };
    } catch (err) {
      throw new Error(`--words-json is not JSON: ${(err as Error).message}`);
    }
  }
  return {
    model,
    options,
    create: (onDecode) =>
      new WordsProbe({
        ...options,
        sampleRate: 8000,
        transcribe: async (audio) => (await model.transcribe(audio)).text,
        answerText: () => ANSWER,
        onDecode,
      }),
  };
}
