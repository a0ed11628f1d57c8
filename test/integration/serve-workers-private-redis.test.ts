/**
 * `talkgate serve --workers 2` with no redis.url: the primary runs a private
 * redis-server (Debian's) for the pool, on loopback behind a random password,
 * and the workers meet through it as through a shared one: a call's webhook
 * and stream land on different workers and are served. SIGTERM leaves no
 * Redis behind; a Redis that dies under the pool drains the workers and the
 * primary exits 1 saying why; a redis-server that is not there refuses the
 * pool at start, naming the keys.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../support/cluster-redis.js";
import { alive, childrenOf, cmdline, ServePool } from "../support/serve-pool.js";

const dir = mkdtempSync(join(tmpdir(), "talkgate-private-redis-"));
const pools: ServePool[] = [];
afterEach(() => {
  for (const pool of pools.splice(0)) pool.kill();
});

async function startPool(name: string, redis: Record<string, unknown> = {}): Promise<ServePool> {
  const port = await freePort();
  const config = join(dir, `${name}.json`);
  writeFileSync(
    config,
    JSON.stringify({
      server: { port },
      redis,
      dataDir: join(dir, name),
      log: { level: "info" },
      telephony: { defaultMode: "stt-tts", greeting: "Hello from the pool.", greetingProtectMs: 0 },
    }),
  );
  const pool = new ServePool(port, ["--config", config, "--workers", "2"]);
  pools.push(pool);
  return pool;
}

/** The private Redis: the primary's watchdog child and the redis-server under it. */
function privateRedis(pool: ServePool): { watchdog: number; server: number } {
  const watchdog = childrenOf(pool.process.pid!).find((pid) => cmdline(pid).includes("talkgate-pool-redis"));
  if (watchdog === undefined)
    throw new Error(`no private Redis under the primary:\n${pool.output.slice(-2000)}`);
  const server = childrenOf(watchdog).find((pid) => cmdline(pid).startsWith("redis-server"));
  if (server === undefined) throw new Error("the watchdog runs no redis-server");
  return { watchdog, server };
}

describe("serve --workers 2 without redis.url", () => {
  it("serves calls across workers over its private Redis and leaves none behind on SIGTERM", async () => {
    const pool = await startPool("served");
    await pool.until("two workers listening", 90_000, async () => (await pool.workerIds()).length === 2);
    const { watchdog, server } = privateRedis(pool);
    // Loopback only, and not on the command line: its password is in a file only this user reads.
    expect(cmdline(server)).toMatch(/^redis-server 127\.0\.0\.1:\d+/);
    expect(cmdline(server)).not.toMatch(/[0-9a-f]{48}/);

    await pool.placeCalls(3);
    await pool.until("three sessions counted", 20_000, async () => (await pool.sessionsCounted()) === 3);

    pool.process.kill("SIGTERM");
    expect(await pool.exited).toBe(0);
    expect(alive(server)).toBe(false);
    expect(alive(watchdog)).toBe(false);
  }, 150_000);

  it("exits 0 when the stop signal reaches its Redis too (systemd signals the whole control group)", async () => {
    const pool = await startPool("group-stop");
    await pool.until("two workers listening", 90_000, async () => (await pool.workerIds()).length === 2);
    // A live call keeps its worker draining, so the Redis's exit comes while the pool still stops.
    const call = await pool.openCall(7);
    await call.waitFor(() => call.receivedAudioMs > 500);
    const { server } = privateRedis(pool);
    pool.process.kill("SIGTERM");
    process.kill(server, "SIGTERM");
    await pool.until("the Redis's exit noted", 20_000, async () =>
      pool.output.includes("the pool's private Redis stopped with the pool"),
    );
    await call.stop();
    await call.close();
    expect(await pool.exited).toBe(0);
    expect(pool.output).not.toContain("the pool's private Redis exited: draining every worker");
  }, 150_000);

  it("drains and exits 1 when its private Redis dies under it", async () => {
    const pool = await startPool("redis-dies");
    await pool.until("two workers listening", 90_000, async () => (await pool.workerIds()).length === 2);
    const workers = pool.workerPids();
    process.kill(privateRedis(pool).server, "SIGKILL");
    expect(await pool.exited).toBe(1);
    expect(pool.output).toContain("the pool's private Redis exited: draining every worker");
    for (const pid of workers) expect(alive(pid)).toBe(false);
  }, 150_000);

  it("is refused at start when there is no redis-server to run, naming the keys", async () => {
    const pool = await startPool("refused", { poolServer: join(dir, "no-redis-server-here") });
    expect(await pool.exited).toBe(1);
    expect(pool.output).toContain("server.workers");
    expect(pool.output).toContain("redis.url");
    expect(pool.output).toContain("was not found");
    expect(pool.workerPids()).toEqual([]);
  }, 30_000);
});
