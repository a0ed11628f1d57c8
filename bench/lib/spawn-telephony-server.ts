/**
 * Starts bench/lib/telephony-bench-server.ts in its own process, pinned to
 * CPU 0 with `taskset -c 0` when taskset exists (one core, as the capacity
 * figure is defined), with an IPC channel for memory readings. Also starts
 * Twilio's published Node sample, unmodified, from a directory the user
 * prepared (spawnRealSample).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { MemoryTrimStats } from "../../src/ops/native-memory.js";
import { readProcessCpu, readThreadCpu, type CpuReading } from "./process-cpu.js";

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
  /** Bytes the server has written to stdout and stderr so far, for a server whose output the bench drains. */
  loggedBytes?(): number;
  /** The server's CPU so far, when it is not simply its process's (default: readProcessCpu of its pid). */
  readCpu?(): CpuReading | undefined;
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
  /** Flags for node and V8 themselves (e.g. --single-threaded-gc), which NODE_OPTIONS does not take. */
  nodeFlags: readonly string[] = [],
): Promise<BenchServer> {
  const node = [
    process.execPath,
    "--expose-gc",
    ...nodeFlags,
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
  const { cmd, args, pinned } = onCpu0(node, pin);
  const child = spawn(cmd, args, {
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
    close: () => stop(child),
  };
}

/** `argv` under `taskset -c 0` when pinning is asked for and taskset exists. */
function onCpu0(argv: readonly string[], pin: boolean): { cmd: string; args: string[]; pinned: boolean } {
  const pinned = pin && hasTaskset();
  const [cmd, ...args] = pinned ? ["taskset", "-c", "0", ...argv] : argv;
  return { cmd: cmd!, args, pinned };
}

/** SIGTERM, then SIGKILL if the process has not exited 5 s later. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once("exit", r));
  child.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

/** The preload that points the real sample's hard-coded provider URL at the stand-in (see the file). */
const REAL_SAMPLE_REDIRECT = join(import.meta.dirname, "real-sample-redirect.mjs");

/**
 * Checks that `dir` is a prepared checkout of Twilio's Node sample ("speech-assistant-openai-realtime-api-node":
 * cloned, `npm install` done in it) and returns its index.js; throws saying what to do otherwise.
 */
export function realSampleIndex(dir: string): string {
  const prepare =
    "--real-sample DIR takes a checkout of twilio-samples/speech-assistant-openai-realtime-api-node with `npm install` done in it (clone the repository, then run `npm install` inside it)";
  const root = resolve(dir);
  const index = join(root, "index.js");
  if (!existsSync(index)) throw new Error(`${prepare}: ${index} does not exist`);
  if (!existsSync(join(root, "node_modules", "ws", "package.json")))
    throw new Error(
      `${prepare}: ${join(root, "node_modules", "ws")} is missing (run \`npm install\` in ${dir})`,
    );
  const pkgFile = join(root, "package.json");
  if (!existsSync(pkgFile)) throw new Error(`${prepare}: ${pkgFile} does not exist`);
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8")) as {
    dependencies?: Record<string, string>;
  };
  for (const name of Object.keys(pkg.dependencies ?? {}))
    if (!existsSync(join(root, "node_modules", name, "package.json")))
      throw new Error(`${prepare}: its dependency ${name} is not installed (run \`npm install\` in ${dir})`);
  return index;
}

/**
 * Twilio's published Node sample, unmodified: `node DIR/index.js` (no tsx, no --expose-gc: as it runs in
 * production) on a free PORT, pinned to CPU 0 like the other relays, its `ws` import redirected to the stand-in
 * provider on `providerPort` by real-sample-redirect.mjs. OPENAI_API_KEY=sk-bench (it refuses to start without a
 * key; the stand-in ignores it; the environment wins over a .env in DIR). Its stdout and stderr (a console.log of
 * most provider events, with the whole event object) go to pipes this process drains, as production stdout goes
 * to a log collector's pipe: the sample pays for its logging as it would there. Ready when it logs
 * "Server is listening on port N"; memory() is not available (no IPC channel: the sample has none).
 */
export async function spawnRealSample(
  dir: string,
  providerPort: number,
  pin = true,
  cpuProfDir?: string,
): Promise<BenchServer> {
  const index = realSampleIndex(dir);
  const port = await freePort();
  const node = [
    process.execPath,
    ...(cpuProfDir ? ["--cpu-prof", "--cpu-prof-dir", cpuProfDir] : []),
    "--import",
    pathToFileURL(REAL_SAMPLE_REDIRECT).href,
    index,
  ];
  const { cmd, args, pinned } = onCpu0(node, pin);
  const child = spawn(cmd, args, {
    stdio: ["ignore", "pipe", "pipe"],
    cwd: dirname(index),
    env: {
      ...process.env,
      PORT: String(port),
      OPENAI_API_KEY: "sk-bench",
      TALKGATE_BENCH_PROVIDER_PORT: String(providerPort),
    },
  });
  let logged = 0;
  let stderrTail = "";
  child.stderr!.on("data", (d: Buffer) => {
    logged += d.length;
    stderrTail = (stderrTail + d.toString()).slice(-2000);
  });
  let loaderTid = 0;
  const ready = new Promise<void>((resolveReady, reject) => {
    let head = "";
    const onData = (d: Buffer): void => {
      logged += d.length;
      head += d.toString();
      if (!head.includes(`Server is listening on port ${port}`)) return;
      // The redirect announces itself on import, before the sample listens (same pipe, so in order).
      if (!head.includes("[talkgate bench] ws redirected:"))
        return reject(
          new Error("the real sample started without the provider redirect (does it still import ws?)"),
        );
      // The loader thread's id comes by message from that thread: usually before the listening line, not surely.
      const tid = /\[talkgate bench\] loader thread (\d+)\n/.exec(head);
      if (!tid) return;
      loaderTid = Number(tid[1]);
      // From here the output is only counted and dropped: the pipe stays drained.
      child.stdout!.off("data", onData);
      child.stdout!.on("data", (chunk: Buffer) => void (logged += chunk.length));
      resolveReady();
    };
    child.stdout!.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`the real sample exited with ${code} before listening: ${stderrTail.trim()}`)),
    );
  });
  try {
    await ready;
  } catch (err) {
    await stop(child);
    throw err;
  }
  return {
    child,
    port,
    dataDir: undefined,
    pinned,
    memory: () => Promise.reject(new Error("memory readings are not available for the real sample")),
    loggedBytes: () => logged,
    // The process's CPU less the bench's loader thread (real-sample-redirect.mjs), which production does not have.
    readCpu: () => {
      const all = readProcessCpu(child.pid!);
      const loader = loaderTid ? readThreadCpu(child.pid!, loaderTid) : { user: 0, system: 0 };
      return all && loader ? { user: all.user - loader.user, system: all.system - loader.system } : undefined;
    },
    close: () => stop(child),
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
