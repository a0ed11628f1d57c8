import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeChatCompletionsServer } from "../../../test/support/fake-chat-completions-server.js";
import type { TalkError } from "../../core/errors.js";
import { createDirectiveParser } from "../../voice/speech/voice-directive.js";
import { createSmartChunker } from "../../voice/speech/smart-chunker.js";
import { OpenAiChatAgent } from "./openai-chat-agent.js";

// The agent and the speech pieces together, as the pipeline will wire them:
// agent deltas -> directive parser -> smart chunker -> (TTS).
describe("streamed agent answer through the smart chunker", () => {
  let server: FakeChatCompletionsServer;
  let agent: OpenAiChatAgent;

  beforeEach(async () => {
    server = new FakeChatCompletionsServer({ apiKey: "k" });
    agent = new OpenAiChatAgent({ baseUrl: await server.start(), model: "fake-model", apiKey: "k" });
  });
  afterEach(async () => {
    await server.close();
  });

  const messages = [{ role: "user" as const, content: "Tell me everything." }];

  it("has the first chunk ready while the server has sent under 20% of a 2,000-character answer", async () => {
    server.configure({ tokenDelayMs: 5 });
    const total = server.tokens.length;
    const controller = new AbortController();
    const chunker = createSmartChunker();
    let deltas = 0;
    let first: { chunk: string; deltas: number; serverTokens: number } | undefined;
    const disconnected = server.nextDisconnect();
    try {
      for await (const d of agent.consult({
        sessionId: "s",
        turnId: "t",
        messages,
        signal: controller.signal,
      })) {
        if (d.type !== "text") continue;
        deltas++;
        const chunks = chunker.push(d.text);
        if (chunks.length > 0) {
          first = { chunk: chunks[0]!, deltas, serverTokens: server.tokensSent };
          controller.abort();
        }
      }
    } catch (err) {
      expect((err as TalkError).code).toBe("cancelled");
    }
    expect(first).toBeDefined();
    expect(server.answer.startsWith(first!.chunk)).toBe(true);
    expect(first!.deltas).toBeLessThan(total * 0.2);
    expect(first!.serverTokens).toBeLessThan(total * 0.2);
    // Barge-in after the first chunk: the rest of the answer is never produced.
    await disconnected;
    expect(server.completedStreams).toBe(0);
  });

  it("yields chunks in order that together are the whole answer, each within the size limits", async () => {
    const chunker = createSmartChunker();
    const chunks: string[] = [];
    for await (const d of agent.consult({
      sessionId: "s",
      turnId: "t",
      messages,
      signal: new AbortController().signal,
    })) {
      if (d.type === "text") chunks.push(...chunker.push(d.text));
    }
    chunks.push(...chunker.flush());
    expect(chunks.length).toBeGreaterThan(4);
    expect(chunks.join(" ").replace(/\s+/g, " ")).toBe(server.answer.replace(/\s+/g, " ").trim());
    expect(chunks[0]!.length).toBeLessThanOrEqual(200);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(400);
  });

  it("never passes a leading voice directive on to the chunker", async () => {
    server.configure({
      answer: '{"voice":"nova","once":true} Hello there, this is the answer. It has two sentences.',
      tokenChars: 3,
    });
    const parser = createDirectiveParser();
    const chunker = createSmartChunker({ firstChunkMinChars: 5 });
    const chunks: string[] = [];
    let directive: unknown;
    for await (const d of agent.consult({
      sessionId: "s",
      turnId: "t",
      messages,
      signal: new AbortController().signal,
    })) {
      if (d.type !== "text") continue;
      const r = parser.push(d.text);
      directive ??= r.directive;
      chunks.push(...chunker.push(r.text));
    }
    chunks.push(...chunker.push(parser.flush().text), ...chunker.flush());
    expect(directive).toEqual({ voice: "nova", once: true });
    expect(chunks).toEqual(["Hello there, this is the answer.", "It has two sentences."]);
  });
});
