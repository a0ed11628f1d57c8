/**
 * Memory per call: the server's RSS and V8 heap (after a full GC) with N
 * realtime calls held (stream socket, session, provider socket, playout),
 * after they streamed audio both ways, minus the same readings with one
 * call; and the idle server before any call (RSS split into anonymous memory,
 * the process's own, and file-backed pages: the node binary and libraries,
 * shared with every other node process). Goal (issue 19): <= 100 KB RSS per
 * held call at 1,000 calls.
 *
 * The peer relay (Twilio's Node sample, bench/lib/peer-relay-twilio-sample.ts)
 * is measured the same way in the same run, read from /proc (it takes no
 * IPC, so no forced GC: its heap figures are not comparable, its RSS is).
 *
 *   node --import tsx bench/telephony-memory.bench.ts [--calls 1000] [--flow-seconds 3] [--settle-seconds 12] [--peer no] [--malloc-trim-ms N]
 */
import { readFileSync } from "node:fs";
import { benchArgs, num, sleep } from "./lib/bench-args.js";
import { benchTarget, type SpawnedRelay } from "./lib/bench-target.js";

const args = benchArgs({
  calls: "1000",
  "flow-seconds": "3",
  "settle-seconds": "12",
  peer: "yes",
  // talkgate's runtime.mallocTrimIntervalMs; "": the config's default (10 s), 0: no trims.
  "malloc-trim-ms": "",
});
const calls = num(args.calls, "calls");
const flowMs = num(args["flow-seconds"], "flow-seconds") * 1000;
// After the flow: how long the calls sit quiet before each reading. The default outlasts the server's
// malloc trim interval (runtime.mallocTrimIntervalMs, 10 s): a server holding calls has trimmed by then,
// and the reading is what the calls hold, not the free memory glibc kept from the flow.
const settleMs = num(args["settle-seconds"], "settle-seconds") * 1000;
const kb = (bytes: number): string => `${(bytes / 1024).toFixed(1)} KB`;
const mb = (bytes: number): string => `${(bytes / 1048576).toFixed(1)} MB`;

interface Reading {
  rss: number;
  anon: number;
  file: number;
  heapUsed?: number;
  heapTotal?: number;
  external?: number;
  sessions?: number;
  memoryTrim?: { trims: number; releasedBytes: number; trimMs: number };
}

/** RSS of a process from /proc/<pid>/status: anonymous and file-backed pages, bytes. */
function procRss(pid: number): Reading {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string): number =>
    Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: field("VmRSS"), anon: field("RssAnon"), file: field("RssFile") + field("RssShmem") };
}

async function measure(
  relay: SpawnedRelay,
  name: string,
): Promise<{ idle: Reading; base: Reading; held: Reading }> {
  const target = await benchTarget(args, relay);
  const { load, server } = target;
  if (!server) throw new Error("the memory bench reads the server's own memory: run it without --webhook");
  const pid = server.child.pid!;
  // talkgate answers with memoryUsage() after a full GC; the peer is read from /proc as it is.
  const read = async (): Promise<Reading> => {
    if (relay === "peer") return procRss(pid);
    const m = await server.memory();
    return {
      ...procRss(pid),
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      sessions: m.sessions,
      ...(m.memoryTrim ? { memoryTrim: m.memoryTrim } : {}),
    };
  };
  try {
    await sleep(1000);
    const idle = await read();
    // One call first, so modules, JIT code and pools that any call needs are in the baseline.
    await load.addCalls(1);
    load.flow(true, true);
    await sleep(flowMs);
    // Every answer ends as a provider ends one: held calls are quiet calls. (Stopping the provider's audio
    // mid-answer instead made every call a provider stall, over and over: each played the fault apology,
    // 4 s sent at once, and reconnected, so the reading caught apology audio in flight in every call.)
    load.pause();
    await sleep(settleMs);
    const base = await read();
    await load.addCalls(calls - 1);
    load.flow(true, true);
    await sleep(flowMs);
    load.pause();
    await sleep(settleMs);
    const held = await read();
    console.log(
      `\n${name}: ${target.describe}; ${calls} calls held, audio streamed both ways for ${flowMs / 1000} s then paused ${settleMs / 1000} s`,
    );
    console.log(`| figure | idle | 1 call | ${calls} calls | per added call |`);
    console.log("|---|---|---|---|---|");
    const n = calls - 1;
    const row = (label: string, k: Exclude<keyof Reading, "memoryTrim">, unit = kb): void => {
      const [i, b, h] = [idle[k], base[k], held[k]];
      if (i === undefined || b === undefined || h === undefined) return;
      console.log(`| ${label} | ${mb(i)} | ${mb(b)} | ${mb(h)} | ${unit((h - b) / n)} |`);
    };
    row("RSS", "rss");
    row("RSS, anonymous (the process's own)", "anon");
    row("RSS, file-backed (node binary, libraries: shared)", "file");
    row("V8 heap used (after a full GC)", "heapUsed");
    row("V8 heap reserved (used + free space in its pages)", "heapTotal");
    row("external (Buffers, wasm)", "external");
    if (held.memoryTrim)
      console.log(
        `| malloc trims (runtime.mallocTrimIntervalMs) | ${idle.memoryTrim?.trims ?? 0} | ${base.memoryTrim?.trims ?? 0} | ${held.memoryTrim.trims}, ${mb(held.memoryTrim.releasedBytes)} given back in ${held.memoryTrim.trimMs.toFixed(1)} ms | |`,
      );
    if (held.sessions !== undefined)
      console.log(`| sessions on the server | ${idle.sessions} | ${base.sessions} | ${held.sessions} | |`);
    return { idle, base, held };
  } finally {
    await target.close();
  }
}

const ours = await measure("talkgate", "talkgate");
const perCall = (r: { base: Reading; held: Reading }): number => (r.held.rss - r.base.rss) / (calls - 1);
const summary: Record<string, unknown> = {
  bench: "telephony-memory",
  calls,
  rssPerCall: perCall(ours),
  heapPerCall: (ours.held.heapUsed! - ours.base.heapUsed!) / (calls - 1),
  idleRss: ours.idle.rss,
  idleAnon: ours.idle.anon,
};
if (args.peer !== "no") {
  const peer = await measure("peer", "peer (Twilio Node sample)");
  console.log(
    `\ntalkgate / peer: RSS per added call ${(perCall(ours) / perCall(peer)).toFixed(2)}x (${kb(perCall(ours))} vs ${kb(perCall(peer))}), idle RSS ${mb(ours.idle.rss)} vs ${mb(peer.idle.rss)} (anonymous ${mb(ours.idle.anon)} vs ${mb(peer.idle.anon)})`,
  );
  summary.peer = { rssPerCall: perCall(peer), idleRss: peer.idle.rss, idleAnon: peer.idle.anon };
}
console.log(JSON.stringify(summary));
process.exit(0);
