/**
 * health.changed reaches a /talk client: the agent of an stt-tts session (a
 * chat completions endpoint over real HTTP) fails its requests, then answers
 * again; the session's owner is told both, naming the provider and its kind.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { TalkClient } from "../../src/client/talk-client.js";
import { createOpenAiChatAgent } from "../../src/providers/openai-compatible/openai-chat-agent.js";
import { FakeChatCompletionsServer } from "../support/fake-chat-completions-server.js";
import {
  SPEECH_FORMAT,
  appendPcm,
  recordEvents,
  speechPcm,
  startGateway,
  type GatewayHarness,
} from "../support/gateway-harness.js";

let h: GatewayHarness | undefined;
let chat: FakeChatCompletionsServer | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  await chat?.close();
  chat = undefined;
});

const ROOM = { mode: "stt-tts", transport: "managed-room", inputFormat: SPEECH_FORMAT } as const;

async function speakTurn(client: TalkClient, sessionId: string, speech: Buffer): Promise<string> {
  const { turnId } = await client.request("talk.session.startTurn", { sessionId });
  await appendPcm(client, sessionId, speech);
  await client.request("talk.session.endTurn", { sessionId, turnId });
  return turnId;
}

describe("health.changed through /talk", () => {
  it("an agent failing then answering again: the owner sees ok false (its code) then ok true, naming the provider", async () => {
    chat = new FakeChatCompletionsServer({ apiKey: "chat-key", answer: "It is noon.", errorStatus: 503 });
    const agent = createOpenAiChatAgent({
      baseUrl: await chat.start(),
      model: "fake-model",
      apiKey: "chat-key",
      id: "chat-agent",
    });
    h = await startGateway({ agent });
    const client = await h.connect();
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", ROOM);
    const speech = await speechPcm("What time is it?");

    const failing = await speakTurn(client, sessionId, speech);
    await rec.next((e) => e.type === "health.changed" && e.payload.ok === false);
    await rec.next(
      (e) => e.turnId === failing && (e.type === "turn.cancelled" || e.type === "output.audio.done"),
    );
    chat.configure({ errorStatus: undefined });
    const answered = await speakTurn(client, sessionId, speech);
    await rec.next((e) => e.type === "output.audio.done" && e.turnId === answered);
    await rec.next((e) => e.type === "health.changed" && e.payload.ok === true);

    const health = rec.events.filter((e) => e.type === "health.changed");
    expect(health.map((e) => ({ provider: e.provider, payload: e.payload }))).toEqual([
      {
        provider: "chat-agent",
        payload: {
          ok: false,
          kind: "agent",
          code: expect.any(String),
          message: expect.stringMatching(/503/),
        },
      },
      { provider: "chat-agent", payload: { ok: true, kind: "agent" } },
    ]);
    expect(rec.events.filter((e) => e.type === "transcript.done").length).toBeGreaterThanOrEqual(2);
  });
});
