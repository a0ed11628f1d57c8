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
 */
import { performance } from "node:perf_hooks";
import { benchArgs, fmt, num, sleep } from "./lib/bench-args.js";
import { benchTarget, poolTarget, type BenchTarget, type SpawnedRelay } from "./lib/bench-target.js";
import { cpuSince, readProcessCpu } from "./lib/process-cpu.js";

const args = benchArgs({
  calls: "300",
  seconds: "5",
  "p99-ms": "10",
  "give-up-ms": "100",
  // The relay's process id when --webhook points at a server this bench did not start (for its CPU column).
  "target-pid": "0",
  // Also ramp the peer relay in the same run (only when this bench spawns the relays).
  peer: "yes",
  // Worker counts of `talkgate serve --workers N` to ramp instead (e.g. "1,2"); empty: the single pinned process.
  workers: "",
});
const maxCalls = num(args.calls, "calls");
const seconds = num(args.seconds, "seconds");
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

async function ramp(target: BenchTarget, name: string): Promise<RampResult> {
  const { load } = target;
  const pid = target.server?.child.pid ?? (Number(args["target-pid"]) || undefined);
  console.log(
    `\n${name}: ${target.describe}; ${seconds} s window per level, 50 frames/s each way per call, criteria p99 < ${limitMs} ms both ways and no frame lost`,
  );
  console.log(
    "| calls | in p50 | in p99 | out p50 | out p99 | frames in (sent/arrived) | frames out (sent/arrived) | relay CPU (user+sys) | relay CPU per call | generator busy | ok |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|---|");
  let best = 0;
  let lossless = 0;
  const cpuPerCall: Array<{ calls: number; share: number }> = [];
  for (const level of levels) {
    await load.addCalls(level - load.calls.length);
    load.flow(true, true);
    // Settle: the first level also warms the server up (lazy module loads and JIT of the relay path stall it once).
    await sleep(level === levels[0] ? 4000 : 1000);
    load.inbound.open();
    load.outbound.open();
    const elu0 = performance.eventLoopUtilization();
    const readCpu = target.readCpu ?? (() => (pid ? readProcessCpu(pid) : undefined));
    const cpu0 = readCpu();
    const t0 = performance.now();
    await sleep(seconds * 1000);
    const cpu = cpuSince(cpu0, readCpu());
    const wall = (performance.now() - t0) / 1000;
    load.inbound.close();
    load.outbound.close();
    const busy = performance.eventLoopUtilization(elu0).utilization;
    await sleep(1500); // frames of the window still in flight arrive; later ones do not count
    const i = load.inbound;
    const o = load.outbound;
    const intact = i.sent === i.arrived && o.sent === o.arrived && load.closedCalls === 0;
    // The generator has one core too: when it cannot send 50 frames/s per call, the level was not applied and
    // says nothing about the relay.
    const expected = level * 50 * wall;
    const generatorShort = Math.min(i.sent, o.sent) < 0.95 * expected;
    const p99 = Math.max(i.percentile(99), o.percentile(99));
    const ok = intact && !generatorShort && p99 < limitMs;
    const share = cpu ? (cpu.user + cpu.system) / wall : undefined;
    if (share !== undefined && !generatorShort) cpuPerCall.push({ calls: level, share: share / level });
    const cpuCell = cpu
      ? `${(share! * 100).toFixed(0)}% (${((cpu.user / wall) * 100).toFixed(0)}+${((cpu.system / wall) * 100).toFixed(0)})`
      : "-";
    const perCallCell = share !== undefined ? `${((share / level) * 1000).toFixed(2)} ms/s` : "-";
    console.log(
      `| ${level} | ${fmt(i.percentile(50))} | ${fmt(i.percentile(99))} | ${fmt(o.percentile(50))} | ${fmt(o.percentile(99))} | ${i.sent}/${i.arrived} | ${o.sent}/${o.arrived} | ${cpuCell} | ${perCallCell} | ${(busy * 100).toFixed(0)}% | ${ok ? "yes" : generatorShort ? "no (generator saturated: load not applied)" : "no"} |`,
    );
    if (generatorShort) break;
    if (ok && best === lossless) best = level;
    if (!intact || p99 >= giveUpMs) break;
    lossless = level;
  }
  load.flow(false, false);
  // The CPU figure from the largest level that was not saturated (below 90% of a core).
  const unsaturated = cpuPerCall.filter((c) => c.share * c.calls < 0.9).at(-1);
  console.log(
    `${name}: largest call count meeting the criteria (every level up to it passed): ${best}${best === maxCalls ? ` (the most tried; --calls ${Math.min(maxCalls * 2, 2000)} tries more)` : ""}`,
  );
  console.log(`${name}: largest call count with no frame lost and p99 < ${giveUpMs} ms: ${lossless}`);
  if (unsaturated)
    console.log(
      `${name}: CPU per call at ${unsaturated.calls} calls: ${(unsaturated.share * 1000).toFixed(2)} ms of CPU per second of call, so one core's CPU holds about ${Math.floor(1 / unsaturated.share)} calls (latency aside)`,
    );
  return {
    relay: name,
    best,
    lossless,
    cpuPerCall: unsaturated,
    cpuByLevel: new Map(cpuPerCall.map((c) => [c.calls, c.share])),
  };
}

async function measure(relay: SpawnedRelay | undefined, name: string): Promise<RampResult> {
  const target = await benchTarget(args, relay);
  try {
    return await ramp(target, name);
  } finally {
    await target.close();
  }
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
const ours = await measure(undefined, external ? "target" : "talkgate");
const results = [ours];
if (!external && args.peer !== "no") {
  const peer = await measure("peer", "peer (Twilio Node sample)");
  results.push(peer);
  const ratio = (a: number, b: number): string => (b > 0 ? `${(a / b).toFixed(2)}x` : "-");
  console.log(
    "\n| relay | calls meeting the criteria | lossless to | CPU per call | calls per core by CPU |",
  );
  console.log("|---|---|---|---|---|");
  for (const r of results)
    console.log(
      `| ${r.relay} | ${r.best} | ${r.lossless} | ${r.cpuPerCall ? `${(r.cpuPerCall.share * 1000).toFixed(2)} ms/s at ${r.cpuPerCall.calls}` : "-"} | ${r.cpuPerCall ? Math.floor(1 / r.cpuPerCall.share) : "-"} |`,
    );
  console.log(`talkgate / peer: calls meeting the criteria ${ratio(ours.best, peer.best)}`);
  // CPU per call falls as calls rise (more messages per wake-up), so the two are compared level by level.
  for (const [level, share] of ours.cpuByLevel) {
    const peerShare = peer.cpuByLevel.get(level);
    if (peerShare !== undefined)
      console.log(
        `CPU per call at ${level} calls: talkgate ${(share * 1000).toFixed(2)} ms/s, peer ${(peerShare * 1000).toFixed(2)} ms/s, talkgate / peer ${ratio(share, peerShare)}`,
      );
  }
}
console.log(
  JSON.stringify({
    bench: "telephony-capacity",
    calls: ours.best,
    lossless: ours.lossless,
    callsPerCore: ours.cpuPerCall ? Math.floor(1 / ours.cpuPerCall.share) : undefined,
    peer: results[1]
      ? {
          calls: results[1].best,
          lossless: results[1].lossless,
          callsPerCore: results[1].cpuPerCall ? Math.floor(1 / results[1].cpuPerCall.share) : undefined,
        }
      : undefined,
  }),
);
process.exit(0);
