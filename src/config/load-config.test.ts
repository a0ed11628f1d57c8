import { mkdtempSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TalkError } from "../core/errors.js";
import { loadConfig, validateConfig } from "./load-config.js";

function configError(fn: () => unknown): TalkError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(TalkError);
    expect((err as TalkError).code).toBe("config_invalid");
    return err as TalkError;
  }
  throw new Error("expected a config error");
}

function writeConfig(value: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), "talkgate-config-"));
  const path = join(dir, "talkgate.json");
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

describe("talk.realtime session defaults", () => {
  it("accepts a supported shape and refuses one no session has, naming talk.realtime", () => {
    const ok = validateConfig({ talk: { realtime: { mode: "stt-tts", brain: "direct-tools" } } });
    expect(ok.config.talk.realtime).toMatchObject({ mode: "stt-tts", brain: "direct-tools" });
    const err = configError(() =>
      validateConfig({ talk: { realtime: { mode: "transcription", transport: "webrtc" } } }),
    );
    expect(err.message).toContain("talk.realtime");
  });
});

describe("loadConfig", () => {
  it("gives embedded defaults with no file and no environment", () => {
    const { config, path } = loadConfig({ env: {} });
    expect(path).toBeUndefined();
    expect(config.server).toEqual({ host: "127.0.0.1", port: 8787, workers: 1 });
    expect(config.auth.tokens).toEqual([]);
    expect(config.redis.url).toBeUndefined();
    expect(config.talk.input).toEqual({
      interruptOnSpeech: true,
      silenceTimeoutMs: 800,
      appendedEventIntervalMs: 1000,
      providerAppendMs: 60,
      echoCancellation: {
        enabled: true,
        tailMs: 300,
        denoise: false,
        foreignVoice: true,
        echoPitchGone: true,
        realtime: false,
      },
      bargeIn: { confirmWithWords: false, resumeAfterMs: 1200, matchBySound: true },
      endOfTurn: { mode: "fixed", minMs: 300, maxMs: 1500, prepareAnswer: true },
      turnEnd: "provider",
      vad: "webrtc",
      noiseSuppression: { enabled: false, engine: "speexdsp", suppressDb: -30 },
    });
    expect(config.gateway.rateLimit.requestsPerSecond).toBeGreaterThan(0);
  });

  it("reads the file named by TALKGATE_CONFIG when no path is given", () => {
    const path = writeConfig({ server: { port: 9001 } });
    const { config } = loadConfig({ env: { TALKGATE_CONFIG: path } });
    expect(config.server.port).toBe(9001);
  });

  it("lets PORT, HOST and REDIS_URL override the file and reports which were applied", () => {
    const path = writeConfig({ server: { port: 9001 } });
    const loaded = loadConfig({
      path,
      env: { PORT: "9100", HOST: "0.0.0.0", REDIS_URL: "redis://127.0.0.1:6379" },
    });
    expect(loaded.config.server.port).toBe(9100);
    expect(loaded.config.server.host).toBe("0.0.0.0");
    expect(loaded.config.redis.url).toBe("redis://127.0.0.1:6379");
    expect(loaded.envOverrides).toEqual(["PORT", "HOST", "REDIS_URL"]);
  });

  it("reads Vonage's credentials from VONAGE_APPLICATION_ID, VONAGE_PRIVATE_KEY and VONAGE_SIGNATURE_SECRET", () => {
    const { config, envOverrides } = loadConfig({
      env: {
        VONAGE_APPLICATION_ID: "aaaaaaaa-bbbb-cccc-dddd-0123456789ab",
        VONAGE_PRIVATE_KEY: "-----BEGIN PRIVATE KEY-----\\nabc\\n-----END PRIVATE KEY-----",
        VONAGE_SIGNATURE_SECRET: "sig-secret",
      },
    });
    expect(config.telephony.vonage).toMatchObject({
      applicationId: "aaaaaaaa-bbbb-cccc-dddd-0123456789ab",
      signatureSecret: "sig-secret",
      apiBaseUrl: "https://api.nexmo.com",
      maxWebhookAgeS: 300,
    });
    expect(config.telephony.vonage.privateKey).toContain("BEGIN PRIVATE KEY");
    expect(envOverrides).toEqual(["VONAGE_APPLICATION_ID", "VONAGE_PRIVATE_KEY", "VONAGE_SIGNATURE_SECRET"]);
  });

  it("names an unknown key with its full path", () => {
    const err = configError(() => validateConfig({ talk: { realtime: { providr: "x" } } }, { env: {} }));
    expect(err.message).toContain("talk.realtime.providr: unknown key");
  });

  it("names a key with a bad value", () => {
    const err = configError(() => validateConfig({ server: { port: 70000 } }, { env: {} }));
    expect(err.message).toContain("server.port");
    const err2 = configError(() => validateConfig({ talk: { realtime: { mode: "duplex" } } }, { env: {} }));
    expect(err2.message).toContain("talk.realtime.mode");
    const err3 = configError(() => validateConfig({ runtime: { replayMaxAgeMs: -5 } }, { env: {} }));
    expect(err3.message).toContain("runtime.replayMaxAgeMs");
    for (const bad of [-1, 501, 20.5, "60"]) {
      const err4 = configError(() =>
        validateConfig({ talk: { input: { providerAppendMs: bad } } }, { env: {} }),
      );
      expect(err4.message).toContain("talk.input.providerAppendMs");
    }
  });

  it("runtime.sessionLogFlushMs: 1000 by default, 0..10000 ms, anything else refused at start naming the key", () => {
    expect(validateConfig({}, { env: {} }).config.runtime.sessionLogFlushMs).toBe(1000);
    for (const ok of [0, 250, 10_000]) {
      const { config } = validateConfig({ runtime: { sessionLogFlushMs: ok } }, { env: {} });
      expect(config.runtime.sessionLogFlushMs).toBe(ok);
    }
    for (const bad of [-1, 10_001, 2.5, "1000", null]) {
      const err = configError(() => validateConfig({ runtime: { sessionLogFlushMs: bad } }, { env: {} }));
      expect(err.message).toContain("runtime.sessionLogFlushMs");
    }
  });

  it("talk.local.moonshine: options pass through; out-of-range values refused at start naming the key", () => {
    const { config } = validateConfig(
      { talk: { local: { moonshine: { partialIntervalMs: 0, segmentSeconds: 10, threads: 2 } } } },
      { env: {} },
    );
    expect(config.talk.local.moonshine).toEqual({ partialIntervalMs: 0, segmentSeconds: 10, threads: 2 });
    for (const [key, bad] of [
      ["partialIntervalMs", -1],
      ["partialIntervalMs", 10_001],
      ["segmentSeconds", 4],
      ["segmentSeconds", 31],
      ["threads", 0],
      ["threads", 2.5],
      ["modelDir", ""],
      ["beam", 3],
    ] as const) {
      const err = configError(() =>
        validateConfig({ talk: { local: { moonshine: { [key]: bad } } } }, { env: {} }),
      );
      expect(err.message).toContain(key === "beam" ? "talk.local.moonshine" : `talk.local.moonshine.${key}`);
    }
  });

  it("ops.eventLoopSampleMs: 10 by default (prom-client's), 1..1000 ms, anything else refused at start naming the key", () => {
    expect(validateConfig({}, { env: {} }).config.ops.eventLoopSampleMs).toBe(10);
    for (const ok of [1, 50, 1000]) {
      expect(
        validateConfig({ ops: { eventLoopSampleMs: ok } }, { env: {} }).config.ops.eventLoopSampleMs,
      ).toBe(ok);
    }
    for (const bad of [0, -5, 1001, 12.5, "50", null]) {
      const err = configError(() => validateConfig({ ops: { eventLoopSampleMs: bad } }, { env: {} }));
      expect(err.message).toContain("ops.eventLoopSampleMs");
    }
  });

  it("talk.faults: defaults, and out-of-range values refused at start naming the key", () => {
    const { config } = validateConfig({}, { env: {} });
    expect(config.talk.faults).toMatchObject({
      policy: "reconnect",
      firstByteTimeoutMs: 5000,
      interChunkTimeoutMs: 3000,
      retries: 2,
      maxConsecutiveFaults: 3,
      fallback: {},
    });
    expect(config.talk.faults.apology.length).toBeGreaterThan(0);
    for (const [key, value] of [
      ["retries", 11],
      ["firstByteTimeoutMs", 50],
      ["interChunkTimeoutMs", 1.5],
      ["maxConsecutiveFaults", 0],
      ["policy", "retry"],
      ["apology", "  "],
    ] as const) {
      const err = configError(() => validateConfig({ talk: { faults: { [key]: value } } }, { env: {} }));
      expect(err.message).toContain(`talk.faults.${key}`);
    }
    const err = configError(() =>
      validateConfig({ talk: { faults: { fallback: { asr: [] } } } }, { env: {} }),
    );
    expect(err.message).toContain("talk.faults.fallback.asr");
  });

  it("server.workers: 1 to 64, or auto (one per core this process may use); anything else refused naming the key", () => {
    expect(validateConfig({ server: { workers: 3 } }).config.server.workers).toBe(3);
    expect(validateConfig({ server: { workers: "auto" } }).config.server.workers).toBe(
      Math.min(64, availableParallelism()),
    );
    expect(loadConfig({ env: { TALKGATE_WORKERS: "auto" } }).config.server.workers).toBe(
      Math.min(64, availableParallelism()),
    );
    for (const workers of [0, 65, 2.5, "all", null])
      expect(configError(() => validateConfig({ server: { workers } })).message).toContain("server.workers");
    expect(configError(() => loadConfig({ env: { TALKGATE_WORKERS: "many" } })).message).toContain(
      'TALKGATE_WORKERS (server.workers): must be a whole number or "auto"',
    );
  });

  it("names the environment variable when its value is bad", () => {
    const err = configError(() => validateConfig({}, { env: { PORT: "eighty" } }));
    expect(err.message).toContain("PORT (server.port)");
  });

  it("rejects a file that is not JSON, naming the file", () => {
    const path = writeConfig("{ not json");
    const err = configError(() => loadConfig({ path, env: {} }));
    expect(err.message).toContain(path);
  });

  it("refuses legacy realtime placement and points to doctor without rewriting", () => {
    const err = configError(() => validateConfig({ talk: { realtimeProvider: "openai" } }, { env: {} }));
    expect(err.message).toContain("talk.realtimeProvider");
    expect(err.message).toContain("talkgate doctor");
  });

  it("accepts the seed 001 talk contract", () => {
    const { config } = validateConfig(
      {
        talk: {
          provider: "local",
          providers: { local: { voice: "en-us" } },
          realtime: {
            provider: "openai",
            model: "gpt-realtime",
            voice: "alloy",
            mode: "realtime",
            transport: "gateway-relay",
            brain: "agent-consult",
            providers: { openai: { apiKey: "sk-test" } },
          },
          input: { interruptOnSpeech: false, silenceTimeoutMs: 500 },
        },
      },
      { env: {} },
    );
    expect(config.talk.realtime?.transport).toBe("gateway-relay");
    expect(config.talk.input.interruptOnSpeech).toBe(false);
  });

  it("adds an admin token from TALKGATE_ADMIN_TOKEN", () => {
    const { config } = validateConfig({}, { env: { TALKGATE_ADMIN_TOKEN: "a-long-enough-admin-token" } });
    expect(config.auth.tokens).toEqual([
      { name: "env-admin", token: "a-long-enough-admin-token", scopes: ["read", "write", "admin"] },
    ]);
  });
});
