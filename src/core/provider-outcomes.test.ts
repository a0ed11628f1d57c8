import { describe, expect, it } from "vitest";
import { TalkError } from "./errors.js";
import { ProviderOutcomes } from "./provider-outcomes.js";
import { pcmChunk, type AudioChunk } from "./audio-chunk.js";
import type { TtsProvider, TtsRequest } from "./provider-types.js";

/** A TTS provider with a switch: failing or answering one chunk. */
class SwitchTts implements TtsProvider {
  readonly id = "switch";
  readonly kind = "tts" as const;
  readonly label = "switch";
  readonly capabilities = {};
  failing = true;
  readonly #secret = "private field reached through the proxy";
  async health() {
    return { ok: true, detail: this.#secret };
  }
  async *synthesize(_request: TtsRequest): AsyncIterable<AudioChunk> {
    if (this.failing) throw new TalkError("provider_unavailable", "503 from upstream");
    yield pcmChunk(new Int16Array(1), { encoding: "pcm16", sampleRate: 16000, channels: 1 });
  }
}

async function speak(p: TtsProvider): Promise<void> {
  try {
    for await (const _ of p.synthesize({ text: "hi", signal: new AbortController().signal } as TtsRequest)) {
      // drain
    }
  } catch {
    // counted by the monitor
  }
}

describe("ProviderOutcomes", () => {
  it("a provider failing threshold times in a row is not ready, and ready again after one success", async () => {
    const outcomes = new ProviderOutcomes({ failureThreshold: 3 });
    const inner = new SwitchTts();
    const tts = outcomes.monitor(inner);
    expect((await tts.health()).detail).toContain("private field");
    await speak(tts);
    await speak(tts);
    expect(outcomes.status("tts", "switch").ok).toBe(true);
    await speak(tts);
    const failing = outcomes.status("tts", "switch");
    expect(failing).toMatchObject({ ok: false, failures: 3, lastError: "provider_unavailable" });
    expect(failing.detail).not.toContain("503 from upstream");
    inner.failing = false;
    await speak(tts);
    expect(outcomes.status("tts", "switch")).toEqual({ ok: true, failures: 0 });
  });

  it("half-open: a failing provider is reported ready after retryAfterMs without failures, and fails again at once", async () => {
    let now = 0;
    const outcomes = new ProviderOutcomes({ failureThreshold: 2, retryAfterMs: 1000, now: () => now });
    const tts = outcomes.monitor(new SwitchTts());
    await speak(tts);
    await speak(tts);
    expect(outcomes.status("tts", "switch").ok).toBe(false);
    now = 1000;
    expect(outcomes.status("tts", "switch").ok).toBe(true);
    await speak(tts);
    expect(outcomes.status("tts", "switch").ok).toBe(false);
  });

  it("cancellations are no outcome", () => {
    const outcomes = new ProviderOutcomes({ failureThreshold: 1 });
    outcomes.failed("stt", "x", new TalkError("cancelled"));
    expect(outcomes.status("stt", "x").ok).toBe(true);
  });
});
