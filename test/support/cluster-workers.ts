import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TalkClient } from "../../src/client/talk-client.js";
import { childEntryArgs } from "./child-bundle.js";

/**
 * Real talkgate worker processes for the cluster e2e tests: each runs
 * test/support/cluster-server.ts (the production serve path) with its own
 * config file, on 127.0.0.1 with PORT=0, sharing one Redis under a key prefix
 * unique to the test run.
 */

/** Its bundle, built once per test run (child-bundle.ts). */
const ENTRY = childEntryArgs("cluster-server");

export interface WorkerSpec {
  workerId: string;
  redisUrl: string;
  keyPrefix: string;
  roles?: string[];
  leaseTtlSec?: number;
  drainTimeoutMs?: number;
  /** config `cluster.jobs` (retries, stalled-job rules). */
  jobs?: Record<string, unknown>;
  /** config `runtime.maxSessions`. */
  maxSessions?: number;
  /** "slow": the agent hangs until aborted (probe lines); default: the local agent answers. */
  agent?: "slow" | "local";
  /** "telephony": outbound-call jobs run telephony's own handler (real dials); default: the probe handler. */
  outboundCalls?: "probe" | "telephony";
  /** More top-level config (e.g. `server.publicUrl`, `auth`, `telephony` for real outbound calls). */
  config?: Record<string, unknown>;
}

export type LogLine = Record<string, unknown> & { msg?: string; probe?: string };

export class WorkerProcess {
  readonly spec: WorkerSpec;
  readonly child: ChildProcessWithoutNullStreams;
  readonly lines: LogLine[] = [];
  readonly exited: Promise<number | null>;
  talkUrl = "";
  httpUrl = "";
  #waiters: { match: (l: LogLine) => boolean; resolve: (l: LogLine) => void }[] = [];
  readonly #dir: string;
  stderr = "";

  private constructor(spec: WorkerSpec) {
    this.spec = spec;
    this.#dir = mkdtempSync(join(tmpdir(), "talkgate-cluster-"));
    const configPath = join(this.#dir, "config.json");
    writeFileSync(
      configPath,
      JSON.stringify({
        dataDir: this.dataDir,
        redis: { url: spec.redisUrl, keyPrefix: spec.keyPrefix },
        cluster: {
          workerId: spec.workerId,
          roles: spec.roles ?? ["media"],
          leaseTtlSec: spec.leaseTtlSec ?? 10,
          drainTimeoutMs: spec.drainTimeoutMs ?? 30_000,
          ...(spec.jobs ? { jobs: spec.jobs } : {}),
        },
        ...(spec.maxSessions !== undefined ? { runtime: { maxSessions: spec.maxSessions } } : {}),
        ...spec.config,
      }),
    );
    this.child = spawn(process.execPath, [...ENTRY, configPath], {
      cwd: process.cwd(),
      env: {
        ...process.env,
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "info",
        TALKGATE_TEST_AGENT: spec.agent ?? "local",
        TALKGATE_TEST_OUTBOUND: spec.outboundCalls ?? "probe",
        REDIS_URL: "",
      },
    });
    let buffer = "";
    this.child.stdout.on("data", (d: Buffer) => {
      buffer += d.toString();
      const parts = buffer.split("\n");
      buffer = parts.pop() ?? "";
      for (const text of parts) {
        if (!text.startsWith("{")) continue;
        const line = JSON.parse(text) as LogLine;
        this.lines.push(line);
        this.#waiters = this.#waiters.filter((w) => {
          if (!w.match(line)) return true;
          w.resolve(line);
          return false;
        });
      }
    });
    this.child.stderr.on("data", (d: Buffer) => (this.stderr += d.toString()));
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
  }

  static async start(spec: WorkerSpec): Promise<WorkerProcess> {
    const worker = new WorkerProcess(spec);
    const listening = worker.next((l) => typeof l.msg === "string" && l.msg.startsWith("talkgate listening"));
    const line = await Promise.race([
      listening,
      worker.exited.then((code) => {
        throw new Error(`worker ${spec.workerId} exited with ${code} before listening: ${worker.stderr}`);
      }),
    ]);
    const urls = line.urls as string[];
    worker.talkUrl = urls.find((u) => u.endsWith("/talk")) as string;
    worker.httpUrl = (urls.find((u) => u.endsWith("/healthz")) as string).replace(/\/healthz$/, "");
    return worker;
  }

  /**
   * Starts several workers at once. If one fails to start, the others are
   * stopped before the error is thrown, so no process outlives the test.
   */
  static async startAll(specs: WorkerSpec[]): Promise<WorkerProcess[]> {
    const results = await Promise.allSettled(specs.map((spec) => WorkerProcess.start(spec)));
    const started = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) {
      await Promise.all(started.map((w) => w.stop()));
      throw failed.reason;
    }
    return started;
  }

  /** The worker's data directory (session event logs in `sessions/<sessionId>.jsonl`). */
  get dataDir(): string {
    return join(this.#dir, "data");
  }

  /** The first log line (already seen or future) that matches. */
  next(match: (l: LogLine) => boolean): Promise<LogLine> {
    const found = this.lines.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  probe(name: string, extra: (l: LogLine) => boolean = () => true): Promise<LogLine> {
    return this.next((l) => l.probe === name && extra(l));
  }

  probes(name: string): LogLine[] {
    return this.lines.filter((l) => l.probe === name);
  }

  /** A stdin command to the test entry (enqueue / cancel jobs). */
  send(command: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify(command)}\n`);
  }

  /** A Talk API client; `token` when the worker's config has `auth.tokens`. */
  connect(token?: string): Promise<TalkClient> {
    return TalkClient.connect(this.talkUrl, token !== undefined ? { token } : {});
  }

  async readyz(): Promise<{
    status: number;
    body: { ok: boolean; checks: Record<string, { ok: boolean; detail?: string }> };
  }> {
    const res = await fetch(`${this.httpUrl}/readyz`);
    return { status: res.status, body: (await res.json()) as never };
  }

  /** One sample of a Prometheus counter on /metrics (0 when absent). */
  async metric(name: string, labels: Record<string, string>): Promise<number> {
    const text = await (await fetch(`${this.httpUrl}/metrics`)).text();
    const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
    for (const line of text.split("\n")) {
      if (!line.startsWith(`${name}{`)) continue;
      const inside = line.slice(name.length + 1, line.indexOf("}"));
      const have = inside.split(",");
      if (wanted.every((w) => have.includes(w))) return Number(line.slice(line.indexOf("}") + 1));
    }
    return 0;
  }

  kill(signal: NodeJS.Signals): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
  }

  async stop(): Promise<void> {
    this.kill("SIGKILL");
    await this.exited;
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
