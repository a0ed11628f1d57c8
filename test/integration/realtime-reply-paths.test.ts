import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { TalkClient } from "../../src/client/talk-client.js";
import { BRIDGE_LABEL } from "../../src/voice/pipelines/realtime-local-replies.js";
import { OpenAiChatAgent } from "../../src/providers/openai-compatible/openai-chat-agent.js";
import { FakeChatCompletionsServer } from "../support/fake-chat-completions-server.js";
import {
  FakeOpenAiRealtimeServer,
  toneAudio,
  type ReceivedEvent,
} from "../support/fake-openai-realtime-server.js";
import {
  OPENAI_KEY,
  recordEvents,
  rejectionOf,
  startGateway,
  type GatewayHarness,
  type HarnessSetup,
} from "../support/gateway-harness.js";

/**
 * Seed 003's reply paths through the whole gateway: a real WebSocket client,
 * the OpenAI Realtime stand-in over a real socket, the embedded pocketsphinx
 * hearing a real recording ("go forward ten meters", 16 kHz PCM16).
 */
const GO_FORWARD = new Uint8Array(readFileSync("/usr/share/pocketsphinx/test/data/goforward.raw"));
const PCM16_16K = { encoding: "pcm16", sampleRate: 16_000, channels: 1 } as const;
const ANSWER = "Going forward ten meters now.";

let h: GatewayHarness | undefined;
let realtime: FakeOpenAiRealtimeServer | undefined;
let chat: FakeChatCompletionsServer | undefined;
afterEach(async () => {
  await h?.close();
  await realtime?.close();
  await chat?.close();
  h = realtime = chat = undefined;
});

async function setup(extra: HarnessSetup = {}) {
  realtime = new FakeOpenAiRealtimeServer({ apiKey: OPENAI_KEY });
  const realtimeUrl = await realtime.start();
  h = await startGateway({ realtimeUrl, ...extra });
  const client = await h.connect({ as: "writer" });
  return { realtime, client, rec: recordEvents(client) };
}

/** The recording then 2 s of silence, in 100 ms frames, as a client streams it. */
async function speak(client: TalkClient, sessionId: string): Promise<void> {
  const silence = new Uint8Array(32_000 * 2);
  for (const audio of [GO_FORWARD, silence]) {
    for (let at = 0; at < audio.byteLength; at += 3200) {
      const frame = audio.subarray(at, Math.min(at + 3200, audio.byteLength));
      await client.request("talk.session.appendAudio", {
        sessionId,
        audioBase64: Buffer.from(frame).toString("base64"),
      });
    }
  }
}

const sessionOf = (e: ReceivedEvent) => (e.event["session"] ?? {}) as Record<string, unknown>;
const userText = (e: ReceivedEvent): string | undefined => {
  if (e.type !== "conversation.item.create") return undefined;
  const item = e.event["item"] as { type?: string; role?: string; content?: { text?: string }[] };
  return item.type === "message" && item.role === "user" ? item.content?.[0]?.text : undefined;
};

describe("bridge: local STT text into the provider, which plans and calls tools", () => {
  it("the stand-in receives the local transcript as labelled user text, never the audio, and its tool call runs", async () => {
    // The configured path (agent.realtime.replyPath) of a session that names none.
    const { realtime, client, rec } = await setup({ replyPath: "bridge" });
    const { sessionId } = await client.request("talk.session.create", {
      mode: "realtime",
      transport: "gateway-relay",
      inputFormat: PCM16_16K,
    });
    const update = await realtime.waitFor((e) => e.type === "session.update");
    // Provider-native planning: the provider is offered the tools.
    expect((sessionOf(update).tools as { name: string }[]).map((t) => t.name)).toContain("echo");
    await speak(client, sessionId);

    const sent = await realtime.waitFor((e) => userText(e) !== undefined);
    const text = userText(sent)!;
    expect(text.startsWith(`${BRIDGE_LABEL} `)).toBe(true);
    expect(text.toLowerCase()).toContain("forward");
    const heard = await rec.next((e) => e.type === "transcript.done" && e.sessionId === sessionId);
    expect(text).toBe(`${BRIDGE_LABEL} ${(heard.payload as { text: string }).text}`);
    // The provider asked to answer the text; it heard no audio (ASR is outboard).
    await realtime.waitFor((e) => e.type === "response.create");
    expect(realtime.received.filter((e) => e.type === "input_audio_buffer.append")).toEqual([]);

    await rec.next((e) => e.type === "output.audio.done" && e.sessionId === sessionId);
    const callId = realtime.callTool({ name: "echo", arguments: { heard: "forward" } });
    const output = await realtime.waitFor(
      (e) =>
        e.type === "conversation.item.create" && (e.event["item"] as { call_id?: string }).call_id === callId,
    );
    expect(JSON.parse((output.event["item"] as { output: string }).output)).toEqual({ heard: "forward" });
    await rec.next((e) => e.type === "tool.result" && e.callId === callId);
    await client.request("talk.session.close", { sessionId });
  });
});

describe("bridge: push-to-talk", () => {
  it("a turn the client starts is heard until its endTurn, and its words go to the provider once", async () => {
    const { realtime, client, rec } = await setup();
    const { sessionId } = await client.request("talk.session.create", {
      mode: "realtime",
      transport: "gateway-relay",
      replyPath: "bridge",
      inputFormat: PCM16_16K,
    });
    await realtime.waitFor((e) => e.type === "session.update");
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    // The recording then silence: the silence does not end the client's turn, its endTurn does.
    await speak(client, sessionId);
    expect(rec.events.some((e) => e.type === "transcript.done")).toBe(false);
    await client.request("talk.session.endTurn", { sessionId, turnId });
    const heard = await rec.next((e) => e.type === "transcript.done" && e.turnId === turnId);
    expect((heard.payload as { text: string }).text).toContain("forward");
    const sent = await realtime.waitFor((e) => userText(e) !== undefined);
    expect(userText(sent)).toBe(`${BRIDGE_LABEL} ${(heard.payload as { text: string }).text}`);
    await rec.next((e) => e.type === "output.audio.done" && e.sessionId === sessionId);
    expect(realtime.received.filter((e) => userText(e) !== undefined)).toHaveLength(1);
    await client.request("talk.session.close", { sessionId });
  });
});

describe("brain: the provider is speech transport only", () => {
  it("offers no tools, never answers on its own, and speaks exactly the agent's text", async () => {
    chat = new FakeChatCompletionsServer({ apiKey: "k", answer: ANSWER });
    const agent = new OpenAiChatAgent({ baseUrl: await chat.start(), model: "fake-model", apiKey: "k" });
    const { realtime, client, rec } = await setup({ agent });
    const { sessionId } = await client.request("talk.session.create", {
      mode: "realtime",
      transport: "gateway-relay",
      replyPath: "brain",
      inputFormat: PCM16_16K,
    });
    const update = await realtime.waitFor((e) => e.type === "session.update");
    expect(sessionOf(update).tools).toEqual([]);
    const audio = sessionOf(update).audio as { input: { turn_detection: unknown } };
    // No turn detection: nothing on the provider side starts a response.
    expect(audio.input.turn_detection).toBeNull();
    await speak(client, sessionId);

    const said = await realtime.waitFor((e) => e.type === "response.create");
    const response = said.event["response"] as { input: { content: { text: string }[] }[] };
    expect(response.input[0]!.content[0]!.text).toBe(ANSWER);
    await rec.next((e) => e.type === "output.audio.done" && e.sessionId === sessionId);
    // The agent heard what pocketsphinx wrote down; the provider heard no audio and asked for nothing else.
    const asked = JSON.stringify(chat.requests.at(-1)?.body);
    expect(asked.toLowerCase()).toContain("forward");
    expect(realtime.received.filter((e) => e.type === "input_audio_buffer.append")).toEqual([]);
    const creates = realtime.received.filter((e) => e.type === "response.create");
    expect(creates).toHaveLength(1);
    expect(realtime.received.filter((e) => userText(e) !== undefined)).toEqual([]);
    await client.request("talk.session.close", { sessionId });
  });
});

describe("brain: barge-in", () => {
  it("caller speech over the spoken answer cancels it at the provider, and the new words get an answer of their own", async () => {
    chat = new FakeChatCompletionsServer({ apiKey: "k", answer: ANSWER });
    const agent = new OpenAiChatAgent({ baseUrl: await chat.start(), model: "fake-model", apiKey: "k" });
    realtime = new FakeOpenAiRealtimeServer({
      apiKey: OPENAI_KEY,
      // The first answer keeps playing (held after two deltas) until it is interrupted.
      replies: [{ audio: toneAudio(2000, "pcm16"), holdAfterDeltas: 2 }],
    });
    h = await startGateway({ realtimeUrl: await realtime.start(), agent });
    const client = await h.connect({ as: "writer" });
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", {
      mode: "realtime",
      transport: "gateway-relay",
      replyPath: "brain",
      inputFormat: PCM16_16K,
    });
    await speak(client, sessionId);
    const started = await rec.next((e) => e.type === "output.audio.started" && e.sessionId === sessionId);
    await speak(client, sessionId);
    await realtime.waitFor((e) => e.type === "response.cancel");
    await rec.next(
      (e) => e.type === "turn.cancelled" && e.turnId === started.turnId && e.sessionId === sessionId,
    );
    // The new words are answered under a turn of their own, spoken whole.
    await rec.next(
      (e) => e.type === "output.audio.done" && e.turnId !== started.turnId && e.sessionId === sessionId,
    );
    const creates = realtime.received.filter((e) => e.type === "response.create");
    expect(creates).toHaveLength(2);
    const spoken = creates[1]!.event["response"] as { input: { content: { text: string }[] }[] };
    expect(spoken.input[0]!.content[0]!.text).toBe(ANSWER);
    expect(chat.requests).toHaveLength(2);
    await client.request("talk.session.close", { sessionId });
  });
});

describe("reply path at create", () => {
  it("talk.catalog lists the paths each realtime provider declares", async () => {
    const { client } = await setup();
    const catalog = (await client.requestUntyped("talk.catalog", {})) as {
      providers: { id: string; kind: string; capabilities: { replyPaths?: string[] } }[];
    };
    const realtime = catalog.providers.find((p) => p.kind === "realtime" && p.id === "openai");
    expect(realtime?.capabilities.replyPaths).toEqual(["native", "bridge", "brain"]);
  });

  it("is refused for a mode without a realtime provider, naming the field", async () => {
    const { client } = await setup();
    const err = await rejectionOf(
      client.requestUntyped("talk.session.create", {
        mode: "stt-tts",
        transport: "managed-room",
        replyPath: "bridge",
      }),
    );
    expect(err.code).toBe("invalid_params");
    expect(err.details).toMatchObject({ field: "replyPath", issues: [{ path: "replyPath" }] });
  });
});
