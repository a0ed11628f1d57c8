import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TalkError } from "../core/errors.js";
import type { TalkLogger } from "../core/index.js";
import { runDoctor } from "../config/doctor.js";
import { loadConfig } from "../config/load-config.js";
import { buildProviders } from "./providers.js";

function configFile(config: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), "talkgate-checks-")), "config.json");
  writeFileSync(path, JSON.stringify(config));
  return path;
}

/** What `serve` says of a file: its refusal, or its warnings. */
function serveSays(path: string, env: NodeJS.ProcessEnv): { problems: string[]; warnings: string[] } {
  try {
    return { problems: [], warnings: loadConfig({ path, env }).warnings };
  } catch (err) {
    if (!(err instanceof TalkError)) throw err;
    return { problems: err.details?.problems as string[], warnings: [] };
  }
}

describe("choosing a realtime provider without its key: one validation for serve and doctor", () => {
  it('talk.realtime.provider "openai" with no entry is refused by both, naming OPENAI_API_KEY', () => {
    const path = configFile({ talk: { realtime: { provider: "openai" } } });
    const serve = serveSays(path, {});
    const doctor = runDoctor({ path, dryRun: true, env: {} });
    expect(serve.problems).toEqual(doctor.problems);
    expect(serve.problems).toHaveLength(1);
    expect(serve.problems[0]).toContain("OPENAI_API_KEY");
    // The variable is the fix, for both.
    expect(serveSays(path, { OPENAI_API_KEY: "sk-1" }).problems).toEqual([]);
    expect(runDoctor({ path, dryRun: true, env: { OPENAI_API_KEY: "sk-1" } }).problems).toEqual([]);
    const xai = configFile({ talk: { realtime: { provider: "xai" } } });
    expect(serveSays(xai, {}).problems[0]).toContain("XAI_API_KEY");
  });

  it("an entry without a key starts with a warning naming the variable, and doctor reports the same warning", () => {
    const path = configFile({ talk: { realtime: { provider: "openai", providers: { openai: {} } } } });
    const serve = serveSays(path, {});
    const doctor = runDoctor({ path, dryRun: true, env: {} });
    expect(serve.problems).toEqual([]);
    expect(doctor.problems).toEqual([]);
    expect(serve.warnings).toEqual(doctor.warnings);
    expect(serve.warnings).toEqual([expect.stringContaining("OPENAI_API_KEY")]);
    // A key, or a server of its own (baseUrl), is no warning.
    expect(serveSays(path, { OPENAI_API_KEY: "sk-1" }).warnings).toEqual([]);
    expect(serveSays(path, { OPENAI_BASE_URL: "http://127.0.0.1:9/v1" }).warnings).toEqual([]);
  });
});

describe("a provider that cannot be reached is logged", () => {
  it("each failed realtime connection is a warning line naming the provider, rate-limited per provider", async () => {
    // A port nothing listens on: the connection is refused, as an unreachable host's would fail.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));

    const lines: { obj: Record<string, unknown>; msg: string }[] = [];
    const logger = {
      warn: (obj: Record<string, unknown>, msg: string) => lines.push({ obj, msg }),
      info: () => {},
      debug: () => {},
      error: () => {},
      child: () => logger,
    } as unknown as TalkLogger;
    const { config } = loadConfig({
      env: { OPENAI_API_KEY: "sk-test-unreachable", OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1` },
    });
    const providers = buildProviders(config, logger);
    const realtime = providers.resolver.resolve("realtime", "openai");
    const ulaw = { encoding: "g711_ulaw", sampleRate: 8000, channels: 1 } as const;
    const connect = (): Promise<unknown> =>
      realtime.connect!(
        {
          instructions: "x",
          tools: [],
          inputFormat: ulaw,
          outputFormat: ulaw,
          signal: new AbortController().signal,
        },
        () => {},
      ).then(
        () => undefined,
        (err: unknown) => err,
      );
    for (let i = 0; i < 12; i++) expect(await connect()).toBeInstanceOf(Error);
    const failures = lines.filter((l) => l.msg.startsWith("realtime provider openai failed"));
    // Ten a minute per provider, like other fault logs; the rest counted for the next window's first line.
    expect(failures).toHaveLength(10);
    expect(failures[0]!.obj).toMatchObject({ kind: "realtime", provider: "openai" });
    expect(failures[0]!.msg).toMatch(/ECONNREFUSED|refused|connect/i);
    expect(JSON.stringify(lines)).not.toContain("sk-test-unreachable");
    await providers.registry.close();
  });
});
