import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  eventually,
  LOOKUP_ORDER_TOOL,
  rejectionOf,
} from "../../../test/support/realtime-provider-checks.js";
import type { RealtimeProviderEvent, RealtimeVoiceSession } from "../../core/provider-types.js";
import { PCM16_24K, ULAW_8K } from "../../core/talk-types.js";
import { toneAudio } from "../../../test/support/fake-openai-realtime-server.js";
import { FakeXaiRealtimeServer, XAI_TEST_KEY } from "../../../test/support/fake-xai-realtime-server.js";
import { createXaiRealtimeProvider, type XaiRealtimeProvider } from "./xai-realtime-provider.js";

const TOOL = LOOKUP_ORDER_TOOL;

describe("xAI Voice Agent provider", () => {
  let fake: FakeXaiRealtimeServer;
  let provider: XaiRealtimeProvider;
  let voice: RealtimeVoiceSession | undefined;
  const events: RealtimeProviderEvent[] = [];

  beforeEach(async () => {
    fake = new FakeXaiRealtimeServer({
      replies: [{ audio: toneAudio(300, "g711_ulaw"), transcript: "Hi there." }],
    });
    const url = await fake.start();
    provider = createXaiRealtimeProvider({
      apiKey: XAI_TEST_KEY,
      baseUrl: url.replace(/^ws/, "http").replace(/\/realtime$/, ""),
    });
    events.length = 0;
  });
  afterEach(async () => {
    await voice?.close();
    voice = undefined;
    await fake.close();
  });

  const connect = (): Promise<RealtimeVoiceSession> =>
    provider.connect(
      {
        instructions: "Be brief.",
        tools: [TOOL],
        inputFormat: ULAW_8K,
        outputFormat: ULAW_8K,
        signal: new AbortController().signal,
      },
      (e) => events.push(e),
    );

  it("declares its capabilities: formats from 8 to 48 kHz and G.711, xAI's voices, tools, cancel and truncate", () => {
    const c = provider.capabilities;
    expect(c.voices).toEqual(["Ara", "Rex", "Sal", "Eve", "Leo"]);
    expect(c.inputFormats).toContainEqual(ULAW_8K);
    expect(c.inputFormats).toContainEqual({ encoding: "pcm16", sampleRate: 16000, channels: 1 });
    expect(c).toMatchObject({
      tools: true,
      truncate: true,
      responseCancel: true,
      gatewayRelay: true,
      clientSessions: true,
    });
    expect(c.transports).toEqual(["provider-websocket", "gateway-relay"]);
  });

  it("configures the session in xAI's shape and relays audio both ways with transcripts", async () => {
    voice = await connect();
    expect(fake.lastRequestUrl).toContain("model=grok-voice-latest");
    const update = fake.received.find((e) => e.type === "session.update")!.event.session as Record<
      string,
      unknown
    >;
    expect(update).toMatchObject({
      voice: "Ara",
      instructions: "Be brief.",
      turn_detection: { type: "server_vad" },
      audio: { input: { format: { type: "audio/pcmu" } }, output: { format: { type: "audio/pcmu" } } },
    });
    expect(update.type).toBeUndefined();
    expect(update.tools).toEqual([{ type: "function", ...TOOL }]);
    voice.appendAudio(toneAudio(400, "g711_ulaw", 300));
    voice.appendAudio(new Uint8Array(8000).fill(0xff));
    await eventually(events, (e) => e.type === "response_done");
    const types = events.map((e) => e.type);
    expect(types).toContain("speech_started");
    expect(types).toContain("speech_stopped");
    const audio = events.filter((e) => e.type === "audio_delta");
    expect(audio.reduce((n, e) => n + (e.type === "audio_delta" ? e.data.byteLength : 0), 0)).toBe(2400);
    expect(
      events.filter((e) => e.type === "transcript_done").map((e) => e.type === "transcript_done" && e.role),
    ).toEqual(["user", "assistant"]);
  });

  it("a tool call round trip: function_call_output and a new response", async () => {
    voice = await connect();
    const callId = fake.callTool({ name: "lookup_order", arguments: { id: "42" } });
    await eventually(events, (e) => e.type === "tool_call");
    expect(events.find((e) => e.type === "tool_call")).toMatchObject({
      callId,
      name: "lookup_order",
      argumentsJson: '{"id":"42"}',
    });
    voice.submitToolResult(callId, '{"status":"shipped"}');
    const created = await fake.waitFor((e) => e.type === "conversation.item.create");
    expect(created.event.item).toEqual({
      type: "function_call_output",
      call_id: callId,
      output: '{"status":"shipped"}',
    });
    await fake.waitFor((e) => e.type === "response.create");
  });

  it("bad frames from the server are non-fatal invalid_provider_event errors and the session goes on", async () => {
    voice = await connect();
    fake.sendRaw("not json at all");
    fake.sendRaw(JSON.stringify({ type: "response.output_audio.delta", response_id: "r1" }));
    await eventually(events, (e) => e.type === "error" && e.message.includes("response_id/item_id/delta"));
    const errors = events.filter((e) => e.type === "error");
    expect(errors.every((e) => e.type === "error" && e.code === "invalid_provider_event" && !e.fatal)).toBe(
      true,
    );
    voice.createResponse();
    await eventually(events, (e) => e.type === "response_done");
  });

  it("mints an ephemeral token with only expires_after and hands the client the Gateway's session.update", async () => {
    const grant = await provider.createClientSession({
      instructions: "Be brief.",
      tools: [TOOL],
      transport: "provider-websocket",
      voice: "Eve",
      signal: new AbortController().signal,
    });
    expect(fake.secretRequests).toEqual([{ expires_after: { seconds: 300 } }]);
    expect(grant.clientSecret).toBe(fake.secrets[0]!.value);
    expect(grant.endpoint).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/v1\/realtime\?model=grok-voice-latest$/);
    expect(grant.credentialIn).toEqual({ subprotocolPrefix: "xai-client-secret." });
    expect(grant.clientConfig).toMatchObject({
      type: "session.update",
      session: {
        voice: "Eve",
        instructions: "Be brief.",
        audio: { output: { format: { type: "audio/pcm", rate: 24000 } } },
      },
    });
    expect(Date.parse(grant.expiresAt)).toBeGreaterThan(Date.now());
  });

  it("refuses webrtc, unknown voices, and reports a refused key without echoing it", async () => {
    const base = { instructions: "x", tools: [], signal: new AbortController().signal };
    expect((await rejectionOf(provider.createClientSession({ ...base, transport: "webrtc" }))).code).toBe(
      "capability_unsupported",
    );
    expect(
      (
        await rejectionOf(
          provider.createClientSession({ ...base, transport: "provider-websocket", voice: "marin" }),
        )
      ).code,
    ).toBe("invalid_params");
    const wrong = createXaiRealtimeProvider({
      apiKey: "xai-wrong-key-that-must-not-leak",
      baseUrl: fake.url.replace(/^ws/, "http").replace(/\/realtime$/, ""),
    });
    const err = await rejectionOf(wrong.createClientSession({ ...base, transport: "provider-websocket" }));
    expect(err.code).toBe("provider_error");
    expect(err.details).toMatchObject({ status: 401 });
    expect(err.message).not.toContain("xai-wrong-key");
    const refused = await rejectionOf(
      wrong.connect({ ...base, inputFormat: PCM16_24K, outputFormat: PCM16_24K }, () => {}),
    );
    expect(refused.code).toBe("provider_unavailable");
  });

  it("a voice is matched without case, as xAI's docs spell it both ways, and sent as configured", async () => {
    const lower = createXaiRealtimeProvider({
      apiKey: XAI_TEST_KEY,
      baseUrl: fake.url.replace(/^ws/, "http").replace(/\/realtime$/, ""),
      voice: "eve",
    });
    const grant = await lower.createClientSession({
      instructions: "x",
      tools: [],
      transport: "provider-websocket",
      signal: new AbortController().signal,
    });
    expect(grant.voice).toBe("Eve");
    const asked = await provider.createClientSession({
      instructions: "x",
      tools: [],
      transport: "provider-websocket",
      voice: "rex",
      signal: new AbortController().signal,
    });
    expect(asked.clientConfig).toMatchObject({ session: { voice: "Rex" } });
  });

  it("bad options are config_invalid naming the field", () => {
    expect(() => createXaiRealtimeProvider({ voice: "alloy" })).toThrow(/xai-realtime: voice/);
    expect(() => createXaiRealtimeProvider({ clientSecretTtlSeconds: 1 })).toThrow(/clientSecretTtlSeconds/);
  });
});
