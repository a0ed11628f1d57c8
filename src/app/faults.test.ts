import { describe, expect, it } from "vitest";
import { validateConfig } from "../config/load-config.js";
import { TalkError } from "../core/errors.js";
import { NOOP_LOGGER } from "../core/logger.js";
import { ProviderRegistry } from "../core/provider-registry.js";
import { pcmChunk, type AudioChunk } from "../core/audio-chunk.js";
import type { TtsProvider, TtsRequest } from "../core/provider-types.js";
import type { TalkSession } from "../core/session-types.js";
import { resilientResolver, type SessionProviderWrap } from "./faults.js";

const PCM = { encoding: "pcm16", sampleRate: 16_000, channels: 1 } as const;

function tts(id: string, fails: boolean): TtsProvider {
  return {
    kind: "tts",
    id,
    label: id,
    capabilities: { streaming: true },
    health: async () => ({ ok: true }),
    async *synthesize(_request: TtsRequest): AsyncGenerator<AudioChunk> {
      if (fails) throw new TalkError("provider_unavailable", `${id} is down`, { retryable: true });
      yield pcmChunk(new Int16Array(320), PCM);
    },
  };
}

async function drain(provider: TtsProvider): Promise<void> {
  for await (const _chunk of provider.synthesize({ text: "hi", signal: new AbortController().signal })) {
    // consumed
  }
}

describe("the provider chains of the composition root", () => {
  it("wraps every provider of a chain, fallbacks too, for the session that resolved it, session after session", async () => {
    const { config } = validateConfig({
      talk: { faults: { retries: 0, retryBackoffMs: 0, fallback: { tts: ["backup"] } } },
    });
    const registry = new ProviderRegistry({ logger: NOOP_LOGGER });
    const primary = tts("primary", true);
    registry.register(primary).register(tts("backup", false));
    const calls: string[] = [];
    const wrap: SessionProviderWrap = (provider, session) => {
      if (provider.kind !== "tts") return provider;
      const wrapped: TtsProvider = {
        ...provider,
        synthesize: (request) => {
          calls.push(`${provider.id}@${session.id}`);
          return provider.synthesize(request);
        },
      };
      return wrapped as typeof provider;
    };
    const base = {
      stt: () => undefined,
      tts: () => primary,
      agent: () => undefined,
      realtime: () => undefined,
    };
    const resolver = resilientResolver(config, registry, base, NOOP_LOGGER, wrap);
    for (const id of ["a", "b", "c"]) await drain(resolver.tts({ id } as TalkSession)!);
    expect(calls).toEqual(["primary@a", "backup@a", "primary@b", "backup@b", "primary@c", "backup@c"]);
  });
});
