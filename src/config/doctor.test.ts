import { mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatDoctorReport, runDoctor } from "./doctor.js";
import { redactSecrets } from "./redact.js";

function writeConfig(value: unknown): string {
  const path = join(mkdtempSync(join(tmpdir(), "talkgate-doctor-")), "talkgate.json");
  writeFileSync(path, JSON.stringify(value));
  return path;
}

describe("talkgate doctor", () => {
  it("moves legacy realtime keys into talk.realtime, keeps a backup and reports each move", () => {
    const legacy = {
      talk: {
        provider: "local",
        realtimeProvider: "openai",
        realtimeVoice: "alloy",
        realtimeProviders: { openai: { apiKey: "sk-x" } },
      },
      realtime: { model: "gpt-realtime" },
    };
    const path = writeConfig(legacy);
    const report = runDoctor({ path });
    expect(report.written).toBe(true);
    expect(report.problems).toEqual([]);
    expect(report.moves).toEqual(
      expect.arrayContaining([
        { from: "talk.realtimeProvider", to: "talk.realtime.provider" },
        { from: "talk.realtimeVoice", to: "talk.realtime.voice" },
        { from: "talk.realtimeProviders", to: "talk.realtime.providers" },
        { from: "realtime.model", to: "talk.realtime.model" },
      ]),
    );
    const migrated = JSON.parse(readFileSync(path, "utf8"));
    expect(migrated).toEqual({
      talk: {
        provider: "local",
        realtime: {
          provider: "openai",
          voice: "alloy",
          providers: { openai: { apiKey: "sk-x" } },
          model: "gpt-realtime",
        },
      },
    });
    expect(JSON.parse(readFileSync(`${path}.bak`, "utf8"))).toEqual(legacy);
    expect(formatDoctorReport(report)).toContain("moved talk.realtimeProvider -> talk.realtime.provider");
  });

  it("keeps an existing talk.realtime value and reports the legacy one as dropped", () => {
    const path = writeConfig({ talk: { realtime: { provider: "new" }, realtimeProvider: "old" } });
    const report = runDoctor({ path, dryRun: true });
    expect(report.conflicts).toEqual([{ from: "talk.realtimeProvider", to: "talk.realtime.provider" }]);
    expect(report.written).toBe(false);
    expect(existsSync(`${path}.bak`)).toBe(false);
  });

  it("writes nothing when there is nothing to migrate", () => {
    const path = writeConfig({ server: { port: 1234 } });
    const report = runDoctor({ path });
    expect(report.written).toBe(false);
    expect(formatDoctorReport(report)).toContain("no legacy realtime placement found");
  });
});

describe("redactSecrets", () => {
  it("hides secret-named keys and URL passwords, deeply", () => {
    const out = redactSecrets({
      talk: { realtime: { providers: { openai: { apiKey: "sk-1", baseUrl: "https://api.example" } } } },
      auth: { tokens: [{ name: "a", token: "t".repeat(20) }] },
      redis: { url: "redis://user:hunter2@host:6379" },
    });
    expect(out.talk.realtime.providers.openai).toEqual({
      apiKey: "[redacted]",
      baseUrl: "https://api.example",
    });
    expect(out.auth.tokens[0]).toEqual({ name: "a", token: "[redacted]" });
    expect(out.redis.url).not.toContain("hunter2");
  });
});
