import { describe, expect, it } from "vitest";
import { buildTalkCatalog } from "./talk-catalog.js";
import { PCM16_16K, PCM16_24K, ULAW_8K } from "./talk-types.js";
import { agentFixture, realtimeFixture, sttFixture, ttsFixture } from "./testing/provider-fixtures.js";

const available = (catalog: ReturnType<typeof buildTalkCatalog>) =>
  catalog.creationMatrix.filter((c) => c.available).map((c) => `${c.mode}/${c.transport}/${c.brain}`);

describe("buildTalkCatalog", () => {
  it("advertises nothing without providers", () => {
    const catalog = buildTalkCatalog({ providers: [] });
    expect(catalog.modes).toEqual([]);
    expect(available(catalog)).toEqual([]);
    expect(catalog.creationMatrix).toHaveLength(6);
    expect(catalog).toMatchObject({
      clientSessions: false,
      gatewayRelay: false,
      managedRoom: false,
      localStt: false,
      localTts: false,
    });
  });

  it("reports a provider with an odd id by its declared capabilities", () => {
    const oddRealtime = realtimeFixture("zz-banana-9", {
      clientSessions: true,
      transports: ["webrtc"],
      models: ["m-1"],
      voices: ["v-1"],
      outputFormats: [PCM16_24K],
    });
    const catalog = buildTalkCatalog({ providers: [oddRealtime, agentFixture("brain")] });
    expect(available(catalog)).toEqual(["realtime/webrtc/agent-consult"]);
    expect(catalog.creationMatrix[0]).toMatchObject({
      method: "talk.client.create",
      providers: { realtime: ["zz-banana-9"], agent: ["brain"] },
    });
    expect(catalog.clientSessions).toBe(true);
    expect(catalog.gatewayRelay).toBe(false);
    expect(catalog.models.realtime).toEqual(["m-1"]);
    expect(catalog.voices.realtime).toEqual(["v-1"]);
    expect(catalog.outputFormats).toEqual([PCM16_24K]);
    expect(catalog.providers[0]).toMatchObject({ id: "zz-banana-9", kind: "realtime", default: true });
  });

  it("does not infer capabilities from a well-known-looking id", () => {
    const catalog = buildTalkCatalog({
      providers: [realtimeFixture("openai-realtime"), agentFixture("openai")],
    });
    expect(available(catalog)).toEqual([]);
    expect(catalog.clientSessions).toBe(false);
  });

  it("builds stt-tts, transcription and local support from STT, TTS and agent declarations", () => {
    const catalog = buildTalkCatalog({
      providers: [
        sttFixture("ears", { local: true, inputFormats: [PCM16_16K, PCM16_16K] }),
        ttsFixture("mouth", { local: true, voices: ["en"], outputFormats: [PCM16_16K, ULAW_8K] }),
      ],
    });
    expect(available(catalog)).toEqual([
      "transcription/gateway-relay/none",
      "stt-tts/managed-room/direct-tools",
    ]);
    expect(catalog.modes).toEqual(["stt-tts", "transcription"]);
    expect(catalog.brains).toEqual(["direct-tools", "none"]);
    expect(catalog).toMatchObject({ managedRoom: true, gatewayRelay: true, localStt: true, localTts: true });
    expect(catalog.inputFormats).toEqual([PCM16_16K]);
    expect(catalog.outputFormats).toEqual([PCM16_16K, ULAW_8K]);
  });

  it("respects declared mode and transport restrictions and marks the configured default", () => {
    const catalog = buildTalkCatalog({
      providers: [
        sttFixture("captions-only", { modes: ["transcription"] }),
        ttsFixture("t1"),
        ttsFixture("t2"),
        agentFixture("brain"),
        realtimeFixture("relay", { gatewayRelay: true, transports: ["gateway-relay"] }),
      ],
      defaults: { tts: "t2" },
    });
    expect(available(catalog)).toEqual([
      "realtime/gateway-relay/agent-consult",
      "transcription/gateway-relay/none",
    ]);
    expect(catalog.providers.filter((p) => p.kind === "tts").map((p) => [p.id, p.default])).toEqual([
      ["t1", false],
      ["t2", true],
    ]);
    expect(JSON.parse(JSON.stringify(catalog))).toEqual(catalog);
  });
});
