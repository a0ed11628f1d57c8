/**
 * The four carriers side by side in one run: for each, a fresh server
 * process (pinned to CPU 0, local demo mode, realtime calls relayed to the
 * stand-in provider) carries --calls concurrent realtime calls placed through
 * that carrier's answer webhook and stream (bench/lib/carrier-load-calls.ts),
 * 20 ms frames both ways at 50 frames/s. After a settle period, one window of
 * --seconds measures the relay's CPU per call (share of a core, from
 * /proc/<pid>/stat), p99 added latency both ways (frame in -> provider,
 * provider -> frame out) and frames lost, and prints each carrier's CPU per
 * call relative to Twilio's.
 *
 * Provider format: the stand-in is OpenAI-compatible, so Twilio, Telnyx and
 * Plivo pass u-law through (audio/pcmu both ways) and Vonage's L16 16 kHz is
 * resampled to OpenAI's 24 kHz PCM and back (core picks the provider's PCM
 * for a PCM line). A Vonage call to a provider declaring u-law only is not
 * measured: core's relay converts PCM to PCM only (PcmConverter refuses
 * pcm16 -> g711_ulaw, so such a call's session does not start);
 * bench/telephony-carrier-line.bench.ts has that conversion's codec cost.
 *
 *   npm run bench:carriers -- [--calls 100] [--seconds 10] [--settle-seconds 4] [--carriers twilio,vonage] [--pin no]
 */
import { benchArgs, fmt, num, sleep } from "./lib/bench-args.js";
import { CARRIERS, CarrierLoad, type CarrierName } from "./lib/carrier-load-calls.js";
import { cpuSince, readProcessCpu } from "./lib/process-cpu.js";
import { freePort, spawnTelephonyServer } from "./lib/spawn-telephony-server.js";

const args = benchArgs({
  calls: "100",
  seconds: "10",
  "settle-seconds": "4",
  carriers: CARRIERS.join(","),
});
const calls = num(args.calls, "calls");
const seconds = num(args.seconds, "seconds");
const settle = num(args["settle-seconds"], "settle-seconds");
const carriers = args.carriers.split(",").map((c) => c.trim()) as CarrierName[];
for (const c of carriers)
  if (!CARRIERS.includes(c))
    throw new Error(`--carriers: unknown carrier ${c} (known: ${CARRIERS.join(", ")})`);
if (args.webhook !== undefined)
  throw new Error("--webhook is not supported here: this bench spawns its servers");

const PROVIDER: Record<CarrierName, string> = {
  twilio: "u-law passthrough",
  telnyx: "u-law passthrough",
  plivo: "u-law passthrough",
  vonage: "L16 16k <-> PCM 24k (resampled)",
};

interface Row {
  carrier: CarrierName;
  calls: number;
  /** Share of one core per call (user + system), undefined without /proc. */
  share: number | undefined;
  /**
   * CPU seconds per call-second of the load actually applied (frames sent both ways / 100): the same as `share`
   * when the generator keeps up, and still comparable between carriers when a loaded machine starves it.
   */
  perApplied: number | undefined;
  user: number;
  system: number;
  inP50: number;
  inP99: number;
  outP50: number;
  outP99: number;
  inSent: number;
  inArrived: number;
  outSent: number;
  outArrived: number;
  closed: number;
  generatorShort: boolean;
}

async function measure(carrier: CarrierName): Promise<Row> {
  const providerPort = await freePort();
  const server = await spawnTelephonyServer(providerPort, args.pin !== "no");
  const load = new CarrierLoad({ carrier, baseUrl: `http://127.0.0.1:${server.port}`, providerPort });
  try {
    await load.start();
    await load.addCalls(calls);
    load.flow(true, true);
    // Settle: warms the server up (lazy module loads and JIT of the relay path stall it once).
    await sleep(settle * 1000);
    const pid = server.child.pid!;
    load.inbound.open();
    load.outbound.open();
    const cpu0 = readProcessCpu(pid);
    const t0 = performance.now();
    await sleep(seconds * 1000);
    const cpu = cpuSince(cpu0, readProcessCpu(pid));
    const wall = (performance.now() - t0) / 1000;
    load.inbound.close();
    load.outbound.close();
    // Frames of the window still in flight arrive (the counts stop moving, at most 5 s); later ones count as lost.
    for (let last = -1, waited = 0; waited < 5000; waited += 250) {
      const arrived = load.inbound.arrived + load.outbound.arrived;
      if (arrived === last) break;
      last = arrived;
      await sleep(250);
    }
    load.flow(false, false);
    const formats = load.provider.connections[0];
    if (formats)
      console.log(
        `${carrier}: provider audio ${formats.inBytesPerMs} bytes/ms in, ${formats.outBytesPerMs} out`,
      );
    const i = load.inbound;
    const o = load.outbound;
    return {
      carrier,
      calls,
      share: cpu ? (cpu.user + cpu.system) / wall / calls : undefined,
      perApplied:
        cpu && i.sent + o.sent > 0 ? (cpu.user + cpu.system) / ((i.sent + o.sent) / 100) : undefined,
      user: cpu ? cpu.user / wall : NaN,
      system: cpu ? cpu.system / wall : NaN,
      inP50: i.percentile(50),
      inP99: i.percentile(99),
      outP50: o.percentile(50),
      outP99: o.percentile(99),
      inSent: i.sent,
      inArrived: i.arrived,
      outSent: o.sent,
      outArrived: o.arrived,
      closed: load.closedCalls,
      // The generator has a core too: when it cannot send 50 frames/s per call, the load was not applied.
      generatorShort: Math.min(i.sent, o.sent) < 0.95 * calls * 50 * wall,
    };
  } finally {
    await load.close();
    await server.close();
  }
}

console.log(
  `${calls} concurrent realtime calls per carrier, 50 frames/s each way per call, ${settle} s settle then a ${seconds} s window; each carrier in a fresh server process${args.pin !== "no" ? " pinned to CPU 0 (when taskset exists)" : ""}`,
);
const rows: Row[] = [];
for (const carrier of carriers) {
  const row = await measure(carrier);
  rows.push(row);
  console.log(
    `${carrier}: CPU ${row.share !== undefined ? `${((row.user + row.system) * 100).toFixed(0)}% of a core (user ${(row.user * 100).toFixed(0)}%, sys ${(row.system * 100).toFixed(0)}%)` : "-"}, in ${row.inArrived}/${row.inSent}, out ${row.outArrived}/${row.outSent}, calls closed ${row.closed}${row.generatorShort ? ", generator saturated: load not applied in full" : ""}`,
  );
}

const twilio = rows.find((r) => r.carrier === "twilio");
const ratio = (a: number | undefined, b: number | undefined): string =>
  a !== undefined && b ? `${(a / b).toFixed(2)}x` : "-";
const cell = (share: number | undefined): string =>
  share === undefined ? "-" : `${(share * 1000).toFixed(2)} ms/s (${(share * 100).toFixed(2)}%)`;
const lost = (r: Row): string => {
  const n = r.inSent - r.inArrived + (r.outSent - r.outArrived);
  const total = r.inSent + r.outSent;
  return `${n} of ${total}${r.closed > 0 ? `, ${r.closed} calls dropped` : ""}`;
};
console.log(
  "\n| carrier | provider audio | calls | CPU per call (ms of CPU per call-second, share of a core) | vs Twilio | CPU per applied call-second | vs Twilio | p99 in (p50) | p99 out (p50) | frames lost |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|");
for (const r of rows)
  console.log(
    `| ${r.carrier} | ${PROVIDER[r.carrier]} | ${r.calls}${r.generatorShort ? " (generator short)" : ""} | ${cell(r.share)} | ${ratio(r.share, twilio?.share)} | ${r.perApplied !== undefined ? `${(r.perApplied * 1000).toFixed(2)} ms` : "-"} | ${ratio(r.perApplied, twilio?.perApplied)} | ${fmt(r.inP99)} ms (${fmt(r.inP50)}) | ${fmt(r.outP99)} ms (${fmt(r.outP50)}) | ${lost(r)} |`,
  );
console.log(
  JSON.stringify({
    bench: "telephony-carriers",
    calls,
    carriers: Object.fromEntries(
      rows.map((r) => [
        r.carrier,
        {
          cpuPerCallMsPerS: r.share !== undefined ? Number((r.share * 1000).toFixed(3)) : undefined,
          vsTwilio:
            twilio?.share && r.share !== undefined ? Number((r.share / twilio.share).toFixed(3)) : undefined,
          cpuPerAppliedCallSecondMs:
            r.perApplied !== undefined ? Number((r.perApplied * 1000).toFixed(3)) : undefined,
          generatorShort: r.generatorShort,
          inP99Ms: Number(r.inP99.toFixed(2)),
          outP99Ms: Number(r.outP99.toFixed(2)),
          lost: r.inSent - r.inArrived + (r.outSent - r.outArrived),
        },
      ]),
    ),
  }),
);
process.exit(0);
