import { describe, expect, it } from "vitest";
import { configSchema, talkSchema } from "./config-schema.js";
import { validateConfig } from "./load-config.js";
import { isSecretKey, REDACTED, redactSecrets, redactText, redactUrl, schemaFields } from "./redact.js";

const PLANTED = "PLANTED-SECRET-0123456789";

function configError(raw: unknown): string {
  try {
    validateConfig(raw, { env: {} });
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("the configuration was accepted");
}

describe("redactUrl / redactText", () => {
  it("strips credentials and the whole query, and leaves other strings alone", () => {
    expect(redactUrl(`https://api.example/v1?api_key=${PLANTED}&x=1`)).toBe(
      `https://api.example/v1?${REDACTED}`,
    );
    expect(redactUrl(`redis://user:${PLANTED}@host:6379/0`)).toBe(`redis://${REDACTED}@host:6379/0`);
    expect(redactUrl("https://api.example")).toBe("https://api.example");
    expect(redactUrl("not a url")).toBe("not a url");
  });

  it("finds URLs, bearer credentials and provider-style keys inside free text", () => {
    const text = `fetch https://h.example/v1/audio?api_key=${PLANTED} failed; Authorization: Bearer ${PLANTED}; key sk-${PLANTED}`;
    const out = redactText(text);
    expect(out).not.toContain(PLANTED);
    expect(out).toContain("https://h.example/v1/audio?[redacted]");
    const pem = `key: -----BEGIN PRIVATE KEY-----\nMIIE${PLANTED}\n-----END PRIVATE KEY----- done`;
    expect(redactText(pem)).toBe("key: [redacted] done");
  });
});

describe("isSecretKey", () => {
  it("knows the odd names credentials hide under", () => {
    for (const k of [
      "key",
      "apiKeys",
      "Authorization",
      "secretAccessKey",
      "pass",
      "bearer",
      "connectionString",
      "api_key",
      "client-secret",
      "credentials",
    ])
      expect(isSecretKey(k), k).toBe(true);
    for (const k of ["model", "baseUrl", "voice", "name", "timeoutMs"]) expect(isSecretKey(k), k).toBe(false);
  });
});

describe("redactSecrets without a schema (log objects)", () => {
  it("hides values under secret names at any depth, keeps counts, redacts URLs in strings", () => {
    const out = redactSecrets({
      key: PLANTED,
      apiKeys: [PLANTED],
      headers: { Authorization: `Bearer ${PLANTED}` },
      aws: { secretAccessKey: PLANTED },
      credentials: { user: "u", pass: PLANTED },
      bearer: PLANTED,
      connectionString: `Server=x;Password=${PLANTED}`,
      url: `https://h.example/?api_key=${PLANTED}`,
      usage: { inputTokens: 12 },
      err: new Error(`GET https://h.example/v1?api_key=${PLANTED} refused`),
    });
    expect(JSON.stringify(out)).not.toContain(PLANTED);
    expect(out.usage.inputTokens).toBe(12);
    expect((out.err as unknown as { message: string }).message).toContain("refused");
  });
});

describe("secrets by schema", () => {
  it("every field of the configuration with a secret-looking name is declared secret (the marks cannot drift)", () => {
    const fields = schemaFields(configSchema);
    // Names that look secret but hold public material.
    const PUBLIC = new Set(["telephony.telnyx.publicKey"]);
    const named = fields.filter((f) => isSecretKey(f.path.split(".").at(-1) ?? "") && !PUBLIC.has(f.path));
    expect(named.map((f) => f.path)).toEqual(
      expect.arrayContaining(["auth.tokens.[].token", "agent.endpoint.apiKey", "meetings.webhook.secret"]),
    );
    for (const f of named) expect(f.mark, f.path).toBe("secret");
    // The free-form parts are marked too.
    expect(fields.filter((f) => f.mark === "free-form").map((f) => f.path)).toEqual([
      "talk.providers.*",
      "talk.realtime.providers.*",
    ]);
  });

  it("talk settings: declared secrets and URL queries are hidden, the rest is shown", () => {
    const { config } = validateConfig(
      {
        talk: {
          providers: {
            speech: {
              baseUrl: `http://127.0.0.1:8000/v1?api_key=${PLANTED}`,
              apiKey: PLANTED,
              tts: { model: "tts-1" },
            },
            local: { voice: "en-us", anything: PLANTED },
          },
          realtime: {
            provider: "openai",
            providers: { openai: { apiKey: PLANTED, baseUrl: `https://user:${PLANTED}@api.example/v1` } },
          },
        },
      },
      { env: {} },
    );
    const out = redactSecrets(config.talk, talkSchema);
    expect(JSON.stringify(out)).not.toContain(PLANTED);
    const speech = out.providers?.["speech"] as Record<string, unknown>;
    expect(speech["baseUrl"]).toBe(`http://127.0.0.1:8000/v1?${REDACTED}`);
    expect(speech["tts"]).toEqual({ model: "tts-1" });
    // A free-form entry that configures nothing known is secret as a whole.
    expect(out.providers?.["local"]).toBe(REDACTED);
    expect(out.realtime?.providers?.["openai"]).toEqual({
      apiKey: REDACTED,
      baseUrl: `https://${REDACTED}@api.example/v1`,
    });
  });

  it("start-up refuses unknown keys in a known provider's settings, naming the key", () => {
    for (const key of [
      "key",
      "apiKeys",
      "headers",
      "secretAccessKey",
      "credentials",
      "bearer",
      "connectionString",
    ]) {
      const message = configError({ talk: { realtime: { providers: { openai: { [key]: PLANTED } } } } });
      expect(message).toContain("talk.realtime.providers.openai");
      expect(message).toContain(key);
      expect(message).not.toContain(PLANTED);
      const speech = configError({ talk: { providers: { speech: { tts: {}, [key]: PLANTED } } } });
      expect(speech).toContain(key);
    }
  });

  it("unknown realtime provider ids stay free-form (seed 001) and are secret as a whole", () => {
    const { config } = validateConfig(
      { talk: { realtime: { providers: { acme: { headers: { Authorization: PLANTED } } } } } },
      { env: {} },
    );
    expect(redactSecrets(config.talk, talkSchema).realtime?.providers?.["acme"]).toBe(REDACTED);
  });
});
