/**
 * `talkgate serve --workers N` as the telephony benches' target: the real
 * CLI, N server processes sharing one port through node:cluster over the
 * shared Redis, configured like telephony-bench-server.ts (local demo mode,
 * realtime calls relayed to the load generator's provider stand-in, limits
 * raised, logs at error). Not pinned: the pool is meant to use every core.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./spawn-telephony-server.js";
import { benchRelayConfig } from "./bench-relay-config.js";

export interface ServePool {
  readonly child: ChildProcess;
  readonly port: number;
  close(): Promise<void>;
}

const ROOT = join(import.meta.dirname, "..", "..");

export async function spawnServePool(
  workers: number,
  providerPort: number,
  redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
): Promise<ServePool> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "talkgate-pool-bench-"));
  const config = join(dir, "config.json");
  writeFileSync(
    config,
    JSON.stringify({
      server: { host: "127.0.0.1", port, workers },
      redis: { url: redisUrl, keyPrefix: `talkgate-bench-${process.pid}-${workers}:` },
      dataDir: join(dir, "data"),
      // Error only: the teardown (the generator's provider stand-in goes first) would log every call's reconnect.
      log: { level: "error" },
      runtime: { maxSessions: 20_000 },
      ...benchRelayConfig(providerPort),
    }),
  );
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "serve", "--config", config], {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  // Ready when the machine's /metrics names every worker.
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null)
      throw new Error(`talkgate serve --workers ${workers} exited with ${child.exitCode}`);
    if (Date.now() > deadline) throw new Error(`talkgate serve --workers ${workers}: not ready in 120 s`);
    const text = await fetch(`http://127.0.0.1:${port}/metrics`)
      .then((r) => (r.ok ? r.text() : ""))
      .catch(() => "");
    if ((text.match(/^talkgate_worker_info\{/gm) ?? []).length === workers) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    child,
    port,
    close: async () => {
      if (child.exitCode !== null) return;
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}
