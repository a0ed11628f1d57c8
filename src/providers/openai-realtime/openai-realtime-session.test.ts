import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type {
  RealtimeProviderEvent,
  RealtimeSessionOptions,
  RealtimeVoiceSession,
} from "../../core/provider-types.js";
import { PCM16_24K, ULAW_8K } from "../../core/talk-types.js";
import {
  FakeOpenAiRealtimeServer,
  speechAudio,
  toneAudio,
} from "../../../test/support/fake-openai-realtime-server.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../../../test/support/twilio-stream-client.js";
import { connectOpenAiRealtime, realtimeUrl } from "./openai-realtime-session.js";
import { mapServerEvent } from "./openai-realtime-session-events.js";

const KEY = "sk-test-realtime";
const TOOLS = [
  {
    name: "end_call",
    description: "Ends the call.",
    parameters: { type: "object", properties: { reason: { type: "string" } } },
  },
];

class Events {
  readonly list: RealtimeProviderEvent[] = [];
  #waiters: Array<() => void> = [];
  readonly push = (e: RealtimeProviderEvent): void => {
    this.list.push(e);
    for (const w of [...this.#waiters]) w();
  };
  of<T extends RealtimeProviderEvent["type"]>(type: T): Array<Extract<RealtimeProviderEvent, { type: T }>> {
    return this.list.filter((e): e is Extract<RealtimeProviderEvent, { type: T }> => e.type === type);
  }
  until(predicate: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      if (predicate()) return resolve();
      const w = (): void => {
        if (!predicate()) return;
        this.#waiters = this.#waiters.filter((x) => x !== w);
        resolve();
      };
      this.#waiters.push(w);
    });
  }
}

let server: FakeOpenAiRealtimeServer;
let sessions: RealtimeVoiceSession[] = [];

beforeEach(() => {
  sessions = [];
});
afterEach(async () => {
  await Promise.all(sessions.map((s) => s.close()));
  await server?.close();
});

function sessionOptions(overrides: Partial<RealtimeSessionOptions> = {}): RealtimeSessionOptions {
  return {
    instructions: "You are a helpful phone assistant.",
    tools: TOOLS,
    inputFormat: ULAW_8K,
    outputFormat: ULAW_8K,
    signal: new AbortController().signal,
    ...overrides,
  };
}

async function open(
  fake: FakeOpenAiRealtimeServer,
  overrides: Partial<RealtimeSessionOptions> = {},
): Promise<{ session: RealtimeVoiceSession; events: Events }> {
  server = fake;
  const url = await fake.start();
  const events = new Events();
  const session = await connectOpenAiRealtime({ apiKey: KEY, url }, sessionOptions(overrides), events.push);
  sessions.push(session);
  return { session, events };
}

describe("connectOpenAiRealtime", () => {
  it("configures u-law in and out, voice, tools and transcription with session.update, then reports ready", async () => {
    const { events } = await open(new FakeOpenAiRealtimeServer());
    expect(events.list[0]).toEqual({ type: "ready" });
    const update = server.received.find((e) => e.type === "session.update")!.event as {
      session: Record<string, unknown>;
    };
    expect(update.session).toMatchObject({
      type: "realtime",
      output_modalities: ["audio"],
      instructions: "You are a helpful phone assistant.",
      audio: {
        input: {
          format: { type: "audio/pcmu" },
          turn_detection: { type: "server_vad" },
          transcription: { model: "gpt-4o-mini-transcribe" },
        },
        output: { format: { type: "audio/pcmu" }, voice: "marin" },
      },
      tools: [
        {
          type: "function",
          name: "end_call",
          description: "Ends the call.",
          parameters: TOOLS[0]!.parameters,
        },
      ],
    });
    expect(server.lastRequestUrl).toBe("/v1/realtime?model=gpt-realtime");
    // No permessage-deflate: compressing base64 audio per 20 ms frame costs zlib CPU and memory per call.
    expect(server.lastExtensionsOffered).toBeUndefined();
  });

  it("asks for PCM16 at 24 kHz when the session's formats are PCM", async () => {
    await open(new FakeOpenAiRealtimeServer(), {
      inputFormat: PCM16_24K,
      outputFormat: PCM16_24K,
      voice: "cedar",
      model: "gpt-realtime-mini",
    });
    expect(server.session).toMatchObject({
      audio: {
        input: { format: { type: "audio/pcm", rate: 24000 } },
        output: { format: { type: "audio/pcm", rate: 24000 }, voice: "cedar" },
      },
    });
    expect(server.lastRequestUrl).toBe("/v1/realtime?model=gpt-realtime-mini");
  });

  it("refuses a format the API cannot carry before connecting", async () => {
    const options = sessionOptions({ inputFormat: { encoding: "pcm16", sampleRate: 16000, channels: 1 } });
    await expect(
      connectOpenAiRealtime({ apiKey: KEY, url: "ws://127.0.0.1:9/" }, options, () => {}),
    ).rejects.toMatchObject({ code: "invalid_params" });
  });

  it("rejects with provider_unavailable and the HTTP status when the key is refused", async () => {
    server = new FakeOpenAiRealtimeServer();
    const url = await server.start();
    await expect(
      connectOpenAiRealtime({ apiKey: "sk-wrong", url }, sessionOptions(), () => {}),
    ).rejects.toMatchObject({
      code: "provider_unavailable",
      details: { status: 401 },
    });
  });

  it("sends the key as api-key when configured (Azure)", async () => {
    server = new FakeOpenAiRealtimeServer();
    const url = await server.start();
    const session = await connectOpenAiRealtime(
      { apiKey: KEY, url, apiKeyHeader: "api-key" },
      sessionOptions(),
      () => {},
    );
    sessions.push(session);
    expect(server.received.some((e) => e.type === "session.update")).toBe(true);
  });

  it("rejects with cancelled when the signal is already aborted", async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(
      connectOpenAiRealtime({ apiKey: KEY }, sessionOptions({ signal: ac.signal }), () => {}),
    ).rejects.toMatchObject({ code: "cancelled" });
  });

  it("keeps the model an Azure-style URL already names", () => {
    expect(realtimeUrl("wss://x.example/openai/realtime?deployment=d1&api-version=2025", "m")).toBe(
      "wss://x.example/openai/realtime?deployment=d1&api-version=2025",
    );
    expect(realtimeUrl("wss://api.example/v1/realtime", "gpt-realtime")).toBe(
      "wss://api.example/v1/realtime?model=gpt-realtime",
    );
  });

  it("validates its options", async () => {
    await expect(connectOpenAiRealtime({ apiKey: "" }, sessionOptions(), () => {})).rejects.toMatchObject({
      code: "config_invalid",
    });
    await expect(
      connectOpenAiRealtime(
        { apiKey: KEY, url: "https://api.openai.com/v1/realtime" },
        sessionOptions(),
        () => {},
      ),
    ).rejects.toMatchObject({
      code: "config_invalid",
    });
  });
});

describe("OpenAI Realtime session over the fake server", () => {
  it("relays real caller speech: speech_started/stopped, the caller transcript, then the reply's audio and transcript", async () => {
    const reply = speechAudio("Sure, I can help with that.", "g711_ulaw");
    const { session, events } = await open(
      new FakeOpenAiRealtimeServer({
        replies: [{ audio: reply, transcript: "Sure, I can help with that." }],
        userTranscript: "go forward ten meters",
      }),
    );
    const caller = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
    const silence = new Uint8Array(8 * 800).fill(0xff);
    for (const chunk of [caller, silence])
      for (let at = 0; at < chunk.length; at += 160) session.appendAudio(chunk.subarray(at, at + 160));
    await events.until(() => events.of("response_done").length === 1);

    expect(server.audioMsReceived).toBe((caller.length + silence.length) / 8);
    const started = events.of("speech_started")[0]!;
    expect(started.audioStartMs).toBeGreaterThanOrEqual(0);
    expect(events.of("speech_stopped")[0]!.audioEndMs).toBeGreaterThan(started.audioStartMs!);
    expect(events.of("transcript_done").find((e) => e.role === "user")?.text).toBe("go forward ten meters");

    const deltas = events.of("audio_delta");
    expect(deltas[0]!.format).toEqual(ULAW_8K);
    expect(Buffer.concat(deltas.map((d) => d.data))).toEqual(Buffer.from(reply));
    const responseId = events.of("response_started")[0]!.responseId;
    expect(deltas.every((d) => d.responseId === responseId && d.itemId === deltas[0]!.itemId)).toBe(true);
    expect(events.of("audio_done")).toEqual([{ type: "audio_done", responseId, itemId: deltas[0]!.itemId }]);
    expect(events.of("transcript_done").find((e) => e.role === "assistant")?.text).toBe(
      "Sure, I can help with that.",
    );
    expect(events.of("usage")[0]).toMatchObject({ inputTokens: 30, outputTokens: 20 });
    expect(events.of("response_done")[0]).toEqual({ type: "response_done", responseId, status: "completed" });
  });

  it("reports a tool call and returns its result as function_call_output followed by response.create", async () => {
    const { session, events } = await open(new FakeOpenAiRealtimeServer());
    const callId = server.callTool({ name: "end_call", arguments: { reason: "caller said goodbye" } });
    await events.until(() => events.of("tool_call").length === 1);
    expect(events.of("tool_call")[0]).toMatchObject({
      callId,
      name: "end_call",
      argumentsJson: '{"reason":"caller said goodbye"}',
    });

    session.submitToolResult(callId, '{"ok":true}');
    await server.waitFor((e) => e.type === "response.create");
    const create = server.received.find((e) => e.type === "conversation.item.create")!.event;
    expect(create.item).toEqual({ type: "function_call_output", call_id: callId, output: '{"ok":true}' });
    const types = server.received.map((e) => e.type);
    expect(types.indexOf("conversation.item.create")).toBeLessThan(types.indexOf("response.create"));
  });

  it("submits a tool result without a new response when respond is false", async () => {
    const { session } = await open(new FakeOpenAiRealtimeServer());
    session.submitToolResult("call_x", "{}", { respond: false });
    session.commitAudio!();
    await server.waitFor((e) => e.type === "input_audio_buffer.commit");
    expect(server.received.some((e) => e.type === "response.create")).toBe(false);
  });

  it("truncates at a heard position within the audio sent, and surfaces the API's refusal beyond it", async () => {
    const { session, events } = await open(
      new FakeOpenAiRealtimeServer({ replies: [{ audio: toneAudio(1000, "g711_ulaw") }] }),
    );
    session.createResponse();
    await events.until(() => events.of("response_done").length === 1);
    const itemId = events.of("audio_delta")[0]!.itemId;

    session.truncate(itemId, 400.7);
    await server.waitFor((e) => e.type === "conversation.item.truncate");
    expect(server.truncations).toEqual([{ itemId, audioEndMs: 400 }]);

    session.truncate(itemId, 1500);
    await events.until(() => events.of("error").length === 1);
    expect(events.of("error")[0]).toMatchObject({
      fatal: false,
      message: "Audio content of 1000ms is already shorter than 1500ms",
    });
    expect(server.truncations).toHaveLength(1);
  });

  it("cancels the response in progress and reports it cancelled", async () => {
    const { session, events } = await open(
      new FakeOpenAiRealtimeServer({
        replies: [{ audio: toneAudio(2000, "g711_ulaw"), holdAfterDeltas: 2 }],
      }),
    );
    session.createResponse("Greet the caller.");
    await events.until(() => events.of("audio_delta").length === 2);
    expect(server.received.find((e) => e.type === "response.create")!.event.response).toEqual({
      instructions: "Greet the caller.",
    });
    const responseId = events.of("response_started")[0]!.responseId;
    session.cancelResponse();
    await events.until(() => events.of("response_done").length === 1);
    expect(events.of("response_done")[0]).toEqual({ type: "response_done", responseId, status: "cancelled" });
    expect(server.received.find((e) => e.type === "response.cancel")!.event.response_id).toBe(responseId);
    expect(events.of("audio_delta")).toHaveLength(2);
  });

  it("with inputAppendMs sends the caller's 20 ms frames in pieces, and held audio before a commit", async () => {
    const { session } = await open(new FakeOpenAiRealtimeServer(), { inputAppendMs: 60 });
    const silence = (): Uint8Array => new Uint8Array(160).fill(0xff);
    for (let i = 0; i < 5; i++) session.appendAudio(silence());
    session.commitAudio!();
    await server.waitFor((e) => e.type === "input_audio_buffer.commit");
    // Three frames make a 60 ms piece; the two left go out as one append just before the commit.
    expect(
      server.received
        .filter((e) => e.type.startsWith("input_audio_buffer."))
        .map((e) => [e.type, e.event.audio]),
    ).toEqual([
      ["input_audio_buffer.append", 480],
      ["input_audio_buffer.append", 320],
      ["input_audio_buffer.commit", undefined],
    ]);
    expect(server.audioMsReceived).toBe(100);
  });

  it("sends no response.cancel when no response is active", async () => {
    const { session } = await open(new FakeOpenAiRealtimeServer());
    session.cancelResponse();
    session.commitAudio!();
    await server.waitFor((e) => e.type === "input_audio_buffer.commit");
    expect(server.received.some((e) => e.type === "response.cancel")).toBe(false);
  });

  it("reports the server cancelling a reply when the caller barges in", async () => {
    const { session, events } = await open(
      new FakeOpenAiRealtimeServer({
        replies: [{ audio: toneAudio(2000, "g711_ulaw"), holdAfterDeltas: 1 }],
      }),
    );
    session.createResponse();
    await events.until(() => events.of("audio_delta").length === 1);
    server.triggerSpeechStarted();
    await events.until(() => events.of("response_done").length === 1);
    expect(events.list.findIndex((e) => e.type === "speech_started")).toBeLessThan(
      events.list.findIndex((e) => e.type === "response_done"),
    );
    expect(events.of("response_done")[0]!.status).toBe("cancelled");
  });

  it("closes the socket when the signal aborts, and refuses calls afterwards", async () => {
    const ac = new AbortController();
    const { session, events } = await open(new FakeOpenAiRealtimeServer(), { signal: ac.signal });
    ac.abort();
    await events.until(() => events.of("closed").length === 1);
    expect(events.of("closed")[0]).toEqual({ type: "closed", reason: "aborted" });
    expect(() => session.appendAudio(new Uint8Array(160))).toThrow(
      expect.objectContaining({ code: "invalid_state" }),
    );
  });

  it("close() is idempotent and reports closed once", async () => {
    const { session, events } = await open(new FakeOpenAiRealtimeServer());
    const first = session.close();
    expect(session.close()).toBe(first);
    await first;
    await session.close();
    expect(events.of("closed")).toEqual([{ type: "closed", reason: "closed" }]);
  });

  it("reports a fatal error then closed when the provider drops the socket", async () => {
    const { events } = await open(new FakeOpenAiRealtimeServer());
    server.disconnect();
    await events.until(() => events.of("closed").length === 1);
    expect(events.of("error")[0]).toMatchObject({ code: "connection_lost", fatal: true });
    expect(events.list.at(-1)?.type).toBe("closed");
  });

  it("a server_error is reported as the provider's own failure (server), a refused request is not; 1011 is fatal", async () => {
    const { events } = await open(new FakeOpenAiRealtimeServer());
    server.respond({ audio: new Uint8Array(8000).fill(0xff), holdAfterDeltas: 2 });
    await events.until(() => events.of("audio_delta").length >= 2);
    server.serverError();
    await events.until(() => events.of("response_done").length === 1);
    expect(events.of("error")[0]).toMatchObject({ code: "server_error", fatal: false, server: true });
    expect(events.of("response_done")[0]!.status).toBe("failed");
    const refusal = { type: "error", error: { type: "invalid_request_error", code: "x", message: "no" } };
    expect(mapServerEvent(refusal, ULAW_8K)[0]).not.toHaveProperty("server");
    server.closeSocket(1011, "Internal server error");
    await events.until(() => events.of("closed").length === 1);
    expect(events.of("error")[1]).toMatchObject({ code: "connection_lost", fatal: true });
    expect(events.of("error")[1]!.message).toContain("1011");
  });

  it("keeps running when the event listener throws", async () => {
    server = new FakeOpenAiRealtimeServer();
    const url = await server.start();
    const events = new Events();
    const session = await connectOpenAiRealtime({ apiKey: KEY, url }, sessionOptions(), (e) => {
      events.push(e);
      throw new Error("listener bug");
    });
    sessions.push(session);
    server.callTool({ name: "end_call", arguments: {} });
    await events.until(() => events.of("response_done").length === 1);
    expect(events.list.map((e) => e.type)).toEqual([
      "ready",
      "response_started",
      "tool_call",
      "usage",
      "response_done",
    ]);
  });
});
