/**
 * The private Redis of a `serve --workers N` pool that was given no
 * `redis.url`: the processes of one machine share sessions, stream-token
 * claims and jobs through Redis, so rather than refuse, the primary runs a
 * `redis-server` of its own (Debian's `redis-server` package, which
 * scripts/setup.sh installs; nothing is downloaded) for the pool's life.
 *
 * It listens on loopback only, on a port free when it starts, behind a random
 * password; its configuration is a file in a directory only this user can
 * read, so the password is not on a command line `ps` shows. Nothing is persisted (no RDB
 * snapshots, no append-only file): what it holds lives as long as the pool,
 * like the in-process coordinator of a single process. Why Redis itself and
 * not a coordinator relayed over the primary's IPC: the workers then run the
 * very cluster code (directory, claims, BullMQ jobs, pub/sub) a multi-machine
 * deployment runs, with nothing to reimplement for one machine.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { TalkError } from "../core/index.js";

export interface LocalRedisLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface LocalRedisOptions {
  logger: LocalRedisLogger;
  /** The server binary: a path, or a name looked up on PATH. Default "redis-server". */
  binary?: string;
  /** How long it may take to answer PING after it is spawned, ms. Default 10000. */
  startTimeoutMs?: number;
}

export interface LocalRedis {
  /** redis://:password@127.0.0.1:port, for the workers' `redis.url`. */
  readonly url: string;
  readonly pid: number;
  /** Settles when the server process exits, for whatever reason. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and removes its directory. Idempotent. */
  close(): Promise<void>;
}

/** Attempts at a free port: another process may take the one found before the server binds it. */
const PORT_ATTEMPTS = 3;
const STOP_GRACE_MS = 5000;

/** Starts the pool's private Redis; rejects with config_invalid when it cannot (the binary missing, say). */
export async function startLocalRedis(options: LocalRedisOptions): Promise<LocalRedis> {
  let lastError: unknown;
  for (let attempt = 1; attempt <= PORT_ATTEMPTS; attempt++) {
    try {
      return await startOnce(options, await freeLoopbackPort());
    } catch (err) {
      lastError = err;
      // A missing binary fails every attempt alike.
      if (err instanceof TalkError) throw err;
      options.logger.warn({ attempt, err: String(err) }, "the pool's private Redis did not start; retrying");
    }
  }
  throw refusal(`it did not start: ${String(lastError)}`, lastError);
}

/** config_invalid naming the keys: what the pool needed, why it could not have it, and the way out. */
function refusal(why: string, cause?: unknown): TalkError {
  return new TalkError(
    "config_invalid",
    `server.workers > 1 without redis.url runs a private redis-server for the pool, and ${why}. Or set redis.url to a Redis of your own.`,
    cause === undefined ? undefined : { cause },
  );
}

async function startOnce(options: LocalRedisOptions, port: number): Promise<LocalRedis> {
  const binary = options.binary ?? "redis-server";
  const password = randomBytes(24).toString("hex");
  // mkdtemp makes the directory 0700: the configuration file (and its password) is the user's alone.
  const dir = mkdtempSync(join(tmpdir(), "talkgate-pool-redis-"));
  const conf = join(dir, "redis.conf");
  writeFileSync(conf, configuration(port, password, dir), { mode: 0o600 });
  // Its own process group, so a terminal's Ctrl-C (which reaches the whole group) does not stop it
  // under the workers while they drain; and under a watchdog, so it does not outlive a primary that
  // was killed outright (SIGKILL, the OOM killer) and could not close it.
  const child = spawn("sh", ["-c", WATCHDOG, "talkgate-pool-redis", binary, conf, String(process.pid)], {
    cwd: dir,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  const keep = (d: Buffer): void => void (log = (log + d.toString()).slice(-2000));
  child.stdout!.on("data", keep);
  child.stderr!.on("data", keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const server: LocalRedis = {
    url: `redis://:${password}@127.0.0.1:${port}`,
    pid: child.pid ?? -1,
    exited,
    close: closer(child, exited, dir),
  };
  // Whichever settles first ends the other: a server that died is not polled on for the whole timeout.
  const settled = new AbortController();
  try {
    await Promise.race([
      exited.then(({ code, signal }) => {
        if (code === NOT_FOUND)
          throw refusal(
            `"${binary}" was not found (Debian: apt install redis-server, or bash scripts/setup.sh)`,
          );
        throw new Error(`redis-server exited (${signal ?? code}) before it answered: ${log.trim()}`);
      }),
      answers(port, password, options.startTimeoutMs ?? 10_000, settled.signal),
    ]);
  } catch (err) {
    await server.close();
    throw err;
  } finally {
    settled.abort();
  }
  options.logger.info({ port, pid: child.pid }, "the pool's private Redis is up (loopback, no persistence)");
  return server;
}

/** The watchdog's exit code when the binary is not there (the shell's own for "command not found"). */
const NOT_FOUND = 127;

/**
 * sh -c WATCHDOG name binary conf primaryPid: runs the server, stops it on SIGTERM / SIGINT, and stops it
 * when the primary is gone (polled each second). Exits when the server does, with its code.
 */
const WATCHDOG = [
  'command -v "$1" >/dev/null 2>&1 || exit 127',
  '"$1" "$2" &',
  "r=$!",
  "trap 'kill $r 2>/dev/null' TERM INT",
  'while kill -0 "$3" 2>/dev/null && kill -0 $r 2>/dev/null; do sleep 1; done',
  "kill $r 2>/dev/null",
  "wait $r",
].join("\n");

function configuration(port: number, password: string, dir: string): string {
  return [
    "bind 127.0.0.1",
    `port ${port}`,
    `requirepass ${password}`,
    "protected-mode yes",
    'save ""',
    "appendonly no",
    `dir "${dir}"`,
    "daemonize no",
    "loglevel warning",
    'logfile ""',
    "",
  ].join("\n");
}

function closer(child: ChildProcess, exited: Promise<unknown>, dir: string): () => Promise<void> {
  let closing: Promise<void> | undefined;
  // The watchdog leads its own process group: a signal to the group reaches the server too.
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  return () =>
    (closing ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        signalGroup("SIGTERM");
        const timer = setTimeout(() => signalGroup("SIGKILL"), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    })());
}

/** Resolves once the server answers an authenticated PING (or `stop` aborts); rejects after `timeoutMs`. */
async function answers(port: number, password: string, timeoutMs: number, stop: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!stop.aborted) {
    const probe = new Redis({
      host: "127.0.0.1",
      port,
      password,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      enableOfflineQueue: false,
      retryStrategy: () => null,
      connectTimeout: 1000,
    });
    probe.on("error", () => {});
    try {
      await probe.connect();
      if ((await probe.ping()) === "PONG") return;
    } catch {
      // not listening yet
    } finally {
      probe.disconnect();
    }
    if (Date.now() > deadline) throw new Error(`redis-server did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A loopback port nothing listens on now. */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}
