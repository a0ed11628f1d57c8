/**
 * Memory per call: the server's RSS and V8 heap (after a full GC) with N
 * realtime calls held (stream socket, session, provider socket, playout),
 * after they streamed audio both ways, minus the same readings with one
 * call. Goal: under 200 KB per call at 1,000 calls.
 *
 *   node --import tsx bench/telephony-memory.bench.ts [--calls 1000] [--flow-seconds 3]
 */
import { benchArgs, num, sleep } from "./lib/bench-args.js";
import { benchTarget } from "./lib/bench-target.js";

const args = benchArgs({ calls: "1000", "flow-seconds": "3" });
const calls = num(args.calls, "calls");
const flowMs = num(args["flow-seconds"], "flow-seconds") * 1000;
const target = await benchTarget(args);
const { load, server } = target;
if (!server) throw new Error("the memory bench reads the server's own memory: run it without --webhook");
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
try {
  // One call first, so modules, JIT code and pools that any call needs are in the baseline.
  await load.addCalls(1);
  load.flow(true, true);
  await sleep(flowMs);
  load.flow(false, false);
  await sleep(1000);
  const base = await server.memory();
  await load.addCalls(calls - 1);
  load.flow(true, true);
  await sleep(flowMs);
  load.flow(false, false);
  await sleep(2000);
  const held = await server.memory();
  const n = calls - 1;
  console.log(
    `telephony memory: ${target.describe}; ${calls} calls held, audio streamed both ways for ${flowMs / 1000} s then paused, readings after a full GC`,
  );
  console.log("| figure | 1 call | " + calls + " calls | per added call |");
  console.log("|---|---|---|---|");
  console.log(`| RSS | ${kb(base.rss)} | ${kb(held.rss)} | ${kb((held.rss - base.rss) / n)} |`);
  console.log(
    `| V8 heap used | ${kb(base.heapUsed)} | ${kb(held.heapUsed)} | ${kb((held.heapUsed - base.heapUsed) / n)} |`,
  );
  console.log(
    `| external (Buffers, wasm) | ${kb(base.external)} | ${kb(held.external)} | ${kb((held.external - base.external) / n)} |`,
  );
  console.log(`| sessions on the server | ${base.sessions} | ${held.sessions} | |`);
  console.log(
    JSON.stringify({
      bench: "telephony-memory",
      calls,
      rssPerCall: (held.rss - base.rss) / n,
      heapPerCall: (held.heapUsed - base.heapUsed) / n,
    }),
  );
} finally {
  await target.close();
}
process.exit(0);
