import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");

/**
 * A server on the embedded defaults (no Redis URL) does not carry the Redis backends: ioredis and
 * bullmq are imported only when a URL is configured (docs/cluster.md). Checked in a fresh process,
 * where the module cache holds what the app loaded and nothing a test runner or another test did.
 */
describe("the embedded server's footprint", () => {
  const dir = mkdtempSync(join(tmpdir(), "talkgate-footprint-"));
  const prefix = uniquePrefix("footprint");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const probe = (redisUrl: string | undefined) => `
    import { createRequire } from "node:module";
    const { createApp } = await import(${JSON.stringify(join(ROOT, "src/app.ts"))});
    const { validateConfig } = await import(${JSON.stringify(join(ROOT, "src/config/load-config.ts"))});
    const app = await createApp(validateConfig({
      server: { port: 0 }, dataDir: ${JSON.stringify(join(dir, "data"))}, log: { level: "silent" },
      ${redisUrl ? `redis: { url: ${JSON.stringify(redisUrl)}, keyPrefix: ${JSON.stringify(prefix)} },` : ""}
    }));
    const cache = Object.keys(createRequire(import.meta.url).cache);
    const count = (name) => cache.filter((k) => k.includes("/node_modules/" + name + "/")).length;
    console.log(JSON.stringify({ ioredis: count("ioredis"), bullmq: count("bullmq") }));
    await app.close();
  `;
  const loaded = async (redisUrl?: string): Promise<{ ioredis: number; bullmq: number }> => {
    const file = join(dir, `probe-${redisUrl ? "redis" : "embedded"}.mts`);
    writeFileSync(file, probe(redisUrl));
    const { stdout } = await run(process.execPath, ["--import", "tsx", file], { cwd: ROOT, timeout: 60_000 });
    return JSON.parse(stdout.trim().split("\n").at(-1)!) as { ioredis: number; bullmq: number };
  };

  it("loads neither ioredis nor bullmq without a Redis URL, and both with one", async () => {
    expect(await loaded()).toEqual({ ioredis: 0, bullmq: 0 });
    try {
      const withRedis = await loaded(SHARED_REDIS_URL);
      expect(withRedis.ioredis).toBeGreaterThan(0);
      expect(withRedis.bullmq).toBeGreaterThan(0);
    } finally {
      await deleteKeys(SHARED_REDIS_URL, prefix);
    }
  }, 120_000);
});
