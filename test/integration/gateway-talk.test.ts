import { afterEach, describe, expect, it } from "vitest";
import { TALK_MODES } from "../../src/core/talk-types.js";
import { SlowTtsProvider } from "../support/gateway-slow-providers.js";
import { rejectionOf, startGateway } from "../support/gateway-harness.js";
import { warningsWhile } from "../support/process-warnings.js";
import type { GatewayHarness } from "../support/gateway-harness.js";

let h: GatewayHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("talk.catalog, talk.config, talk.speak, talk.mode", () => {
  it("talk.catalog reports capabilities built from provider declarations", async () => {
    h = await startGateway();
    const client = await h.connect({ as: "reader" });
    const catalog = (await client.request("talk.catalog")) as {
      modes: string[];
      providers: { id: string; kind: string }[];
      creationMatrix: { method: string; transport: string; available: boolean }[];
    };
    expect([...catalog.modes].sort()).toEqual([...TALK_MODES].sort());
    expect(catalog.providers.map((p) => p.id)).toEqual(
      expect.arrayContaining(["openai", "espeak-ng", "local-agent"]),
    );
    const webrtc = catalog.creationMatrix.find((c) => c.transport === "webrtc");
    expect(webrtc).toMatchObject({ method: "talk.client.create", available: true });
  });

  it("talk.speak returns espeak-ng audio with its format and duration", async () => {
    h = await startGateway();
    const client = await h.connect({ as: "writer" });
    const result = await client.request("talk.speak", { text: "Ready." });
    expect(result.format).toEqual({ encoding: "pcm16", sampleRate: 22_050, channels: 1 });
    const audio = Buffer.from(result.audioBase64, "base64");
    expect(audio.byteLength).toBe(result.bytes);
    expect(result.bytes).toBeGreaterThan(1000);
    expect(result.durationMs).toBe(Math.round((result.bytes / 2 / 22_050) * 1000));
    // Real speech, not silence.
    const samples = new Int16Array(audio.buffer, audio.byteOffset, audio.byteLength / 2);
    expect(samples.some((s) => Math.abs(s) > 1000)).toBe(true);
  });

  it("talk.speak creates no session", async () => {
    h = await startGateway();
    const client = await h.connect();
    await client.request("talk.speak", { text: "One shot." });
    expect(h.runtime.sessionCount).toBe(0);
  });

  it("talk.speak refuses text over the configured length with invalid_params", async () => {
    h = await startGateway({ options: { maxSpeakChars: 10 } });
    const client = await h.connect();
    const err = await rejectionOf(client.request("talk.speak", { text: "This is far too long." }));
    expect(err.code).toBe("invalid_params");
    expect(err.details?.issues).toEqual([expect.objectContaining({ path: "text" })]);
  });

  it("talk.speak refuses audio over the configured size with payload_too_large and stops the provider", async () => {
    const tts = new SlowTtsProvider();
    h = await startGateway({ tts, options: { maxSpeakAudioBytes: 100 } });
    const client = await h.connect();
    const err = await rejectionOf(client.request("talk.speak", { text: "Hello" }));
    expect(err.code).toBe("payload_too_large");
    expect(tts.signals).toHaveLength(1);
    expect(tts.signals[0]?.aborted).toBe(true);
  });

  it("a caller disconnecting mid-speak aborts the TTS provider's work", async () => {
    const tts = new SlowTtsProvider();
    h = await startGateway({ tts });
    const client = await h.connect();
    const pending = rejectionOf(client.request("talk.speak", { text: "A long answer" }));
    await tts.started;
    expect(tts.aborted).toHaveLength(0);
    await client.close();
    expect((await pending).code).toBe("cancelled");
    await expect.poll(() => tts.aborted.length).toBe(1);
  });

  it("twelve speeches in flight on one connection: no MaxListenersExceededWarning, and a disconnect stops all twelve", async () => {
    const tts = new SlowTtsProvider();
    h = await startGateway({ tts });
    const client = await h.connect();
    let pending: ReturnType<typeof rejectionOf>[] = [];
    const warnings = await warningsWhile(async () => {
      pending = Array.from({ length: 12 }, () =>
        rejectionOf(client.request("talk.speak", { text: "A long answer" })),
      );
      await expect.poll(() => tts.signals.length).toBe(12);
    });
    expect(warnings).not.toContain("MaxListenersExceededWarning");
    await client.close();
    for (const err of await Promise.all(pending)) expect(err.code).toBe("cancelled");
    await expect.poll(() => tts.aborted.length).toBe(12);
  });

  it("talk.mode reads the mode, and setting it broadcasts talk.mode to every connection", async () => {
    h = await startGateway();
    const setter = await h.connect({ as: "writer" });
    const watcher = await h.connect({ as: "reader" });
    expect(await watcher.request("talk.mode")).toMatchObject({ enabled: false });
    const seen = new Promise((resolve) => watcher.on("talk.mode", resolve));
    const set = await setter.request("talk.mode", { enabled: true, phase: "listening" });
    expect(set).toMatchObject({ enabled: true, phase: "listening" });
    expect(await seen).toEqual(set);
    expect(await watcher.request("talk.mode")).toEqual(set);
  });

  it("talk.mode with a phase but no enabled flag is invalid_params", async () => {
    h = await startGateway();
    const client = await h.connect();
    expect((await rejectionOf(client.request("talk.mode", { phase: "x" }))).code).toBe("invalid_params");
  });
});
