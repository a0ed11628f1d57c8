/**
 * Turn-taking on phone audio (issue 15): a seeded corpus of speakerphone
 * calls (bench/lib/turn-corpus.ts: pocketsphinx-testdata speech and espeak-ng
 * backchannels over the assistant's echo, in pink / babble / street noise)
 * run through the real leg (the whole server in stt-tts mode, the Twilio
 * stand-in playing the answer at 1x and sending the caller's channel in real
 * time), once per configuration, all in the same run: today's gate with echo
 * cancellation off is the baseline. Prints false barge-ins per 10 minutes of
 * echo-only audio by echo return loss and in noise, missed interruptions and
 * onset -> `clear` latency, backchannels that interrupt, speech end -> turn
 * commit and premature cut-offs, and the input chain's CPU per 20 ms frame.
 *
 *   node --import tsx bench/turn-taking.bench.ts [--minutes 3] [--quick] [--seed 1] [--concurrency 3]
 *     [--configs baseline,ec,...] [--config-json '{"id":"x","talk":{"input":{...}}}' ...] [--details out.json]
 *     [--kinds backchannel,interruption] [--repeat 5]
 *
 * --minutes is the echo-only exposure per configuration; the other sets scale
 * with it, the backchannels at least 12 (3: 63 calls, 24 of them short
 * backchannel calls, about 11 minutes of calls per configuration; 2: 48
 * calls, about 3.5 minutes of wall time per configuration with
 * --concurrency 3). --quick is --minutes 0.5 (23 calls, a smoke check). More calls
 * at once finish sooner but on a loaded 2-core machine starve the server and
 * the caller's 20 ms pacing, which shows up as false barge-ins and latency
 * (docs/notes/performance-history.md, "Turn-taking").
 * Realtime calls (--configs rt-passthrough,rt-ec,rt-talkgate,rt-talkgate-adaptive; not run unless named): the
 * answer is the OpenAI Realtime stand-in's, whose energy VAD stands in for server VAD, one call at a time.
 * fixed-eot / adaptive-eot (and rt-talkgate / rt-talkgate-adaptive) name the end-of-turn rule whichever is the
 * default; with --grid each cell also gets premature cut-offs, speech end -> commit and voice to voice.
 * A configuration whose keys today's config schema refuses is skipped with a
 * line saying so. --kinds keeps the corpus's calls of those kinds only (echo-only, interruption,
 * backchannel, noisy-echo, noisy-interruption) and --repeat places each call that many times (ids
 * suffixed #2, #3, ...): the same audio again in real time, for a figure of a few calls measured on more.
 * --grid runs issue 40's talker-to-echo grid instead (bench/lib/talker-echo-grid.ts: the caller -10..+10 dB
 * against the echo at ERL 3-20 dB; --per-cell N interruptions a cell, --echo-minutes M of echo-only answer
 * per ERL, --erls / --ters to run part of it) and prints it as grids (bench/lib/grid-figures.ts).
 * --baseline <commit or checkout dir> runs every configuration a second time on that checkout's own server
 * (bench/lib/baseline-checkout.ts: today's code), at the same time: every configuration's calls run in
 * parallel, in the same order, --concurrency at a time each, so the machine's load falls on all alike.
 * --details writes every call's result (turn-call.ts CallResult, with the server's
 * events: user transcripts, speech start / stop) per configuration; bench/turn-endpoint-replay.ts replays
 * end-of-turn rules offline on them.
 * --agent-first-token-ms N: the agent of stt-tts calls is a chat completions stand-in whose answers start N
 * ms after it is asked (a hosted model's time to first token), not the local agent that answers at once:
 * for voice to voice, and the answer prepared ahead of the end of turn (fixed-eot beside fixed-eot-unprepared).
 */
import { cpus, loadavg } from "node:os";
import { writeFileSync } from "node:fs";
import { benchParseArgs } from "./lib/bench-cli.js";
import { echoCancellerAvailable } from "../src/codecs/echo-canceller.js";
import { baselineCheckout } from "./lib/baseline-checkout.js";
import { espeakCacheDir } from "./lib/corpus-audio.js";
import { gridSummary, gridTables, type GridOutcome } from "./lib/grid-figures.js";
import { interleavedChainCosts } from "./lib/input-chain-cpu.js";
import { loadChain, type ChainModules } from "./lib/onset-latency.js";
import { buildGrid, echoLevelDb, GRID_ERLS_DB, GRID_TERS_DB } from "./lib/talker-echo-grid.js";
import { cpuSince } from "./lib/process-cpu.js";
import { spawnTurnServer } from "./lib/turn-server.js";
import { runCalls, type CallResult } from "./lib/turn-call.js";
import {
  parseConfigJson,
  REALTIME_TURN_CONFIGS,
  refusal,
  TURN_CONFIGS,
  type TurnConfig,
} from "./lib/turn-configs.js";
import { ANSWER, buildCorpus, corpusDigest, type CorpusCall } from "./lib/turn-corpus.js";
import { turnFigures, type Figure } from "./lib/turn-figures.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    minutes: { type: "string", default: "3" },
    quick: { type: "boolean", default: false },
    seed: { type: "string", default: "1" },
    concurrency: { type: "string", default: "3" },
    configs: { type: "string" },
    "config-json": { type: "string", multiple: true },
    details: { type: "string" },
    kinds: { type: "string" },
    repeat: { type: "string", default: "1" },
    grid: { type: "boolean", default: false },
    "per-cell": { type: "string", default: "2" },
    "echo-minutes": { type: "string", default: "2" },
    erls: { type: "string" },
    ters: { type: "string" },
    baseline: { type: "string" },
    "agent-first-token-ms": { type: "string" },
  },
  strict: true,
});
const positive = (v: string | undefined, name: string): number => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number`);
  return n;
};
const minutes = values.quick ? 0.5 : positive(values.minutes, "minutes");
const seed = Math.trunc(positive(values.seed, "seed"));
const concurrency = Math.trunc(positive(values.concurrency, "concurrency"));
const repeat = Math.trunc(positive(values.repeat, "repeat"));
const agentFirstTokenMs =
  values["agent-first-token-ms"] === undefined
    ? undefined
    : Math.trunc(positive(values["agent-first-token-ms"], "agent-first-token-ms"));
const dbList = (v: string | undefined, all: readonly number[], name: string): number[] =>
  v === undefined
    ? [...all]
    : v.split(",").map((x) => {
        const n = Number(x);
        if (!Number.isFinite(n)) throw new Error(`--${name}: "${x}" is not a number`);
        return n;
      });
const erls = dbList(values.erls, GRID_ERLS_DB, "erls");
const ters = dbList(values.ters, GRID_TERS_DB, "ters");
const CALL_KINDS: readonly CorpusCall["kind"][] = [
  "echo-only",
  "interruption",
  "backchannel",
  "noisy-echo",
  "noisy-interruption",
];
const kinds = values.kinds?.split(",").map((k) => k.trim());
for (const k of kinds ?? [])
  if (!CALL_KINDS.includes(k as CorpusCall["kind"]))
    throw new Error(`--kinds: unknown kind "${k}" (known: ${CALL_KINDS.join(", ")})`);

const configs = selectConfigs();
const runnable: TurnConfig[] = [];
for (const config of configs) {
  const why = refusal(config);
  if (why === undefined) runnable.push(config);
  else
    console.log(
      `configuration "${config.id}" (${config.label}) skipped: today's config schema refuses it, the key does not exist yet (${why.replace(/\s+/g, " ")})`,
    );
}
const baseline = values.baseline ? baselineCheckout(values.baseline) : undefined;
if (baseline) {
  console.log(`baseline: ${baseline.describe} (${baseline.dir})`);
  for (const c of [...runnable])
    runnable.push({ ...c, id: `${c.id}@base`, label: `${c.label}, baseline`, checkout: baseline.dir });
}
if (!echoCancellerAvailable())
  console.log(
    "echo canceller not built (native/speexdsp): configurations with echo cancellation run without it",
  );

const builtAt = performance.now();
const corpus = selectCalls(
  values.grid
    ? buildGrid({
        seed,
        perCell: Math.trunc(positive(values["per-cell"], "per-cell")),
        echoMinutes: positive(values["echo-minutes"], "echo-minutes"),
        erls,
        ters,
      })
    : buildCorpus({ seed, minutes }),
);
console.log(describeCorpus(corpus, performance.now() - builtAt));

const results = new Map<string, { results: CallResult[]; figures: Figure[]; wallS: number }>();
/** The machine's 5-minute load average after each configuration: real-time figures depend on it. */
const loads = new Map<string, number>();
const servers = await Promise.all(
  runnable.map((config) =>
    spawnTurnServer(
      {
        ...(config.mode === "realtime" ? { mode: "realtime" as const } : {}),
        telephony: { greeting: ANSWER, greetingProtectMs: 0, ...config.telephony },
        talk: config.talk ?? {},
        ...(agentFirstTokenMs !== undefined ? { agentFirstTokenMs } : {}),
      },
      config.checkout,
    ),
  ),
);
const done = new Map<string, number>();
const progress = (): void =>
  void process.stderr.write(
    `\r${runnable.map((c) => `${c.id}: ${done.get(c.id) ?? 0}/${corpus.length}`).join(", ")} calls`,
  );
try {
  // Every configuration at once, its calls in corpus order: the machine's load falls on all alike.
  const runs = await Promise.all(
    runnable.map(async (config, i) => {
      const server = servers[i]!;
      const started = performance.now();
      const cpuBefore = server.cpu();
      // The realtime stand-in serves one socket: its calls go one at a time.
      const calls = await runCalls(server, corpus, config.mode === "realtime" ? 1 : concurrency, (n) => {
        done.set(config.id, n);
        progress();
      });
      loads.set(config.id, loadavg()[1]!);
      return {
        calls,
        serverCpu: cpuSince(cpuBefore, server.cpu()),
        wallS: (performance.now() - started) / 1000,
      };
    }),
  );
  process.stderr.write("\n");
  const chainModules = new Map<string, ChainModules>();
  const costs = interleavedChainCosts(
    await Promise.all(
      runnable.map(async (config) => {
        const echoCancellation = (
          config.talk?.input as { echoCancellation?: Record<string, unknown> } | undefined
        )?.echoCancellation;
        // A realtime call without echoCancellation.realtime passes u-law through: no input chain at all.
        const passthrough = config.mode === "realtime" && echoCancellation?.["realtime"] !== true;
        let modules: ChainModules | undefined;
        if (config.checkout) {
          modules = chainModules.get(config.checkout) ?? (await loadChain("baseline", config.checkout));
          chainModules.set(config.checkout, modules);
        }
        return {
          id: config.id,
          echoCancellation: passthrough ? { enabled: false } : echoCancellation,
          modules,
        };
      }),
    ),
  );
  runnable.forEach((config, i) => {
    const { calls, serverCpu, wallS } = runs[i]!;
    const callSeconds = calls.reduce((n, c) => n + c.callMs, 0) / 1000;
    const figures = turnFigures(calls, costs.get(config.id));
    figures.push({
      row: "server process CPU per call per 20 ms frame (all its work: relay, gate, STT, TTS, agent)",
      cell: serverCpu
        ? `${(((serverCpu.user + serverCpu.system) * 1e6) / (callSeconds * 50)).toFixed(0)} us`
        : "-",
      value: serverCpu ? ((serverCpu.user + serverCpu.system) * 1e6) / (callSeconds * 50) : undefined,
    });
    results.set(config.id, { results: calls, figures, wallS });
  });
} finally {
  await Promise.all(servers.map((s) => s.close()));
}

if (values.grid) printGrid();
printTable();
if (values.details)
  writeFileSync(
    values.details,
    JSON.stringify(Object.fromEntries([...results].map(([id, r]) => [id, r.results])), null, 1),
  );
console.log(
  JSON.stringify({
    bench: "turn-taking",
    seed,
    minutes,
    digest: corpusDigest(corpus).slice(0, 16),
    configs: Object.fromEntries(
      [...results].map(([id, r]) => [id, Object.fromEntries(r.figures.map((f) => [f.row, f.value ?? null]))]),
    ),
  }),
);
process.exit(0);

function selectConfigs(): TurnConfig[] {
  const extra = (values["config-json"] ?? []).flatMap(parseConfigJson);
  const named = [...TURN_CONFIGS, ...REALTIME_TURN_CONFIGS];
  const all = [...named.filter((c) => !extra.some((e) => e.id === c.id)), ...extra];
  // Realtime configurations run one call at a time: only when named.
  if (!values.configs) return all.filter((c) => !REALTIME_TURN_CONFIGS.includes(c));
  return values.configs.split(",").map((id) => {
    const found = all.find((c) => c.id === id.trim());
    if (!found) throw new Error(`--configs: no configuration "${id}" (${all.map((c) => c.id).join(", ")})`);
    return found;
  });
}

/** The corpus's calls of the --kinds asked for, each --repeat times. */
function selectCalls(all: CorpusCall[]): CorpusCall[] {
  const kept = kinds ? all.filter((c) => kinds.includes(c.kind)) : all;
  if (kept.length === 0) throw new Error(`--kinds ${values.kinds}: no call of the corpus is of those kinds`);
  return Array.from({ length: repeat }, (_, r) =>
    kept.map((c) => (r === 0 ? c : { ...c, id: `${c.id}#${r + 1}` })),
  ).flat();
}

function describeCorpus(calls: readonly CorpusCall[], buildMs: number): string {
  const byKind = new Map<string, number>();
  for (const c of calls) byKind.set(c.kind, (byKind.get(c.kind) ?? 0) + 1);
  const callMinutes =
    calls.reduce((n, c) => n + (c.speech ? c.hangUpMs : Math.min(c.hangUpMs, 22_000)), 0) / 60_000;
  return (
    `turn-taking corpus: seed ${seed}${kinds ? `, only ${kinds.join(", ")}` : ""}${repeat > 1 ? `, each call ${repeat} times` : ""}, ${calls.length} calls (${[...byKind].map(([k, n]) => `${n} ${k}`).join(", ")}), ` +
    `about ${callMinutes.toFixed(1)} min of calls per configuration, digest ${corpusDigest(calls).slice(0, 16)}, ` +
    `built in ${(buildMs / 1000).toFixed(1)} s (espeak-ng cache ${espeakCacheDir()}); ` +
    `calls in real time (1x), ${concurrency} at a time`
  );
}

function printGrid(): void {
  const byConfig = new Map<string, GridOutcome[]>();
  for (const [id, r] of results)
    byConfig.set(
      id,
      r.results.map((c) => ({
        kind: c.kind,
        lossDb: c.lossDb,
        terDb: c.terDb,
        selfInterruptions: c.falseBargeIns,
        echoMinutes: c.kind === "echo-only" ? c.heardMs / 60_000 : 0,
        preempted: c.preempted,
        missed: c.kind !== "echo-only" && !c.preempted && !c.interrupted,
        latencyMs: c.onsetToClearMs,
        activeLatencyMs: c.activeOnsetToClearMs,
        premature: c.premature,
        endToCommitMs: c.endToCommitMs,
        // As turn-figures.ts: the reply to the turn only once the interrupted answer was cut.
        voiceToVoiceMs: c.cut ? c.voiceToVoiceMs : undefined,
      })),
    );
  const level = (erl: number, ter: number): number =>
    echoLevelDb({ delayMs: 0, lossDb: erl, response: "line", responseSeed: 0 }) + ter;
  for (const line of gridTables(byConfig, erls, ters, level)) console.log(line);
  console.log("");
  for (const [id, outcomes] of byConfig) console.log(`${id}: ${gridSummary(outcomes, -6)}`);
  console.log("");
}

function printTable(): void {
  const ids = [...results.keys()];
  if (ids.length === 0) return;
  console.log(`| figure | ${ids.map((id) => runnable.find((c) => c.id === id)!.label).join(" | ")} |`);
  console.log(`|---|${ids.map(() => "---").join("|")}|`);
  // The grid's echo-only and backchannel rows are its own (printGrid): the base corpus's ERLs are not its.
  const rows = results
    .get(ids[0]!)!
    .figures.map((f) => f.row)
    .filter(
      (row) => !values.grid || !/^(false barge-ins|echo-only|backchannels|interruptions in noise)/.test(row),
    );
  for (const row of rows)
    console.log(
      `| ${row} | ${ids.map((id) => results.get(id)!.figures.find((f) => f.row === row)?.cell ?? "-").join(" | ")} |`,
    );
  console.log(
    `| wall time of the configuration's calls, s | ${ids.map((id) => results.get(id)!.wallS.toFixed(0)).join(" | ")} |`,
  );
  console.log(
    `| machine load average (5 min) after it, on ${cpus().length} cores | ${ids.map((id) => loads.get(id)!.toFixed(1)).join(" | ")} |`,
  );
}
