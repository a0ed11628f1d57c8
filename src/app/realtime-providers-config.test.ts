import { describe, expect, it } from "vitest";
import { TalkError } from "../core/errors.js";
import { validateConfig } from "../config/load-config.js";
import { configuredProviders } from "./providers.js";

const realtime = (providers: Record<string, unknown>, extra: Record<string, unknown> = {}): unknown => ({
  talk: { realtime: { providers, ...extra } },
});

function realtimeOf(raw: unknown): { id: string; models: string[]; voices: string[] }[] {
  const { config } = validateConfig(raw);
  return configuredProviders(config)
    .filter((p) => p.kind === "realtime")
    .map((p) => ({ id: p.id, models: p.capabilities.models ?? [], voices: p.capabilities.voices ?? [] }));
}

describe("talk.realtime.providers: the wiring table", () => {
  it("openai, xai and gemini entries each build their provider", () => {
    const built = realtimeOf(
      realtime({
        openai: { apiKey: "sk-a" },
        xai: { apiKey: "xai-b" },
        gemini: { apiKey: "AIza-c", model: "gemini-other", voice: "Kore" },
      }),
    );
    expect(built.map((p) => p.id)).toEqual(["openai", "xai", "gemini"]);
    expect(built[2]!.models).toEqual(["gemini-other"]);
  });

  it("talk.realtime.model / voice apply to the default provider only", () => {
    const built = realtimeOf(
      realtime(
        { openai: { apiKey: "sk-a" }, xai: { apiKey: "xai-b" } },
        { provider: "xai", model: "grok-x" },
      ),
    );
    expect(built.find((p) => p.id === "xai")!.models).toEqual(["grok-x"]);
    expect(built.find((p) => p.id === "openai")!.models).toEqual(["gpt-realtime"]);
  });

  it("an unknown key under a known id stops start-up naming it", () => {
    let err: unknown;
    try {
      validateConfig(realtime({ gemini: { apiKey: "AIza-c", apikey: "typo" } }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TalkError);
    expect(String((err as TalkError).message) + JSON.stringify((err as TalkError).details)).toContain(
      "apikey",
    );
  });
});
