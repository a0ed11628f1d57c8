import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";

const run = promisify(execFile);
const ROOT = join(import.meta.dirname, "../..");
/** Packages a server loads only when configured to use them. */
const ON_DEMAND = [
  "ioredis",
  "bullmq",
  "@opentelemetry/sdk-trace",
  "@opentelemetry/exporter-trace-otlp-http",
];

/**
 * A server on the embedded defaults (no Redis URL, no tracing exporter) does not carry the Redis
 * backends or the tracing SDK: they are imported when configured (docs/cluster.md, docs/operations.md).
 * Checked in a fresh process whose module resolutions a loader hook records: what the app loaded, and
 * nothing a test runner or another test did.
 */
describe("the embedded server's footprint", () => {
  const dir = mkdtempSync(join(tmpdir(), "talkgate-footprint-"));
  const prefix = uniquePrefix("footprint");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The packages of ON_DEMAND the app resolved while starting, with this extra config and environment. */
  async function loaded(config: string, env: Record<string, string> = {}): Promise<string[]> {
    const log = join(dir, `resolved-${Object.keys(env).length}-${config.length}.txt`);
    writeFileSync(log, "");
    writeFileSync(
      join(dir, "hooks.mjs"),
      `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (r.url.includes("/node_modules/")) appendFileSync(process.env.FOOTPRINT_LOG, r.url + "\\n");
  return r;
}
`,
    );
    writeFileSync(
      join(dir, "register.mjs"),
      `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(join(dir, "hooks.mjs")).href)});\n`,
    );
    const probe = join(dir, "probe.mts");
    writeFileSync(
      probe,
      `const { createApp } = await import(${JSON.stringify(join(ROOT, "src/app.ts"))});
const { validateConfig } = await import(${JSON.stringify(join(ROOT, "src/config/load-config.ts"))});
const app = await createApp(validateConfig({
  server: { port: 0 }, dataDir: ${JSON.stringify(join(dir, "data"))}, log: { level: "silent" }, ${config}
}));
await app.close();
`,
    );
    await run(process.execPath, ["--import", join(dir, "register.mjs"), "--import", "tsx", probe], {
      cwd: ROOT,
      timeout: 60_000,
      env: { ...process.env, ...env, FOOTPRINT_LOG: log },
    });
    const urls = readFileSync(log, "utf8");
    return ON_DEMAND.filter((name) => urls.includes(`/node_modules/${name}/`));
  }

  it("loads neither the Redis backends nor the tracing SDK on the embedded defaults", async () => {
    expect(await loaded("")).toEqual([]);
  }, 90_000);

  it("loads the Redis backends with a Redis URL, and the tracing SDK with an exporter", async () => {
    try {
      const redis = `redis: { url: ${JSON.stringify(SHARED_REDIS_URL)}, keyPrefix: ${JSON.stringify(prefix)} },`;
      expect(await loaded(redis)).toEqual(["ioredis", "bullmq"]);
    } finally {
      await deleteKeys(SHARED_REDIS_URL, prefix);
    }
    expect(await loaded("", { OTEL_TRACES_EXPORTER: "console" })).toEqual([
      "@opentelemetry/sdk-trace",
      "@opentelemetry/exporter-trace-otlp-http",
    ]);
  }, 120_000);
});
