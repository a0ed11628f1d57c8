/**
 * Relay capacity: how many concurrent realtime phone calls one server
 * process holds with 50 frames/s each way to the realtime provider, with
 * p99 added latency (frame in -> provider, provider -> frame out) under
 * 10 ms and no frame lost. The number of calls is ramped; each level is
 * measured over a window after a settle period; the largest level meeting
 * both criteria is reported, with the relay's CPU per call (read from /proc,
 * which a shared machine's scheduling noise disturbs far less than latency
 * tails). Goal: 1,000 calls on one core.
 *
 * By default the same ramp then runs against the peer, a relay built like
 * Twilio's Node sample (bench/lib/peer-relay-twilio-sample.ts), in the same
 * run, and the ratios are printed.
 *
 *   npm run bench:telephony -- --calls 1000            (full figure)
 *   node --import tsx bench/telephony-capacity.bench.ts  (quick: up to 300 calls)
 *   ... --peer no                                       (ours only)
 *   ... --webhook http://HOST:PORT/telephony/twilio/voice --provider-port 9000 [--target-pid N]   (another relay)
 *   ... --workers 1,2                                   (calls per machine: `talkgate serve --workers N` over
 *                                                        Redis, each N ramped in turn, CPU summed over the pool)
 *   ... --shape worst|realistic|both                    (default both: 20 ms deltas both ways all the time, and a
 *                                                        conversation with --delta-ms provider deltas, see LoadShape)
 *   ... --node-flags "F" / --baseline-node-flags "F"  (node / V8 flags of talkgate's / the baseline's process)
 *   ... --baseline DIR                                  (also ramp talkgate from another checkout, e.g. the commit
 *                                                        before a change, in the same run: ratios against it too)
 *   ... --cpu-prof DIR                                  (V8 CPU profiles of the spawned relays, written when they exit)
 *   ... --windows-out FILE                              (each window's relay, level, pid and CLOCK_MONOTONIC span as a
 *                                                        JSON line: bench/relay-cpu-perf.ts attributes perf samples by it)
 *   ... --real-sample DIR                               (also ramp Twilio's published Node sample itself, unmodified,
 *                                                        in the same run: ratios against it too, see below)
 *
 * --real-sample DIR: a checkout of twilio-samples/speech-assistant-openai-realtime-api-node that you prepared
 * (clone the repository, then `npm install` inside it); nothing of it is in this repository. Its index.js runs
 * unmodified under plain node, pinned to CPU 0 like the other relays, with PORT and OPENAI_API_KEY=sk-bench set.
 * Two things are bent, both at its edges: its hard-coded provider URL (wss://api.openai.com/...) is sent to the
 * load generator's stand-in provider over ws:// by a module-resolution hook on its `ws` import
 * (bench/lib/real-sample-redirect.mjs), and its TwiML's wss://HOST/media-stream (TLS ends in front of it in
 * production) is connected as ws:// (bench/lib/bench-target.ts). Node 20 runs that hook on a loader thread of its
 * own, which production does not have: its CPU is left out of the sample's. Its console.log output goes to a pipe
 * this bench drains, as production stdout goes to a log collector; the bytes it logged per second of window are
 * printed. It forwards a caller frame only once its provider socket is open, and configures the session 100 ms
 * after: each level's calls are placed and their provider sessions configured before the settle and the window,
 * for every relay, so no frame of a window is sent before then.
 */
import { appendFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { benchArgs, fmt, num, sleep } from "./lib/bench-args.js";
import {
  benchTarget,
  poolTarget,
  splitNodeFlags,
  type BenchTarget,
  type SpawnedRelay,
} from "./lib/bench-target.js";
import { realSampleIndex } from "./lib/spawn-telephony-server.js";
import type { LoadShape } from "./lib/twilio-load-calls.js";
import { cpuSince, readProcessCpu } from "./lib/process-cpu.js";

const args = benchArgs({
  // A file to append each window to as a JSON line (relay, shape, calls, pid, start and end on CLOCK_MONOTONIC in
  // ns, the clock `perf record -k CLOCK_MONOTONIC` stamps samples with): bench/relay-cpu-perf.ts reads it.
  "windows-out": "",
  calls: "300",
  seconds: "5",
  // Settle of the first level, which also warms the relay up (its JIT still compiles the relay path for a while).
  "warmup-seconds": "4",
  "p99-ms": "10",
  "give-up-ms": "100",
  // The relay's process id when --webhook points at a server this bench did not start (for its CPU column).
  "target-pid": "0",
  // Also ramp the peer relay in the same run (only when this bench spawns the relays).
  peer: "yes",
  // Worker counts of `talkgate serve --workers N` to ramp instead (e.g. "1,2"); empty: the single pinned process.
  workers: "",
  shape: "both",
  // The realistic shape's provider delta, ms (a multiple of 20).
  "delta-ms": "200",
  // yes: every level is measured for CPU whatever its latency or the generator's shortfall, until a frame is lost
  // or a call drops (a shared machine's load otherwise ends the ramp at the first stall).
  "cpu-ramp": "no",
  // Another checkout of talkgate to ramp in the same run (its bench server), e.g. a worktree of the previous commit.
  baseline: "",
  // Flags for the node process of talkgate, and of the baseline (V8's, which NODE_OPTIONS refuses), e.g.
  // --baseline . --baseline-node-flags "--single-threaded-gc" ramps the same code with and without them.
  "node-flags": "",
  "baseline-node-flags": "",
  // A prepared checkout of Twilio's Node sample (cloned, `npm install` done) to ramp too, unmodified.
  "real-sample": "",
});
const deltaMs = num(args["delta-ms"], "delta-ms");
if (deltaMs % 20 !== 0) throw new Error("--delta-ms must be a multiple of 20");
const SHAPES: Record<string, LoadShape> = {
  worst: { kind: "worst" },
  realistic: { kind: "realistic", deltaFrames: deltaMs / 20 },
};
const shapeNames = args.shape === "both" ? ["worst", "realistic"] : [args.shape];
for (const name of shapeNames) if (!SHAPES[name]) throw new Error("--shape must be worst, realistic or both");
if (args["real-sample"] !== "") {
  if (args.webhook !== undefined || args.workers !== "")
    throw new Error(
      "--real-sample is ramped beside the single talkgate process: not with --webhook or --workers",
    );
  realSampleIndex(args["real-sample"]); // refuses a directory that is not a prepared checkout, saying what to do
}
const maxCalls = num(args.calls, "calls");
const seconds = num(args.seconds, "seconds");
const warmupSeconds = num(args["warmup-seconds"], "warmup-seconds");
const limitMs = num(args["p99-ms"], "p99-ms");
// The ramp goes on past a level that misses the latency criterion (a shared machine's stalls can do that at any
// level) until frames are lost, a call drops or p99 passes --give-up-ms, so the table shows where it breaks.
const giveUpMs = num(args["give-up-ms"], "give-up-ms");
const levels = [
  ...new Set(
    [25, 50, 100, 150, 200, 250, 300, 400, 500, 600, 700, 800, 900, 1000, 1200, 1500, 2000]
      .filter((n) => n < maxCalls)
      .concat(maxCalls),
  ),
];

interface RampResult {
  relay: string;
  /** Largest level meeting both criteria, every level below it passing too. */
  best: number;
  /** Largest level with no frame lost and p99 under --give-up-ms. */
  lossless: number;
  /** Core share per call at the largest level that was not CPU-saturated. */
  cpuPerCall: { calls: number; share: number } | undefined;
  /** Core share per call at every level the generator applied in full. */
  cpuByLevel: Map<number, number>;
}

const HEADER =
  "| relay | calls | in p50 | in p99 | in held p50 / max | out p50 | out p99 | frames in (sent/arrived) | frames out (sent/arrived) | relay CPU (user+sys) | relay CPU per call | generator busy | ok |";

/** One relay's ramp, a level at a time (so several relays' ramps can be interleaved level by level). */
class Ramp {
  best = 0;
  lossless = 0;
  done = false;
  readonly cpuPerCall: Array<{ calls: number; share: number }> = [];
  /** Bytes per second the relay wrote to stdout and stderr during each level's window (a relay whose output the bench drains). */
  readonly logged = new Map<number, number>();
  readonly #warm = { done: false };

  constructor(
    readonly target: BenchTarget,
    readonly name: string,
    readonly shape: string,
  ) {}

  /** Ramps to `level` calls, measures one window, prints its row; sets `done` when the ramp ends there. */
  async step(level: number): Promise<void> {
    const { load } = this.target;
    const pid = this.target.server?.child.pid ?? (Number(args["target-pid"]) || undefined);
    await load.addCalls(level - load.calls.length);
    load.resume();
    // Settle: the first level also warms the server up (lazy module loads and JIT of the relay path stall it once).
    await sleep(this.#warm.done ? 1000 : warmupSeconds * 1000);
    this.#warm.done = true;
    load.inbound.open();
    load.provider.inputHold.open();
    load.outbound.open();
    const elu0 = performance.eventLoopUtilization();
    const readCpu = this.target.readCpu ?? (() => (pid ? readProcessCpu(pid) : undefined));
    const cpu0 = readCpu();
    const logged0 = this.target.server?.loggedBytes?.();
    const t0 = performance.now();
    const monotonic0 = process.hrtime.bigint();
    await sleep(seconds * 1000);
    const cpu = cpuSince(cpu0, readCpu());
    if (args["windows-out"]) {
      const window = {
        relay: this.name,
        shape: this.shape,
        calls: level,
        pid,
        startNs: String(monotonic0),
        endNs: String(process.hrtime.bigint()),
      };
      appendFileSync(args["windows-out"], `${JSON.stringify(window)}\n`);
    }
    const wall = (performance.now() - t0) / 1000;
    const logged1 = this.target.server?.loggedBytes?.();
    if (logged0 !== undefined && logged1 !== undefined) this.logged.set(level, (logged1 - logged0) / wall);
    load.inbound.close();
    load.provider.inputHold.close();
    load.outbound.close();
    const busy = performance.eventLoopUtilization(elu0).utilization;
    await sleep(1500); // frames of the window still in flight arrive; later ones do not count
    load.pause();
    const i = load.inbound;
    const o = load.outbound;
    const held = load.provider.inputHold;
    const intact = i.sent === i.arrived && o.sent === o.arrived && load.closedCalls === 0;
    // The generator has one core too: when it cannot send 50 frames/s per call, the level was not applied and
    // says nothing about the relay. The realistic shape's assistant speaks half the time: half the frames out.
    const expected = level * 50 * wall;
    const outShare = this.shape === "worst" ? 1 : 0.5;
    const generatorShort = i.sent < 0.95 * expected || o.sent < 0.9 * expected * outShare;
    const p99 = Math.max(i.percentile(99), o.percentile(99));
    const ok = intact && !generatorShort && p99 < limitMs;
    const share = cpu ? (cpu.user + cpu.system) / wall : undefined;
    // Per applied call: the calls the generator's caller frames amount to (all of them unless it fell short).
    const applied = Math.min(level, i.sent / (50 * wall));
    const cpuRamp = args["cpu-ramp"] === "yes";
    if (share !== undefined && (cpuRamp || !generatorShort))
      this.cpuPerCall.push({ calls: level, share: share / applied });
    const cpuCell = cpu
      ? `${(share! * 100).toFixed(0)}% (${((cpu.user / wall) * 100).toFixed(0)}+${((cpu.system / wall) * 100).toFixed(0)})`
      : "-";
    const perCallCell = share !== undefined ? `${((share / applied) * 1000).toFixed(2)} ms/s` : "-";
    console.log(
      `| ${this.name} | ${level} | ${fmt(i.percentile(50))} | ${fmt(i.percentile(99))} | ${fmt(held.percentile(50))} / ${fmt(held.percentile(100))} | ${fmt(o.percentile(50))} | ${fmt(o.percentile(99))} | ${i.sent}/${i.arrived} | ${o.sent}/${o.arrived} | ${cpuCell} | ${perCallCell} | ${(busy * 100).toFixed(0)}% | ${ok ? "yes" : generatorShort ? "no (generator saturated: load not applied)" : "no"} |`,
    );
    if (cpuRamp) {
      if (ok && this.best === this.lossless) this.best = level;
      if (!intact) return void (this.done = true);
      const previous = levels.indexOf(level) > 0 ? levels[levels.indexOf(level) - 1] : 0;
      if (p99 < giveUpMs && !generatorShort && this.lossless === previous) this.lossless = level;
      return;
    }
    if (generatorShort) return void (this.done = true);
    if (ok && this.best === this.lossless) this.best = level;
    if (!intact || p99 >= giveUpMs) return void (this.done = true);
    this.lossless = level;
  }

  result(): RampResult {
    const { name, best, lossless } = this;
    // The CPU figure from the largest level that was not saturated (below 90% of a core).
    const unsaturated = this.cpuPerCall.filter((c) => c.share * c.calls < 0.9).at(-1);
    console.log(
      `${name} [${this.shape}]: largest call count meeting the criteria (every level up to it passed): ${best}${best === maxCalls ? ` (the most tried; --calls ${Math.min(maxCalls * 2, 2000)} tries more)` : ""}`,
    );
    console.log(
      `${name} [${this.shape}]: largest call count with no frame lost and p99 < ${giveUpMs} ms: ${lossless}`,
    );
    if (unsaturated)
      console.log(
        `${name} [${this.shape}]: CPU per call at ${unsaturated.calls} calls: ${(unsaturated.share * 1000).toFixed(2)} ms of CPU per second of call, so one core's CPU holds about ${Math.floor(1 / unsaturated.share)} calls (latency aside)`,
      );
    if (this.logged.size > 0)
      console.log(
        `${name} [${this.shape}]: stdout + stderr written during the windows: ${[...this.logged].map(([calls, rate]) => `${(rate / 1024).toFixed(1)} KB/s at ${calls} calls`).join(", ")}`,
      );
    return {
      relay: name,
      best,
      lossless,
      cpuPerCall: unsaturated,
      cpuByLevel: new Map(this.cpuPerCall.map((c) => [c.calls, c.share])),
    };
  }
}

function describeShape(shape: string): string {
  return shape === "worst"
    ? "50 frames/s each way per call"
    : `realistic: caller frames 50/s, assistant answering half of each 4 s in ${deltaMs} ms deltas`;
}

/**
 * Ramps several relays level by level, interleaved (A, B at 25 calls; B, A at 50; ...): a shared
 * machine's load then falls on all of them alike instead of on whichever ran while it was busy. A relay whose
 * load is not flowing holds its calls idle.
 */
async function rampInterleaved(
  targets: Array<{ target: BenchTarget; name: string }>,
  shape: string,
): Promise<RampResult[]> {
  console.log(
    `\n[${shape}] ${seconds} s window per level, ${describeShape(shape)}, criteria p99 < ${limitMs} ms both ways and no frame lost`,
  );
  for (const { target, name } of targets) console.log(`${name}: ${target.describe}`);
  console.log(HEADER);
  console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
  const ramps = targets.map(({ target, name }) => new Ramp(target, name, shape));
  for (const [i, level] of levels.entries()) {
    // The first relay measured after a level's calls are placed fares differently (an A/A run showed it):
    // the order rotates level by level, so no relay always goes first.
    const order = [...ramps.slice(i % ramps.length), ...ramps.slice(0, i % ramps.length)];
    for (const r of order) if (!r.done) await r.step(level);
    if (ramps.every((r) => r.done)) break;
  }
  return ramps.map((r) => r.result());
}

async function ramp(target: BenchTarget, name: string, shape = "worst"): Promise<RampResult> {
  return (await rampInterleaved([{ target, name }], shape))[0]!;
}

if (args.workers !== "") {
  // Calls per machine: the pool at each worker count, ramped in turn in the same run.
  const counts = args.workers.split(",").map((n) => num(n, "workers"));
  const pools: RampResult[] = [];
  for (const workers of counts) {
    const target = await poolTarget(workers);
    try {
      pools.push(await ramp(target, `${workers} worker${workers > 1 ? "s" : ""}`));
    } finally {
      await target.close();
    }
  }
  console.log("\n| workers | calls meeting the criteria | lossless to |\n|---|---|---|");
  for (const [i, r] of pools.entries()) console.log(`| ${counts[i]} | ${r.best} | ${r.lossless} |`);
  if (pools.length > 1 && pools[0]!.best > 0)
    console.log(
      `${counts.at(-1)} workers / ${counts[0]}: ${(pools.at(-1)!.best / pools[0]!.best).toFixed(2)}x calls`,
    );
  console.log(
    JSON.stringify({
      bench: "telephony-workers",
      levels: counts.map((w, i) => ({ workers: w, calls: pools[i]!.best, lossless: pools[i]!.lossless })),
    }),
  );
  process.exit(0);
}

const external = args.webhook !== undefined;
const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}x` : "-");
const summary: Record<string, unknown> = {};
for (const shape of shapeNames) {
  const relays: Array<{ relay: SpawnedRelay | undefined; name: string }> = [
    { relay: undefined, name: external ? "target" : "talkgate" },
  ];
  if (!external && args.baseline !== "")
    relays.push({
      relay: { checkout: args.baseline, nodeFlags: splitNodeFlags(args["baseline-node-flags"]) },
      name: "baseline",
    });
  if (!external && args.peer !== "no") relays.push({ relay: "peer", name: "peer" });
  if (!external && args["real-sample"] !== "")
    relays.push({ relay: { realSample: args["real-sample"] }, name: "real sample" });
  const targets: Array<{ target: BenchTarget; name: string }> = [];
  let results: RampResult[];
  try {
    for (const { relay, name } of relays)
      targets.push({ target: await benchTarget(args, relay, SHAPES[shape]), name });
    results = await rampInterleaved(targets, shape);
  } finally {
    for (const { target } of targets) await target.close();
  }
  const ours = results[0]!;
  summary[shape] = {
    calls: ours.best,
    lossless: ours.lossless,
    callsPerCore: ours.cpuPerCall ? Math.floor(1 / ours.cpuPerCall.share) : undefined,
    others: results.slice(1).map((r) => ({ relay: r.relay, calls: r.best, lossless: r.lossless })),
  };
  if (results.length === 1) continue;
  console.log(
    `\n[${shape}] | relay | calls meeting the criteria | lossless to | CPU per call | calls per core by CPU |`,
  );
  console.log("|---|---|---|---|---|");
  for (const r of results)
    console.log(
      `| ${r.relay} | ${r.best} | ${r.lossless} | ${r.cpuPerCall ? `${(r.cpuPerCall.share * 1000).toFixed(2)} ms/s at ${r.cpuPerCall.calls}` : "-"} | ${r.cpuPerCall ? Math.floor(1 / r.cpuPerCall.share) : "-"} |`,
    );
  // CPU per call falls as calls rise (more messages per wake-up), so relays are compared level by level.
  for (const other of results.slice(1)) {
    console.log(
      `[${shape}] talkgate / ${other.relay}: calls meeting the criteria ${ratio(ours.best, other.best)}`,
    );
    for (const [level, share] of ours.cpuByLevel) {
      const otherShare = other.cpuByLevel.get(level);
      if (otherShare !== undefined)
        console.log(
          `[${shape}] CPU per call at ${level} calls: talkgate ${(share * 1000).toFixed(2)} ms/s, ${other.relay} ${(otherShare * 1000).toFixed(2)} ms/s, talkgate / ${other.relay} ${ratio(share, otherShare)}`,
        );
    }
  }
  // How close the rebuilt peer comes to the sample it was built after.
  const peer = results.find((r) => r.relay === "peer");
  const real = results.find((r) => r.relay === "real sample");
  if (peer && real)
    for (const [level, share] of peer.cpuByLevel) {
      const realShare = real.cpuByLevel.get(level);
      if (realShare !== undefined)
        console.log(
          `[${shape}] CPU per call at ${level} calls: peer ${(share * 1000).toFixed(2)} ms/s, real sample ${(realShare * 1000).toFixed(2)} ms/s, peer / real sample ${ratio(share, realShare)}`,
        );
    }
}
console.log(JSON.stringify({ bench: "telephony-capacity", shapes: summary }));
process.exit(0);
