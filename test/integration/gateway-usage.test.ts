/**
 * Usage of an stt-tts session through the real gateway (/talk): the local
 * recognizer (pocketsphinx), synthesizer (espeak-ng) and an agent speaking the
 * chat completions wire (which reports tokens when asked) each tell what one
 * call used as `usage.metrics` on the session, naming the provider; the
 * session's usage record (admin.usage.list) is the sum of those reports.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { TalkEvent } from "../../src/core/talk-events.js";
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
const ANSWER = "It is twelve o'clock. Anything else?";

interface Usage {
  kind?: string;
  sttSeconds?: number;
  ttsCharacters?: number;
  inputTokens?: number;
  outputTokens?: number;
}

const sum = (events: TalkEvent[], field: keyof Usage): number =>
  events.reduce((n, e) => n + (((e.payload as Usage)[field] as number | undefined) ?? 0), 0);

describe("usage of an stt-tts session through /talk", () => {
  it("usage.metrics tell seconds recognized, characters spoken and the agent's tokens, and the usage record is their sum", async () => {
    chat = new FakeChatCompletionsServer({ apiKey: "chat-key", answer: ANSWER });
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
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    const speech = await speechPcm("What time is it?");
    await appendPcm(client, sessionId, speech);
    await client.request("talk.session.endTurn", { sessionId, turnId });
    await rec.next((e) => e.type === "output.audio.done" && e.turnId === turnId);
    await client.request("talk.session.close", { sessionId });
    await rec.next((e) => e.type === "session.closed");

    const usage = rec.events.filter((e) => e.type === "usage.metrics");
    const of = (kind: string) => usage.filter((e) => (e.payload as Usage).kind === kind);
    // The recognizer heard at most what was sent, and named itself.
    const stt = of("stt");
    expect(stt.length).toBeGreaterThan(0);
    expect(stt.every((e) => e.provider === "pocketsphinx")).toBe(true);
    const sentSeconds = speech.byteLength / 2 / SPEECH_FORMAT.sampleRate;
    expect(sum(stt, "sttSeconds")).toBeGreaterThan(0);
    expect(sum(stt, "sttSeconds")).toBeLessThanOrEqual(sentSeconds + 0.001);
    // The synthesizer spoke the answer: its characters, within the answer's (chunks may drop spaces between them).
    const tts = of("tts");
    expect(tts.length).toBeGreaterThan(0);
    expect(tts.every((e) => e.provider === "espeak-ng")).toBe(true);
    expect(sum(tts, "ttsCharacters")).toBeGreaterThanOrEqual(ANSWER.replace(/\s/g, "").length);
    expect(sum(tts, "ttsCharacters")).toBeLessThanOrEqual(ANSWER.length);
    // The agent's tokens as its endpoint counted them.
    expect(chat.usages).toHaveLength(1);
    expect(of("agent").map((e) => ({ provider: e.provider, payload: e.payload }))).toEqual([
      {
        provider: "chat-agent",
        payload: {
          kind: "agent",
          inputTokens: chat.usages[0]!.prompt_tokens,
          outputTokens: chat.usages[0]!.completion_tokens,
        },
      },
    ]);

    // The session's usage record: the same figures, by provider, none charged to an unknown one.
    let record: Record<string, unknown> | undefined;
    for (let i = 0; i < 100 && !record; i++) {
      const listed = (await client.requestUntyped("admin.usage.list", {})) as {
        records: Record<string, unknown>[];
      };
      record = listed.records.find((r) => r.sessionId === sessionId);
      if (!record) await new Promise((r) => setTimeout(r, 50));
    }
    expect(record).toBeDefined();
    const round = (n: number) => Math.round(n * 1000) / 1000;
    expect(record).toMatchObject({
      mode: "stt-tts",
      sttSeconds: round(sum(stt, "sttSeconds")),
      audioInSeconds: round(sum(stt, "sttSeconds")),
      ttsCharacters: sum(tts, "ttsCharacters"),
      inputTokens: chat.usages[0]!.prompt_tokens,
      outputTokens: chat.usages[0]!.completion_tokens,
    });
    expect(record!.providers).toEqual({
      pocketsphinx: expect.objectContaining({ sttSeconds: round(sum(stt, "sttSeconds")), inputTokens: 0 }),
      "espeak-ng": expect.objectContaining({ ttsCharacters: sum(tts, "ttsCharacters"), sttSeconds: 0 }),
      "chat-agent": {
        inputTokens: chat.usages[0]!.prompt_tokens,
        outputTokens: chat.usages[0]!.completion_tokens,
        sttSeconds: 0,
        ttsCharacters: 0,
      },
    });
  });
});
