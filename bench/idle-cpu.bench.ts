/**
 * What an idle relay costs: CPU per second of a server holding no call, per
 * thread, after it has settled (startup's compilation and the memory
 * reducer's collections are over by about 25 s). Talkgate's bench server (the
 * whole app as the capacity bench runs it) at several `ops.eventLoopSampleMs`,
 * and the sample-shaped peer relay beside it, each pinned to CPU 0 in turn.
 * An idle worker's CPU is what a fleet of idle workers burns, and at low call
 * counts it is part of the capacity bench's CPU per call.
 *
 *   node --import tsx bench/idle-cpu.bench.ts [--warmup-seconds 40] [--seconds 30] [--samples-ms 10,50]
 *     [--peer yes]
 *
 * Linux only (/proc/<pid>/task/<tid>/stat); resolution one clock tick (10 ms) over the window.
 */
import { readdirSync, readFileSync } from "node:fs";
import { benchArgs, num, sleep } from "./lib/bench-args.js";
import { PEER_RELAY, spawnTelephonyServer } from "./lib/spawn-telephony-server.js";

const args = benchArgs({ "warmup-seconds": "40", seconds: "30", "samples-ms": "10,50", peer: "yes" });
const warmupS = num(args["warmup-seconds"], "warmup-seconds");
const seconds = num(args.seconds, "seconds");
const samples = args["samples-ms"].split(",").map((v) => Math.trunc(num(v, "samples-ms")));
if (args.peer !== "yes" && args.peer !== "no") throw new Error("--peer must be yes or no");

/** Clock ticks of CPU per thread of `pid` so far, by thread id and name. */
function threadTicks(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
    } catch {
      continue; // the thread ended between the listing and the read
    }
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    out.set(`${tid} ${name}`, Number(fields[11]) + Number(fields[12]));
  }
  return out;
}

interface IdleFigure {
  relay: string;
  mainMsPerS: number;
  otherMsPerS: number;
  threads: number;
}

async function measure(relay: string, script: string | undefined, extraArgs: string[]): Promise<IdleFigure> {
  // The provider port is never dialled: no call is placed.
  const server = await spawnTelephonyServer(9, true, undefined, script, undefined, extraArgs);
  try {
    const pid = server.child.pid!;
    await sleep(warmupS * 1000);
    const before = threadTicks(pid);
    const started = performance.now();
    await sleep(seconds * 1000);
    const after = threadTicks(pid);
    const wallS = (performance.now() - started) / 1000;
    const tickMs = 10; // CLK_TCK 100 on Linux
    let main = 0;
    let other = 0;
    for (const [key, ticks] of after) {
      const used = ((ticks - (before.get(key) ?? 0)) * tickMs) / wallS;
      if (key.startsWith(`${pid} `)) main += used;
      else other += used;
    }
    return { relay, mainMsPerS: main, otherMsPerS: other, threads: after.size };
  } finally {
    await server.close();
  }
}

const figures: IdleFigure[] = [];
for (const sampleMs of samples) {
  const relay = `talkgate, ops.eventLoopSampleMs ${sampleMs}`;
  figures.push(await measure(relay, undefined, ["--event-loop-sample-ms", String(sampleMs)]));
  console.log(`measured ${relay}`);
}
if (args.peer === "yes") figures.push(await measure("peer (sample-shaped relay)", PEER_RELAY, []));

console.log(
  `\nidle CPU after ${warmupS} s, over ${seconds} s, ms of CPU per second (pinned to CPU 0; one 10 ms clock tick is ${(10 / seconds).toFixed(2)} ms/s here)\n`,
);
console.log("| relay | main thread | other threads | total | threads |");
console.log("|---|---|---|---|---|");
for (const f of figures)
  console.log(
    `| ${f.relay} | ${f.mainMsPerS.toFixed(2)} | ${f.otherMsPerS.toFixed(2)} | ${(f.mainMsPerS + f.otherMsPerS).toFixed(2)} | ${f.threads} |`,
  );
console.log(JSON.stringify({ bench: "idle-cpu", figures }));
