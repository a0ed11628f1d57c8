/**
 * `talkgate serve --workers 2`: the real CLI in its own process, a primary
 * with two server processes sharing one port over the shared Redis. The
 * primary hands connections out in turn, so a call's webhook and its media
 * stream land on different workers: calls are served anyway (the stream
 * token is spent by whichever worker takes the stream). `/metrics` is the
 * machine's from any worker; a worker killed is restarted; SIGTERM drains
 * every worker and the primary exits 0; a bad worker count is refused at
 * start. (Without redis.url: serve-workers-private-redis.test.ts.)
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteKeys, freePort, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { ServePool } from "../support/serve-pool.js";

const prefix = uniquePrefix("serve-workers");
const dir = mkdtempSync(join(tmpdir(), "talkgate-workers-"));
let pool: ServePool;

beforeAll(async () => {
  const port = await freePort();
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
  pool = new ServePool(port, ["--config", config, "--workers", "2"]);
  await pool.until("two workers listening", 90_000, async () => (await pool.workerIds()).length === 2);
}, 100_000);

afterAll(async () => {
  pool?.kill();
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

describe("serve --workers 2", () => {
  it("serves calls whose webhook and stream land on different workers, and /metrics counts the machine", async () => {
    await pool.placeCalls(3);
    // Any worker answers /metrics for both: the three calls' sessions are counted once each.
    await pool.until("three sessions counted", 20_000, async () => (await pool.sessionsCounted()) === 3);
    expect(await pool.workerIds()).toHaveLength(2);
  }, 90_000);

  it("restarts a worker that dies", async () => {
    const before = await pool.workerIds();
    const [victim] = pool.workerPids();
    process.kill(victim!, "SIGKILL");
    await pool.until("the dead worker replaced", 100_000, async () => {
      const ids = await pool.workerIds();
      return ids.length === 2 && ids.some((id) => !before.includes(id));
    });
    expect(pool.workerPids()).not.toContain(victim);
  }, 120_000);

  it("drains every worker on SIGTERM and exits 0", async () => {
    const pids = pool.workerPids();
    expect(pids).toHaveLength(2);
    pool.process.kill("SIGTERM");
    expect(await pool.exited).toBe(0);
    expect(pool.workerPids()).toEqual([]);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  }, 70_000);
});

describe("serve --workers refused", () => {
  it("refuses a worker count that is not a number", async () => {
    const child = new ServePool(0, ["--workers", "many"]);
    expect(await child.exited).toBe(2);
    expect(child.output).toContain("--workers must be a whole number");
  }, 30_000);
});
