/**
 * The second and third realtime providers end to end, each against its own
 * stand-in written from the vendor's documentation: a phone call through the
 * Twilio stand-in (real speech both ways, a barge-in), a Talk API relay
 * session, a client-owned session's token, and talk.catalog listing the three
 * realtime providers from their declarations.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TalkClient } from "../../src/client/index.js";
import type { TalkCatalog } from "../../src/core/talk-catalog.js";
import type { ClientCreateResult, TalkAudioPayload, TalkEvent } from "../../src/client/index.js";
import { speechAudio, toneAudio } from "../support/fake-openai-realtime-server.js";
import { FakeGeminiLiveServer, GEMINI_TEST_KEY, tone24k } from "../support/fake-gemini-live-server.js";
import { FakeXaiRealtimeServer, XAI_TEST_KEY } from "../support/fake-xai-realtime-server.js";
import { createGeminiLiveProvider } from "../../src/providers/gemini-live/gemini-live-provider.js";
import { createXaiRealtimeProvider } from "../../src/providers/xai-realtime/xai-realtime-provider.js";
import {
  sessionOfCall,
  startTelephony,
  WRITE_TOKEN,
  type TelephonyHarness,
} from "../support/telephony-harness.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";

const callerSpeech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const callerSilence = new Uint8Array(8000).fill(0xff); // 1 s of u-law silence ends the turn
const talkSpeech = new Uint8Array(readFileSync(SPEECH_RECORDINGS.goforward)); // 16 kHz PCM16

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

/** All three realtime providers configured, `vendor` the default one. */
function realtimeConfig(
  vendor: "xai" | "gemini",
  xaiUrl: string,
  geminiUrl: string,
): Record<string, unknown> {
  return {
    realtime: {
      provider: vendor,
      providers: {
        openai: { apiKey: "sk-not-used-here", baseUrl: "http://127.0.0.1:9/v1" },
        xai: { apiKey: XAI_TEST_KEY, baseUrl: xaiUrl },
        gemini: { apiKey: GEMINI_TEST_KEY, baseUrl: geminiUrl },
      },
    },
  };
}

async function talkSession(
  h: TelephonyHarness,
  provider: string,
): Promise<{ client: TalkClient; sessionId: string; audio: TalkAudioPayload[]; events: TalkEvent[] }> {
  const client = await TalkClient.connect(`ws://127.0.0.1:${h.port}/talk`, { token: WRITE_TOKEN });
  const audio: TalkAudioPayload[] = [];
  const events: TalkEvent[] = [];
  client.on("talk.audio", (a) => audio.push(a));
  client.on("talk.event", (e) => events.push(e));
  const { sessionId } = await client.request("talk.session.create", {
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    provider,
  });
  return { client, sessionId, audio, events };
}

/** talk.client.create of a client-owned provider-websocket session on `provider`. */
async function clientCreate(h: TelephonyHarness, provider: string): Promise<ClientCreateResult> {
  const client = await TalkClient.connect(`ws://127.0.0.1:${h.port}/talk`, { token: WRITE_TOKEN });
  try {
    return await client.request("talk.client.create", {
      mode: "realtime",
      transport: "provider-websocket",
      brain: "agent-consult",
      provider,
    });
  } finally {
    await client.close();
  }
}

async function speak(client: TalkClient, sessionId: string): Promise<void> {
  const silence = new Uint8Array(32000);
  for (const buf of [talkSpeech, silence]) {
    for (let at = 0; at < buf.length; at += 6400) {
      const audioBase64 = Buffer.from(buf.subarray(at, at + 6400)).toString("base64");
      await client.request("talk.session.appendAudio", { sessionId, audioBase64 });
    }
  }
}

describe("xAI Voice Agent through the whole server", () => {
  let h: TelephonyHarness;
  let xai: FakeXaiRealtimeServer;
  let gemini: FakeGeminiLiveServer;
  const reply = speechAudio("Sure, I can help.", "g711_ulaw");

  beforeAll(async () => {
    xai = new FakeXaiRealtimeServer({ replies: [{ audio: reply, transcript: "Sure, I can help." }] });
    gemini = new FakeGeminiLiveServer();
    const xaiUrl = (await xai.start()).replace(/^ws/, "http").replace(/\/realtime$/, "");
    h = await startTelephony({ mode: "realtime", talk: realtimeConfig("xai", xaiUrl, await gemini.start()) });
  });
  afterAll(async () => {
    await h?.close();
    await xai.close();
    await gemini.close();
  });

  it("a phone call: u-law passes through to xAI and back, with transcripts", async () => {
    const updates = xai.received.filter((e) => e.type === "session.update").length;
    const client = await h.dial({ waitForProvider: false });
    await xai.waitFor(() => xai.received.filter((e) => e.type === "session.update").length > updates);
    await client.sendAudio(callerSpeech, { pace: "fast" });
    await client.sendAudio(callerSilence, { pace: "fast" });
    await client.waitFor(() => client.receivedAudioMs >= reply.length / 8);
    const session = xai.session as { voice: string; audio: { input: { format: unknown } } };
    expect(session.voice).toBe("Ara");
    expect(session.audio.input.format).toEqual({ type: "audio/pcmu" });
    const sessionId = sessionOfCall(h, client.callSid)!;
    await waitUntil(() => h.eventsOf(sessionId, "output.audio.done").length === 1);
    expect(h.eventsOf(sessionId, "transcript.done").map((e) => (e.payload as { role: string }).role)).toEqual(
      ["user", "assistant"],
    );
    // The caller's audio that reached xAI, as input.audio.appended: coalesced to one event per second of
    // audio by default (not one per 20 ms frame), adding up to what was sent but for the last < 1 s not
    // reported yet.
    const sentMs = (callerSpeech.length + callerSilence.length) / 8;
    const appended = h
      .eventsOf(sessionId, "input.audio.appended")
      .map((e) => e.payload as { durationMs: number });
    const appendedMs = appended.reduce((n, p) => n + p.durationMs, 0);
    expect(appendedMs).toBeGreaterThan(sentMs - 1000);
    expect(appendedMs).toBeLessThanOrEqual(sentMs);
    expect(appended.length).toBeLessThan(sentMs / 500);
    await client.stop();
  });

  it("a barge-in on a phone call: clear, response.cancel and truncate at the heard position", async () => {
    const updates = xai.received.filter((e) => e.type === "session.update").length;
    const client = await h.dial({ waitForProvider: false, playback: "manual" });
    await xai.waitFor(() => xai.received.filter((e) => e.type === "session.update").length > updates);
    const sessionId = sessionOfCall(h, client.callSid)!;
    xai.respond({ audio: toneAudio(6000, "g711_ulaw"), holdAfterDeltas: 30 });
    await client.waitFor(() => client.receivedAudioMs >= 2000);
    client.play(1000);
    await client.waitFor(() => client.marksEchoed.length >= 5);
    const before = xai.audioMsReceived;
    await client.sendAudio(new Uint8Array(160).fill(0xff));
    await waitUntil(() => xai.audioMsReceived > before);
    xai.triggerSpeechStarted();
    await client.waitFor(() => client.clears === 1);
    const truncate = await xai.waitFor((e) => e.type === "conversation.item.truncate");
    expect(truncate.event.audio_end_ms).toBe(1000);
    expect(xai.received.some((e) => e.type === "response.cancel")).toBe(true);
    await waitUntil(() => h.eventsOf(sessionId, "output.audio.cancelled").length === 1);
    await client.stop();
  });

  it("a Talk API relay session: 16 kHz PCM straight to xAI, the answer back as talk.audio", async () => {
    const { client, sessionId, audio, events } = await talkSession(h, "xai");
    try {
      await waitUntil(
        () => (xai.session.audio as { input: { format: { rate?: number } } }).input.format.rate === 16000,
      );
      xai.respond({
        audio: new Uint8Array(speechAudio("Hello there.", "pcm16")),
        transcript: "Hello there.",
      });
      await waitUntil(() => events.some((e) => e.sessionId === sessionId && e.type === "output.audio.done"));
      expect(audio.length).toBeGreaterThan(0);
      expect(audio[0]).toMatchObject({ sessionId });
    } finally {
      await client.close();
    }
  });

  it("a client-owned provider-websocket session gets an ephemeral token and the Gateway's session.update", async () => {
    const grant = await clientCreate(h, "xai");
    expect(grant.clientSecret).toBe(xai.secrets.at(-1)!.value);
    expect(grant.credentialIn).toEqual({ subprotocolPrefix: "xai-client-secret." });
    expect(grant.clientConfig).toMatchObject({ type: "session.update", session: { voice: "Ara" } });
    expect(xai.secretRequests.at(-1)).toEqual({ expires_after: { seconds: 300 } });
  });

  it("talk.catalog lists the three realtime providers from their declarations", async () => {
    const client = await TalkClient.connect(`ws://127.0.0.1:${h.port}/talk`, { token: WRITE_TOKEN });
    try {
      const catalog = (await client.request("talk.catalog")) as TalkCatalog;
      const realtime = catalog.providers.filter((p) => p.kind === "realtime");
      expect(realtime.map((p) => p.id).sort()).toEqual(["gemini", "openai", "xai"]);
      expect(realtime.find((p) => p.id === "xai")).toMatchObject({
        default: true,
        capabilities: { truncate: true },
      });
      expect(realtime.find((p) => p.id === "gemini")!.capabilities).toMatchObject({
        truncate: false,
        responseCancel: false,
        inputFormats: [{ encoding: "pcm16", sampleRate: 16000, channels: 1 }],
      });
      expect(catalog.voices.realtime).toEqual(expect.arrayContaining(["marin", "Ara", "Puck"]));
      // Each entry is the provider's own declaration, as built from the same configuration.
      const declared = {
        xai: createXaiRealtimeProvider({ id: "xai", apiKey: XAI_TEST_KEY, baseUrl: "http://127.0.0.1:9/v1" })
          .capabilities,
        gemini: createGeminiLiveProvider({ id: "gemini", apiKey: GEMINI_TEST_KEY, baseUrl: gemini.url })
          .capabilities,
      };
      for (const id of ["xai", "gemini"] as const)
        expect(realtime.find((p) => p.id === id)!.capabilities).toEqual(
          JSON.parse(JSON.stringify(declared[id])),
        );
      // The creation matrix follows the declarations: all three relay; the client-owned provider
      // WebSocket is offered by each, WebRTC by OpenAI alone.
      const providersOf = (method: string, transport: string): string[] | undefined =>
        catalog.creationMatrix
          .find((c) => c.method === method && c.transport === transport && c.mode === "realtime")
          ?.providers.realtime?.slice()
          .sort();
      expect(providersOf("talk.session.create", "gateway-relay")).toEqual(["gemini", "openai", "xai"]);
      expect(providersOf("talk.client.create", "provider-websocket")).toEqual(["gemini", "openai", "xai"]);
      expect(providersOf("talk.client.create", "webrtc")).toEqual(["openai"]);
    } finally {
      await client.close();
    }
  });
});

describe("Gemini Live through the whole server", () => {
  let h: TelephonyHarness;
  let xai: FakeXaiRealtimeServer;
  let gemini: FakeGeminiLiveServer;
  const reply = new Uint8Array(speechAudio("Sure, I can help.", "pcm16"));

  beforeAll(async () => {
    xai = new FakeXaiRealtimeServer();
    const answer = { audio: reply, transcript: "Sure, I can help." };
    gemini = new FakeGeminiLiveServer({ replies: [answer, answer] });
    const xaiUrl = (await xai.start()).replace(/^ws/, "http").replace(/\/realtime$/, "");
    h = await startTelephony({
      mode: "realtime",
      talk: realtimeConfig("gemini", xaiUrl, await gemini.start()),
    });
  });
  afterAll(async () => {
    await h?.close();
    await xai.close();
    await gemini.close();
  });

  it("a phone call: caller speech reaches Gemini as 16 kHz PCM, its 24 kHz answer the caller as u-law", async () => {
    const connections = gemini.connections;
    const client = await h.dial({ waitForProvider: false });
    await waitUntil(() => gemini.connections > connections && gemini.setup !== undefined);
    await client.sendAudio(callerSpeech, { pace: "fast" });
    await client.sendAudio(callerSilence, { pace: "fast" });
    const replyMs = reply.length / 48;
    await client.waitFor(() => client.receivedAudioMs >= replyMs - 40);
    const frames = client.received.filter((m) => m.event === "media");
    // Whole 20 ms frames, up to a burst's 10 in one message (Twilio plays any length).
    expect(
      frames.every((m) => {
        const n = Buffer.from(String((m.media as { payload: string }).payload), "base64").length;
        return n > 0 && n % 160 === 0 && n <= 1600;
      }),
    ).toBe(true);
    expect(gemini.audioMsReceived).toBeGreaterThan(2000);
    const sessionId = sessionOfCall(h, client.callSid)!;
    await waitUntil(() => h.eventsOf(sessionId, "output.audio.done").length === 1);
    const transcripts = h
      .eventsOf(sessionId, "transcript.done")
      .map((e) => e.payload as { role: string; text: string });
    expect(transcripts).toEqual([
      { role: "user", text: "(caller speech)" },
      { role: "assistant", text: "Sure, I can help." },
    ]);
    await client.stop();
  });

  it("a barge-in: Gemini's interrupted clears the line and cancels the answer; nothing is truncated", async () => {
    const connections = gemini.connections;
    const client = await h.dial({ waitForProvider: false, playback: "manual" });
    await waitUntil(() => gemini.connections > connections && gemini.setup !== undefined);
    const sessionId = sessionOfCall(h, client.callSid)!;
    gemini.respond({ audio: tone24k(6000), chunkBytes: 4800 });
    await client.waitFor(() => client.receivedAudioMs >= 2000);
    gemini.interrupt();
    await client.waitFor(() => client.clears === 1);
    await waitUntil(() => h.eventsOf(sessionId, "output.audio.cancelled").length === 1);
    expect(h.eventsOf(sessionId, "output.audio.cancelled")[0]!.payload).toMatchObject({ reason: "barge_in" });
    expect(h.eventsOf(sessionId, "output.audio.done")).toHaveLength(0);
    await client.stop();
  });

  it("a Talk API relay session: 16 kHz in and 24 kHz out pass untouched", async () => {
    const { client, sessionId, audio, events } = await talkSession(h, "gemini");
    try {
      await waitUntil(() => gemini.setup !== undefined && !gemini.modelSpeaking);
      await speak(client, sessionId);
      await waitUntil(() => events.some((e) => e.sessionId === sessionId && e.type === "output.audio.done"));
      const bytes = audio.reduce((n, a) => n + Buffer.from(a.audioBase64, "base64").length, 0);
      expect(bytes).toBe(reply.length);
      expect(events.filter((e) => e.type === "transcript.done")).toHaveLength(2);
      // The client's audio that reached Gemini, reported to the client in 1 s (32 000-byte) events.
      const appended = events
        .filter((e) => e.sessionId === sessionId && e.type === "input.audio.appended")
        .map((e) => (e.payload as { bytes: number }).bytes);
      const sent = talkSpeech.length + 32000;
      expect(appended.reduce((n, b) => n + b, 0)).toBeGreaterThan(sent - 32000);
      expect(appended.filter((b) => b !== 32000).length).toBeLessThanOrEqual(3);
    } finally {
      await client.close();
    }
  });

  it("a client-owned provider-websocket session gets a one-use token bound to the Gateway's setup", async () => {
    const grant = await clientCreate(h, "gemini");
    expect(grant.clientSecret).toBe(gemini.tokens.at(-1)!.name);
    expect(grant.credentialIn).toEqual({ query: "access_token" });
    expect(grant.endpoint).toContain("BidiGenerateContentConstrained");
    expect(gemini.tokenRequests.at(-1)).toMatchObject({
      uses: 1,
      bidiGenerateContentSetup: { model: expect.stringMatching(/^models\//) },
    });
  });
});
