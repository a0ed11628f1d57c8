/**
 * Starts bench/lib/telephony-bench-server.ts in its own process, pinned to
 * CPU 0 with `taskset -c 0` when taskset exists (one core, as the capacity
 * figure is defined), with an IPC channel for memory readings.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { dirname, join } from "node:path";
import type { MemoryTrimStats } from "../../src/ops/native-memory.js";

export interface BenchServer {
  readonly child: ChildProcess;
  readonly port: number;
  /** The server's data directory (session logs in `<dataDir>/sessions`), when it reports one. */
  readonly dataDir: string | undefined;
  readonly pinned: boolean;
  /** The server's memoryUsage() after a full GC, and its session count. */
  memory(): Promise<{
    rss: number;
    heapUsed: number;
    /** V8's heap as reserved from the system (used + free space in its pages). */
    heapTotal: number;
    external: number;
    arrayBuffers: number;
    sessions: number;
    /** The server's malloc trims so far (runtime.mallocTrimIntervalMs), when it trims. */
    memoryTrim?: MemoryTrimStats;
  }>;
  close(): Promise<void>;
}

const SERVER = join(import.meta.dirname, "telephony-bench-server.ts");
/** The peer relay (Twilio's Node sample, rebuilt from its documented behaviour). */
export const PEER_RELAY = join(import.meta.dirname, "peer-relay-twilio-sample.ts");

export function hasTaskset(): boolean {
  return spawnSync("taskset", ["-c", "0", "true"]).status === 0;
}

export async function spawnTelephonyServer(
  providerPort: number,
  pin = true,
  dataDir?: string,
  script = SERVER,
  cpuProfDir?: string,
  extraArgs: readonly string[] = [],
): Promise<BenchServer> {
  const node = [
    process.execPath,
    "--expose-gc",
    // V8's sampling profile of the whole server, written to the directory when it exits (SIGTERM from close()).
    ...(cpuProfDir ? ["--cpu-prof", "--cpu-prof-dir", cpuProfDir] : []),
    "--import",
    "tsx",
    script,
    "--provider-port",
    String(providerPort),
    ...(dataDir ? ["--data-dir", dataDir] : []),
    ...extraArgs,
  ];
  const pinned = pin && hasTaskset();
  const [cmd, ...args] = pinned ? ["taskset", "-c", "0", ...node] : node;
  const child = spawn(cmd!, args, {
    stdio: ["ignore", "pipe", "inherit", "ipc"],
    // The checkout the script belongs to (its tsconfig and node_modules).
    cwd: join(dirname(script), "..", ".."),
  });
  const ready = await new Promise<{ port: number; dataDir?: string }>((resolve, reject) => {
    let buffer = "";
    child.stdout!.on("data", (d: Buffer) => {
      buffer += d.toString();
      const line = buffer.split("\n").find((l) => l.startsWith('{"ready"'));
      if (line) resolve(JSON.parse(line) as { port: number; dataDir?: string });
    });
    child.once("exit", (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  const { port } = ready;
  return {
    child,
    port,
    dataDir: ready.dataDir,
    pinned,
    memory: () =>
      new Promise((resolve) => {
        child.once("message", (m) => {
          const { mem, sessions, memoryTrim } = m as {
            mem: NodeJS.MemoryUsage;
            sessions: number;
            memoryTrim?: MemoryTrimStats;
          };
          resolve({
            rss: mem.rss,
            heapUsed: mem.heapUsed,
            heapTotal: mem.heapTotal,
            external: mem.external,
            arrayBuffers: mem.arrayBuffers,
            sessions,
            ...(memoryTrim ? { memoryTrim } : {}),
          });
        });
        child.send("mem");
      }),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}

/** Pins this process (the load generator) to CPU 1, away from the server, when taskset exists. */
export function pinSelfTo(cpu: number): boolean {
  return hasTaskset() && spawnSync("taskset", ["-cp", String(cpu), String(process.pid)]).status === 0;
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
