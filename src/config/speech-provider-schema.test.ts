import { describe, expect, it } from "vitest";
import { configuredProviders } from "../app.js";
import { validateConfig } from "./load-config.js";
import { openAiSpeechEntries } from "./speech-provider-schema.js";

const configError = (raw: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): string => {
  try {
    validateConfig(raw, { env });
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("expected the configuration to be refused");
};

describe("talk.providers: OpenAI-compatible speech providers", () => {
  it("accepts an entry with stt and tts and registers both under its id, after the local engines", async () => {
    const { config } = validateConfig(
      {
        talk: {
          providers: {
            speech: {
              type: "openai-compatible",
              baseUrl: "http://127.0.0.1:8000/v1",
              stt: { model: "Systran/faster-whisper-small", language: "en" },
              tts: {
                baseUrl: "http://127.0.0.1:8001/v1",
                model: "tts-1",
                voice: "nova",
                apiKey: "sk-local-tts",
              },
            },
          },
        },
      },
      { env: {} },
    );
    const providers = configuredProviders(config);
    expect(providers.map((p) => `${p.kind}/${p.id}`)).toEqual([
      "tts/espeak-ng",
      "stt/pocketsphinx",
      "stt/moonshine",
      "agent/local-agent",
      "stt/speech",
      "tts/speech",
    ]);
    const stt = providers.find((p) => p.kind === "stt" && p.id === "speech")!;
    const tts = providers.find((p) => p.kind === "tts" && p.id === "speech")!;
    // The entry's baseUrl applies to stt; tts has its own.
    expect((await stt.health()).detail).toBe("http://127.0.0.1:8000/v1, model Systran/faster-whisper-small");
    expect((await tts.health()).detail).toBe("http://127.0.0.1:8001/v1, model tts-1");
    expect(tts.capabilities.voices).toEqual(["nova"]);
  });

  it("an entry with only tts registers only a TTS provider; other shapes stay free-form and configure nothing", () => {
    const { config } = validateConfig(
      { talk: { providers: { voice: { tts: { model: "tts-1" } }, local: { voice: "en-us" } } } },
      { env: {} },
    );
    expect(openAiSpeechEntries(config.talk.providers).map(([id]) => id)).toEqual(["voice"]);
    expect(
      configuredProviders(config)
        .filter((p) => p.id === "voice" || p.id === "local")
        .map((p) => `${p.kind}/${p.id}`),
    ).toEqual(["tts/voice"]);
  });

  it("refuses bad entries with a message naming the key", () => {
    expect(configError({ talk: { providers: { openai: { stt: { modle: "whisper-1" } } } } })).toMatch(
      /talk\.providers\.openai\.stt.*modle/,
    );
    expect(configError({ talk: { providers: { openai: { type: "openai-compatible" } } } })).toMatch(
      /talk\.providers\.openai.*stt or a tts/,
    );
    expect(configError({ talk: { providers: { x: { type: "elevenlabs", tts: {} } } } })).toMatch(
      /talk\.providers\.x\.type.*unknown speech provider type/,
    );
    expect(configError({ talk: { providers: { "espeak-ng": { tts: {} } } } })).toMatch(/local engine/);
    expect(configError({ talk: { providers: { o: { baseUrl: "not a url", tts: {} } } } })).toMatch(
      /talk\.providers\.o\.baseUrl/,
    );
    expect(configError({ talk: { providers: { o: { tts: { sampleRate: 11_025 } } } } })).toMatch(
      /talk\.providers\.o\.tts\.sampleRate/,
    );
    expect(configError({ talk: { providers: { o: { stt: { stream: "sometimes" } } } } })).toMatch(
      /talk\.providers\.o\.stt\.stream/,
    );
  });

  it("STT_* / TTS_* environment variables configure talk.providers.openai-compatible", () => {
    const { config, envOverrides } = validateConfig(
      {},
      {
        env: {
          STT_BASE_URL: "http://127.0.0.1:8000/v1",
          STT_MODEL: "Systran/faster-whisper-small",
          TTS_BASE_URL: "http://127.0.0.1:8001/v1",
          TTS_MODEL: "tts-1",
          TTS_VOICE: "echo",
          TTS_API_KEY: "sk-from-env",
        },
      },
    );
    expect(envOverrides).toEqual(
      expect.arrayContaining([
        "STT_BASE_URL",
        "STT_MODEL",
        "TTS_BASE_URL",
        "TTS_MODEL",
        "TTS_VOICE",
        "TTS_API_KEY",
      ]),
    );
    expect(config.talk.providers?.["openai-compatible"]).toEqual({
      stt: { baseUrl: "http://127.0.0.1:8000/v1", model: "Systran/faster-whisper-small" },
      tts: { baseUrl: "http://127.0.0.1:8001/v1", model: "tts-1", voice: "echo", apiKey: "sk-from-env" },
    });
    expect(
      configuredProviders(config)
        .filter((p) => p.id === "openai-compatible")
        .map((p) => p.kind),
    ).toEqual(["stt", "tts"]);
  });

  it("the embedded defaults configure no remote speech provider", () => {
    const { config } = validateConfig({}, { env: {} });
    expect(configuredProviders(config).map((p) => p.id)).toEqual([
      "espeak-ng",
      "pocketsphinx",
      "moonshine",
      "local-agent",
    ]);
  });
});
