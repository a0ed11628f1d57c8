/**
 * `talkgate serve --workers 2`: the real CLI in its own process, a primary
 * with two server processes sharing one port over the shared Redis. The
 * primary hands connections out in turn, so a call's webhook and its media
 * stream land on different workers: calls are served anyway (the stream
 * token is spent by whichever worker takes the stream). `/metrics` is the
 * machine's from any worker; a worker killed is restarted; SIGTERM drains
 * every worker and the primary exits 0; a bad worker count is refused at
 * start with the key named.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteKeys, freePort, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { TwilioStreamClient } from "../support/twilio-stream-client.js";

const ROOT = join(import.meta.dirname, "..", "..");
const prefix = uniquePrefix("serve-workers");
const dir = mkdtempSync(join(tmpdir(), "talkgate-workers-"));
let port: number;
let primary: ChildProcess;
let output = "";
const REQUEST_TIMEOUT_MS = 10_000;

function startCli(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  const { REDIS_URL: _redis, ...inherited } = process.env;
  const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "serve", ...args], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  return child;
}

/** Polls `check` until it holds, or fails naming `what` (at once if the primary has exited). */
async function until(what: string, ms: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && primary.exitCode === null) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  const why = primary.exitCode === null ? `not within ${ms} ms` : `the primary exited (${primary.exitCode})`;
  throw new Error(`${what}: ${why}; server output:\n${output.slice(-3000)}`);
}

/**
 * One HTTP request on a connection of its own (no keep-alive), so each one is
 * handed to the next worker. It gives up after REQUEST_TIMEOUT_MS: a
 * connection the primary handed to a worker that was killed before taking
 * it is never answered (node:cluster does not hand it to another), and a
 * poll must not wait on it past the test's own limit.
 */
function get(path: string, method = "GET", body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
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
async function workerIds(): Promise<string[]> {
  const { text } = await get("/metrics");
  return [...text.matchAll(/^talkgate_worker_info\{worker="([^"]+)"\} 1$/gm)].map((m) => m[1]!).sort();
}

/** Pids of the workers (the primary's children running the CLI), from /proc. */
function workerPids(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        // The primary's other children (tsx's esbuild service) are not workers.
        return (
          Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === primary.pid &&
          readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("src/cli/main.ts")
        );
      } catch {
        return false;
      }
    })
    .map(Number);
}

beforeAll(async () => {
  port = await freePort();
  const config = join(dir, "config.json");
  writeFileSync(
    config,
    JSON.stringify({
      server: { port },
      redis: { url: SHARED_REDIS_URL, keyPrefix: prefix },
      dataDir: join(dir, "data"),
      log: { level: "warn" },
      telephony: { defaultMode: "stt-tts", greeting: "Hello from the pool.", greetingProtectMs: 0 },
    }),
  );
  primary = startCli(["--config", config, "--workers", "2"]);
  await until("two workers listening", 90_000, async () => (await workerIds()).length === 2);
}, 100_000);

afterAll(async () => {
  if (primary?.exitCode === null) primary.kill("SIGKILL");
  for (const pid of workerPids()) process.kill(pid, "SIGKILL");
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

describe("serve --workers 2", () => {
  it("serves calls whose webhook and stream land on different workers, and /metrics counts the machine", async () => {
    const clients: TwilioStreamClient[] = [];
    for (let i = 0; i < 3; i++) {
      const callSid = `CA${String(i + 1).padStart(32, "0")}`;
      const params = new URLSearchParams({ CallSid: callSid, From: "+15550002222", To: "+15550001111" });
      const answer = await get("/telephony/twilio/voice", "POST", params.toString());
      expect(answer.status).toBe(200);
      const streamUrl = /<Stream url="([^"]+)"/.exec(answer.text)![1]!;
      const customParameters = Object.fromEntries(
        [...answer.text.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]),
      );
      const client = new TwilioStreamClient({ url: streamUrl, callSid, customParameters });
      clients.push(client);
      await client.connect();
    }
    // Every call hears its greeting: the worker that took the stream serves the call.
    for (const client of clients) await client.waitFor(() => client.receivedAudioMs > 500);
    for (const client of clients) await client.stop();
    await Promise.all(clients.map((c) => c.close()));

    // Any worker answers /metrics for both: the three calls' sessions are counted once each.
    await until("three sessions counted", 20_000, async () => {
      const { text } = await get("/metrics");
      const total = [...text.matchAll(/^talkgate_sessions_total\{[^}]*\} (\d+)$/gm)].reduce(
        (sum, m) => sum + Number(m[1]),
        0,
      );
      return total === 3;
    });
    expect(await workerIds()).toHaveLength(2);
  }, 90_000);

  it("restarts a worker that dies", async () => {
    const before = await workerIds();
    const [victim] = workerPids();
    process.kill(victim!, "SIGKILL");
    await until("the dead worker replaced", 100_000, async () => {
      const ids = await workerIds();
      return ids.length === 2 && ids.some((id) => !before.includes(id));
    });
    expect(workerPids()).not.toContain(victim);
  }, 120_000);

  it("drains every worker on SIGTERM and exits 0", async () => {
    const pids = workerPids();
    expect(pids).toHaveLength(2);
    const exited = new Promise<number | null>((resolve) => primary.once("exit", (code) => resolve(code)));
    primary.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(workerPids()).toEqual([]);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  }, 70_000);
});

describe("serve --workers refused", () => {
  it("needs redis.url, naming the key", async () => {
    const child = startCli(["--workers", "2"], { TALKGATE_DATA_DIR: join(dir, "refused") });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).toBe(1);
    expect(output).toContain("server.workers");
    expect(output).toContain("redis.url");
  }, 30_000);

  it("refuses a worker count that is not a number", async () => {
    const child = startCli(["--workers", "many"]);
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    expect(code).toBe(2);
    expect(output).toContain("--workers must be a whole number");
  }, 30_000);
});
