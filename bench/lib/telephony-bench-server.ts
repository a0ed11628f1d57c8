/**
 * The talkgate server of the telephony benches, as its own process: the
 * whole app (createApp) on loopback in local demo mode (unsigned webhooks
 * from loopback), realtime calls relayed to the stand-in provider at
 * --provider-port, limits raised for thousands of calls, logs at warn.
 * Prints one JSON line `{"ready":true,"port":N,"dataDir":D}` when listening (session logs in D/sessions). Over IPC it
 * answers "mem" with process.memoryUsage() after a full GC (run it with
 * --expose-gc) and, when the app trims (runtime.mallocTrimIntervalMs), a trim, and "snapshot" with `{snapshot: PATH}` after writing a V8 heap
 * snapshot into the data directory (for finding what a soak's growth is made of).
 *
 *   node --expose-gc --import tsx bench/lib/telephony-bench-server.ts --provider-port 9000 [--data-dir /dev/shm] [--malloc-trim-ms N]
 */
// First, as in the server's entry (src/cli/main.ts): named closures without tsx's per-closure define.
import "../../src/cli/keep-names-fix.js";
import { parseArgs } from "node:util";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeHeapSnapshot } from "node:v8";
import { createApp } from "../../src/app.js";
import { validateConfig } from "../../src/config/load-config.js";
import { benchRelayConfig } from "./bench-relay-config.js";

const { values } = parseArgs({
  options: {
    "provider-port": { type: "string" },
    port: { type: "string", default: "0" },
    "data-dir": { type: "string", default: tmpdir() },
    // Events kept per session for replay (runtime.replayLimit; default the config's, 1,000).
    "replay-limit": { type: "string" },
    // runtime.mallocTrimIntervalMs (0: never trims); default the config's, 10 s.
    "malloc-trim-ms": { type: "string" },
    // ops.eventLoopSampleMs; default the config's, 10 ms (bench/idle-cpu.bench.ts).
    "event-loop-sample-ms": { type: "string" },
  },
});
const providerPort = Number(values["provider-port"]);
if (!Number.isInteger(providerPort) || providerPort <= 0) throw new Error("--provider-port N is required");

const dataDir = mkdtempSync(join(values["data-dir"], "talkgate-bench-"));
const loaded = validateConfig({
  server: { host: "127.0.0.1", port: Number(values.port) },
  // Every session event is one synchronous append to the session's JSONL log here (core's session log).
  dataDir,
  log: { level: "warn" },
  runtime: {
    maxSessions: 20_000,
    ...(values["replay-limit"] !== undefined ? { replayLimit: Number(values["replay-limit"]) } : {}),
    ...(values["malloc-trim-ms"] !== undefined
      ? { mallocTrimIntervalMs: Number(values["malloc-trim-ms"]) }
      : {}),
  },
  ...benchRelayConfig(providerPort),
  ...(values["event-loop-sample-ms"] !== undefined
    ? { ops: { eventLoopSampleMs: Number(values["event-loop-sample-ms"]) } }
    : {}),
});
const app = await createApp(loaded);
const { port } = await app.listen();
process.stdout.write(`${JSON.stringify({ ready: true, port, pid: process.pid, dataDir })}\n`);

process.on("message", (message) => {
  if (message === "snapshot") {
    (globalThis as { gc?: () => void }).gc?.();
    process.send?.({ snapshot: writeHeapSnapshot(join(dataDir, `heap-${Date.now()}.heapsnapshot`)) });
    return;
  }
  if (message !== "mem") return;
  (globalThis as { gc?: () => void }).gc?.();
  (globalThis as { gc?: () => void }).gc?.();
  // What the GC freed (V8 frees ArrayBuffer backing stores on a background thread, hence the pause) goes
  // back to the kernel as the server's own trimmer would give it back within its interval.
  setTimeout(() => {
    app.memoryTrimmer?.check();
    process.send?.({
      mem: process.memoryUsage(),
      sessions: app.runtime.sessionCount,
      memoryTrim: app.memoryTrimmer?.stats,
    });
  }, 250);
});
const stop = (): void => {
  void app.close().finally(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
process.on("disconnect", stop);
