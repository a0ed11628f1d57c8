/**
 * Speech providers that fail under an stt-tts phone call: the OpenAI-compatible
 * STT and TTS (the local stand-in answering 503 or hanging, as the API's
 * documented error shape and streaming allow) and an agent endpoint answering
 * 503 (the local chat completions stand-in). A transient failure is retried;
 * a kind that keeps failing falls back to its local engine; when nothing is
 * left, the caller hears the apology (the pre-rendered audio, byte for
 * byte), never silence, and the call goes on.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { renderLine } from "../../src/app/faults.js";
import { ULAW_8K } from "../../src/core/talk-types.js";
import { createEspeakTts } from "../../src/providers/index.js";
import { FakeChatCompletionsServer } from "../support/fake-chat-completions-server.js";
import { FakeOpenAiServer } from "../support/fake-openai-server.js";
import { sessionOfCall, startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";
import {
  loadSpeechUlaw,
  SPEECH_RECORDINGS,
  type TwilioStreamClient,
} from "../support/twilio-stream-client.js";

const KEY = "sk-test-speech-0123456789abcdef";
const APOLOGY = "Sorry, one moment please.";
const HOLDING = "Still with you, just a moment.";
const UNAVAILABLE = { error: { message: "overloaded", type: "server_error", param: null, code: null } };

let h: TelephonyHarness | undefined;
let openai: FakeOpenAiServer | undefined;
let agent: FakeChatCompletionsServer | undefined;
afterEach(async () => {
  await h?.close();
  await openai?.close();
  await agent?.close();
  h = undefined;
  openai = undefined;
  agent = undefined;
});

let apology: Uint8Array = new Uint8Array(0);
let holding: Uint8Array = new Uint8Array(0);
beforeAll(async () => {
  apology = (await renderLine(createEspeakTts(), APOLOGY)).audioFor(ULAW_8K).data;
  holding = (await renderLine(createEspeakTts(), HOLDING)).audioFor(ULAW_8K).data;
});

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

/** Where the apology's first second starts in what the caller heard, or -1. */
function apologyAt(client: TwilioStreamClient): number {
  return Buffer.concat(client.media).indexOf(Buffer.from(apology.subarray(0, 8000)));
}

/** Where the holding line starts in what the caller heard, or -1. */
function holdingAt(client: TwilioStreamClient): number {
  return Buffer.concat(client.media).indexOf(Buffer.from(holding.subarray(0, 8000)));
}

/** A call on the OpenAI-compatible STT and TTS (the local stand-in), with talk.faults `faults`. */
async function call(faults: Record<string, unknown>, config: Record<string, unknown> = {}) {
  openai = new FakeOpenAiServer({ apiKey: KEY });
  const baseUrl = await openai.start();
  h = await startTelephony({
    mode: "stt-tts",
    talk: {
      providers: {
        openai: {
          baseUrl,
          apiKey: KEY,
          stt: { model: "gpt-4o-mini-transcribe" },
          tts: { model: "gpt-4o-mini-tts", voice: "coral" },
        },
      },
      faults: { apology: APOLOGY, holding: HOLDING, retryBackoffMs: 20, ...faults },
    },
    config,
  });
  const client = await h.dial();
  return { client, sessionId: sessionOfCall(h, client.callSid)! };
}

/** The caller says something and stops. */
async function speak(client: TwilioStreamClient): Promise<void> {
  await client.sendAudio(silence(300), { pace: "fast" });
  await client.sendAudio(speech, { pace: "fast" });
  await client.sendAudio(silence(1500), { pace: "fast" });
}

const requestsTo = (path: string) => openai!.requests.filter((r) => r.path === path).length;

describe("telephony: speech providers fail under an stt-tts call", () => {
  it("TTS answering 503 every time, no fallback: retried, then the caller hears the apology; the call goes on", async () => {
    const { client, sessionId } = await call({ retries: 1, fallback: { tts: [] } });
    openai!.failNext(503, UNAVAILABLE, Number.POSITIVE_INFINITY, "/v1/audio/speech");
    await speak(client);
    await client.waitFor(() => apologyAt(client) >= 0);
    expect(requestsTo("/v1/audio/speech")).toBe(2); // the first try and one retry
    expect(h!.eventsOf(sessionId, "session.error").at(-1)!.payload).toMatchObject({
      details: { provider: "tts", recovery: "recover" },
    });
    expect(client.closeCode).toBeUndefined();
    expect(h!.eventsOf(sessionId, "session.closed")).toHaveLength(0);
  });

  it("TTS answering 503 once: the retry speaks the answer, no apology", async () => {
    const { client, sessionId } = await call({ retries: 2, fallback: { tts: [] } });
    openai!.failNext(503, UNAVAILABLE, 1, "/v1/audio/speech");
    await speak(client);
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    expect(openai!.speeches.length).toBeGreaterThan(0);
    expect(apologyAt(client)).toBe(-1);
    expect(h!.eventsOf(sessionId, "session.error")).toHaveLength(0);
  });

  it("TTS answering 503 every time: the local engine (the default fallback) speaks the answer", async () => {
    const { client, sessionId } = await call({ retries: 1 });
    openai!.failNext(503, UNAVAILABLE, Number.POSITIVE_INFINITY, "/v1/audio/speech");
    await speak(client);
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    expect(openai!.speeches).toHaveLength(0);
    expect(client.receivedAudioMs).toBeGreaterThan(300);
    expect(apologyAt(client)).toBe(-1);
    expect(h!.eventsOf(sessionId, "session.error")).toHaveLength(0);
  });

  it("TTS hanging (headers, then nothing): after firstByteTimeoutMs the apology", async () => {
    const { client, sessionId } = await call({ retries: 0, firstByteTimeoutMs: 500, fallback: { tts: [] } });
    openai!.audio.stallAfterChunks = 0;
    await speak(client);
    await client.waitFor(() => apologyAt(client) >= 0);
    expect(h!.eventsOf(sessionId, "session.error").at(-1)!.payload).toMatchObject({
      code: "timeout",
      details: { fault: "stalled", provider: "tts" },
    });
  });

  it("STT answering 503 every time, no fallback: the apology", async () => {
    const { client, sessionId } = await call({ retries: 1, fallback: { stt: [] } });
    openai!.failNext(503, UNAVAILABLE, Number.POSITIVE_INFINITY, "/v1/audio/transcriptions");
    await speak(client);
    await client.waitFor(() => apologyAt(client) >= 0);
    expect(requestsTo("/v1/audio/transcriptions")).toBe(2);
    expect(h!.eventsOf(sessionId, "session.error").at(-1)!.payload).toMatchObject({
      details: { provider: "stt", recovery: "recover" },
    });
  });

  it("STT hanging: after firstByteTimeoutMs the turn's audio is replayed into the local engine, which hears it", async () => {
    // The local engine is not timed (its speed is the machine's): only the hung request is.
    const { client, sessionId } = await call({ retries: 0, firstByteTimeoutMs: 500 });
    openai!.audio.stallAfterDeltas = 0;
    await speak(client);
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    const user = h!
      .eventsOf(sessionId, "transcript.done")
      .find((e) => (e.payload as { role: string }).role === "user")!;
    expect((user.payload as { text: string }).text.length).toBeGreaterThan(0);
    expect(openai!.transcriptions).toHaveLength(1); // the hung request, then pocketsphinx
    expect(apologyAt(client)).toBe(-1);
  });

  it("the agent answering 503 every time: retried, then the apology", async () => {
    agent = new FakeChatCompletionsServer({ errorStatus: 503, errorBody: JSON.stringify(UNAVAILABLE) });
    const agentUrl = await agent.start();
    const { client, sessionId } = await call(
      { retries: 1 },
      { agent: { endpoint: { baseUrl: agentUrl, model: "fake-model", apiKey: "test-key" } } },
    );
    await speak(client);
    await client.waitFor(() => apologyAt(client) >= 0);
    expect(agent.requests).toHaveLength(2);
    expect(h!.eventsOf(sessionId, "session.error").at(-1)!.payload).toMatchObject({
      details: { provider: "agent" },
    });
  });
});

describe("telephony: a hanging agent endpoint under an stt-tts call (issue 38)", () => {
  it("accepts and never answers: a fault after firstByteTimeoutMs and its retries, session.error and the apology", async () => {
    agent = new FakeChatCompletionsServer({ hang: true });
    const agentUrl = await agent.start();
    const { client, sessionId } = await call(
      { retries: 1, firstByteTimeoutMs: 600 },
      { agent: { endpoint: { baseUrl: agentUrl, model: "fake-model", apiKey: "test-key" } } },
    );
    await speak(client);
    await client.waitFor(() => apologyAt(client) >= 0);
    // The first request and one retry, each given up (its connection closed), not left open.
    expect(agent.requests).toHaveLength(2);
    await waitUntil(() => agent!.disconnects === 2);
    expect(h!.eventsOf(sessionId, "session.error").at(-1)!.payload).toMatchObject({
      code: "timeout",
      details: { fault: "stalled", provider: "agent", recovery: "recover" },
    });
    expect(h!.eventsOf(sessionId, "turn.cancelled").at(-1)!.payload).toMatchObject({ reason: "error" });
    expect(client.closeCode).toBeUndefined();
    // agent.endpoint.timeoutMs is still the whole answer's limit (its default, 120 s).
    expect(h!.app.config.agent.endpoint?.timeoutMs).toBe(120_000);
  });
});

describe("telephony: a late recognizer or synthesizer says the holding line (issue 38)", () => {
  it("STT hanging: the holding line while the hung request is waited for, then the answer; no fault", async () => {
    const { client, sessionId } = await call({ retries: 0, firstByteTimeoutMs: 4000, holdingAfterMs: 300 });
    openai!.audio.stallAfterDeltas = 0;
    await speak(client);
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    const at = holdingAt(client);
    expect(at).toBeGreaterThanOrEqual(0);
    // Said before the answer: the answer's audio follows the whole line.
    expect(Buffer.concat(client.media).length).toBeGreaterThan(at + holding.length);
    expect(apologyAt(client)).toBe(-1);
    expect(h!.eventsOf(sessionId, "session.error")).toHaveLength(0);
  });

  it("TTS hanging: the holding line, then the local engine's answer after the stall", async () => {
    const { client, sessionId } = await call({ retries: 0, firstByteTimeoutMs: 2000, holdingAfterMs: 300 });
    openai!.audio.stallAfterChunks = 0;
    await speak(client);
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    const at = holdingAt(client);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(Buffer.concat(client.media).length).toBeGreaterThan(at + holding.length);
    expect(apologyAt(client)).toBe(-1);
    expect(h!.eventsOf(sessionId, "session.error")).toHaveLength(0);
  });

  it("said once a turn: a second late request in the same turn adds nothing", async () => {
    // STT late, then TTS late: one holding line.
    const { client, sessionId } = await call({ retries: 0, firstByteTimeoutMs: 1500, holdingAfterMs: 300 });
    openai!.audio.stallAfterDeltas = 0;
    openai!.audio.stallAfterChunks = 0;
    await speak(client);
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    const heard = Buffer.concat(client.media);
    const first = holdingAt(client);
    expect(first).toBeGreaterThanOrEqual(0);
    expect(heard.indexOf(Buffer.from(holding.subarray(0, 8000)), first + 1)).toBe(-1);
  });
});

describe("telephony: provider health on the session's events (issue 36)", () => {
  it("a TTS failing once then answering: health.changed ok false (its code), then ok true, naming the provider", async () => {
    const { client, sessionId } = await call({ retries: 2, fallback: { tts: [] } });
    openai!.failNext(503, UNAVAILABLE, 1, "/v1/audio/speech");
    await speak(client);
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    const health = h!.eventsOf(sessionId, "health.changed");
    expect(health.map((e) => [e.provider, e.payload])).toEqual([
      ["openai", expect.objectContaining({ ok: false, kind: "tts", code: "provider_unavailable" })],
      ["openai", { ok: true, kind: "tts" }],
    ]);
  });

  it("a realtime provider dropped: health.changed ok false, then ok true once the new session is up", async () => {
    h = await startTelephony({ mode: "realtime", talk: { faults: { retryBackoffMs: 20 } } });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    const connections = h.realtime!.connections;
    h.realtime!.disconnect();
    await waitUntil(() => h!.eventsOf(sessionId, "health.changed").length === 2);
    expect(h.realtime!.connections).toBeGreaterThan(connections);
    expect(h.eventsOf(sessionId, "health.changed").map((e) => e.payload)).toEqual([
      expect.objectContaining({ ok: false, kind: "realtime", fault: "connection_lost" }),
      { ok: true, kind: "realtime" },
    ]);
  });
});
