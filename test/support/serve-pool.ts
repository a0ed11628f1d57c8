/**
 * The real `talkgate serve` CLI in a process of its own, for the tests of
 * `serve --workers N`: start it, talk HTTP to it one connection per request
 * (so node:cluster hands each to the next worker), find its workers and the
 * primary's other children in /proc, place Twilio calls through it. The CLI runs from this test run's
 * bundle of src/cli/main.ts (child-bundle.ts); cli-serve.test.ts runs it as a user types it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { childEntryArgs, childEntryMarker } from "./child-bundle.js";
import { TwilioStreamClient } from "./twilio-stream-client.js";

const ROOT = join(import.meta.dirname, "..", "..");
const REQUEST_TIMEOUT_MS = 10_000;

export class ServePool {
  readonly process: ChildProcess;
  /** Everything the CLI printed, stdout and stderr. */
  output = "";
  readonly exited: Promise<number | null>;

  /** `args` after `serve`; `env` over this process's own, without its REDIS_URL. */
  constructor(
    readonly port: number,
    args: string[],
    env: NodeJS.ProcessEnv = {},
  ) {
    const { REDIS_URL: _redis, ...inherited } = process.env;
    this.process = spawn(process.execPath, [...childEntryArgs("talkgate"), "serve", ...args], {
      cwd: ROOT,
      env: { ...inherited, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.process.stdout!.on("data", (d: Buffer) => (this.output += d.toString()));
    this.process.stderr!.on("data", (d: Buffer) => (this.output += d.toString()));
    this.exited = new Promise((resolve) => this.process.once("exit", (code) => resolve(code)));
  }

  /** Polls `check` until it holds, or fails naming `what` (at once if the primary has exited). */
  async until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + ms;
    while (Date.now() < deadline && this.process.exitCode === null) {
      if (await check().catch(() => false)) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    const why =
      this.process.exitCode === null
        ? `not within ${ms} ms`
        : `the primary exited (${this.process.exitCode})`;
    throw new Error(`${what}: ${why}; server output:\n${this.output.slice(-3000)}`);
  }

  /**
   * One HTTP request on a connection of its own (no keep-alive), so each one is
   * handed to the next worker. It gives up after REQUEST_TIMEOUT_MS: a
   * connection the primary handed to a worker that was killed before taking
   * it is never answered (node:cluster does not hand it to another), and a
   * poll must not wait on it past the test's own limit.
   */
  get(path: string, method = "GET", body?: string): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: this.port,
          path,
          method,
          agent: false,
          headers: body ? { "content-type": "application/x-www-form-urlencoded" } : {},
        },
        (res) => {
          let text = "";
          res.on("data", (d: Buffer) => (text += d.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.setTimeout(REQUEST_TIMEOUT_MS, () =>
        req.destroy(new Error(`${method} ${path}: no answer in ${REQUEST_TIMEOUT_MS} ms`)),
      );
      req.on("error", reject);
      req.end(body);
    });
  }

  /** The worker ids in the machine's /metrics (one talkgate_worker_info line per live worker). */
  async workerIds(): Promise<string[]> {
    const { text } = await this.get("/metrics");
    return [...text.matchAll(/^talkgate_worker_info\{worker="([^"]+)"\} 1$/gm)].map((m) => m[1]!).sort();
  }

  /** Pids of the workers (the primary's children running the CLI), from /proc. */
  workerPids(): number[] {
    return childrenOf(this.process.pid!).filter((pid) => cmdline(pid).includes(childEntryMarker("talkgate")));
  }

  /** The sessions the machine's /metrics counts, over every worker. */
  async sessionsCounted(): Promise<number> {
    const { text } = await this.get("/metrics");
    return [...text.matchAll(/^talkgate_sessions_total\{[^}]*\} (\d+)$/gm)].reduce(
      (sum, m) => sum + Number(m[1]),
      0,
    );
  }

  /** One Twilio call: answered by one request, its stream connected on another connection. */
  async openCall(sid: number): Promise<TwilioStreamClient> {
    const callSid = `CA${String(sid).padStart(32, "0")}`;
    const params = new URLSearchParams({ CallSid: callSid, From: "+15550002222", To: "+15550001111" });
    const answer = await this.get("/telephony/twilio/voice", "POST", params.toString());
    if (answer.status !== 200) throw new Error(`the voice webhook answered ${answer.status}: ${answer.text}`);
    const streamUrl = /<Stream url="([^"]+)"/.exec(answer.text)![1]!;
    const customParameters = Object.fromEntries(
      [...answer.text.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]),
    );
    const client = new TwilioStreamClient({ url: streamUrl, callSid, customParameters });
    await client.connect();
    return client;
  }

  /**
   * `count` calls (openCall), handed out in turn, so mostly to different workers; resolves once every
   * caller heard half a second of its greeting, the calls stopped and closed.
   */
  async placeCalls(count: number, firstSid = 1): Promise<void> {
    const clients: TwilioStreamClient[] = [];
    try {
      for (let i = 0; i < count; i++) clients.push(await this.openCall(firstSid + i));
      // Every call hears its greeting: the worker that took the stream serves the call.
      for (const client of clients) await client.waitFor(() => client.receivedAudioMs > 500);
      for (const client of clients) await client.stop();
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  }

  /** Kills the primary and every process under it. Idempotent. */
  kill(): void {
    const pid = this.process.pid;
    if (pid === undefined) return;
    for (const child of descendantsOf(pid)) tryKill(child);
    if (this.process.exitCode === null) tryKill(pid);
  }
}

/** The processes whose parent is `pid`, from /proc. */
export function childrenOf(pid: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((child) => {
      try {
        const stat = readFileSync(`/proc/${child}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Every process under `pid`, children first. */
export function descendantsOf(pid: number): number[] {
  return childrenOf(pid).flatMap((child) => [child, ...descendantsOf(child)]);
}

/** A process's command line, arguments joined by spaces ("" once it is gone). */
export function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ");
  } catch {
    return "";
  }
}

/** Whether `pid` is a live process (not a zombie). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

function tryKill(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // gone
  }
}
