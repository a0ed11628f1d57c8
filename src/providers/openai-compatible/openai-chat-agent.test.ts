import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeChatCompletionsServer } from "../../../test/support/fake-chat-completions-server.js";
import { TalkError } from "../../core/errors.js";
import type { AgentConsultRequest, AgentDelta } from "../../core/provider-types.js";
import { OpenAiChatAgent, type OpenAiChatAgentOptions } from "./openai-chat-agent.js";

const KEY = "sk-test-0123456789abcdef";

function request(signal: AbortSignal = new AbortController().signal): AgentConsultRequest {
  return {
    sessionId: "s1",
    turnId: "t1",
    messages: [
      { role: "system", content: "You are a helpful phone assistant." },
      { role: "user", content: "What are my options?" },
    ],
    signal,
  };
}

async function collect(iterable: AsyncIterable<AgentDelta>): Promise<AgentDelta[]> {
  const out: AgentDelta[] = [];
  for await (const d of iterable) out.push(d);
  return out;
}

async function failure(promise: Promise<unknown>): Promise<TalkError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(TalkError);
    return err as TalkError;
  }
  throw new Error("expected a rejection");
}

const textOf = (deltas: AgentDelta[]): string =>
  deltas.map((d) => (d.type === "text" ? d.text : "")).join("");

describe("OpenAiChatAgent against a chat completions server", () => {
  let server: FakeChatCompletionsServer;
  let baseUrl: string;
  const agent = (options: Partial<OpenAiChatAgentOptions> = {}): OpenAiChatAgent =>
    new OpenAiChatAgent({ baseUrl, model: "fake-model", apiKey: KEY, ...options });

  beforeEach(async () => {
    server = new FakeChatCompletionsServer({ apiKey: KEY });
    baseUrl = await server.start();
  });
  afterEach(async () => {
    await server.close();
  });

  it("offers tools as functions and yields the streamed tool_calls whole, after the text, before done", async () => {
    server.configure({
      writePieceBytes: 7,
      script: [
        {
          text: "One moment.",
          toolCalls: [
            {
              id: "call_a",
              name: "transfer_call",
              arguments: { target: "front desk", briefing: "Ana, order 42" },
            },
            { id: "call_b", name: "end_call", arguments: {} },
          ],
        },
      ],
    });
    const tools = [
      { name: "end_call", description: "Hang up.", parameters: { type: "object", properties: {} } },
    ];
    const deltas = await collect(agent().consult({ ...request(), tools }));
    expect(deltas).toEqual([
      ...deltas.filter((d) => d.type === "text"),
      {
        type: "tool_call",
        callId: "call_a",
        name: "transfer_call",
        argumentsJson: JSON.stringify({ target: "front desk", briefing: "Ana, order 42" }),
      },
      { type: "tool_call", callId: "call_b", name: "end_call", argumentsJson: "{}" },
      {
        type: "done",
        finishReason: "tool_calls",
        usage: { inputTokens: expect.any(Number), outputTokens: 5 },
      },
    ]);
    expect(textOf(deltas)).toBe("One moment.");
    expect((server.requests[0]!.body as { tools: unknown }).tools).toEqual([
      {
        type: "function",
        function: { name: "end_call", description: "Hang up.", parameters: tools[0]!.parameters },
      },
    ]);
  });

  it("sends earlier calls and their results as assistant tool_calls and tool messages", async () => {
    server.configure({ answer: "Done." });
    await collect(
      agent().consult({
        ...request(),
        messages: [
          { role: "user", content: "Transfer me." },
          {
            role: "assistant",
            content: "",
            toolCalls: [{ callId: "call_1", name: "transfer_call", argumentsJson: '{"target":"x"}' }],
          },
          { role: "tool", toolCallId: "call_1", content: '{"error":"provider_error"}' },
        ],
      }),
    );
    expect((server.requests[0]!.body as { messages: unknown[] }).messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "transfer_call", arguments: '{"target":"x"}' },
          },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: '{"error":"provider_error"}' },
    ]);
    // No tools offered: none sent.
    expect((server.requests[0]!.body as { tools?: unknown }).tools).toBeUndefined();
  });

  it("a tool call without a function name or id is a provider_error; a tool message needs its call id", async () => {
    server.configure({
      rawStream:
        'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"arguments":"{}"}}]},"finish_reason":null}]}\n\n' +
        'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n',
    });
    const err = await failure(collect(agent().consult(request())));
    expect(err.code).toBe("provider_error");
    expect(err.message).toMatch(/no function name/);
    const bad = await failure(
      collect(agent().consult({ ...request(), messages: [{ role: "tool", content: "{}" }] })),
    );
    expect(bad.code).toBe("invalid_params");
  });

  it("streams the answer as text deltas in order, then done with the finish reason", async () => {
    const deltas = await collect(agent().consult(request()));
    expect(textOf(deltas)).toBe(server.answer);
    expect(deltas.filter((d) => d.type === "text")).toHaveLength(server.tokens.length);
    expect(deltas.at(-1)).toEqual({
      type: "done",
      finishReason: "stop",
      usage: { inputTokens: server.usages[0]!.prompt_tokens, outputTokens: server.tokens.length },
    });
    expect(deltas.filter((d) => d.type === "done")).toHaveLength(1);
  });

  it("asks for the stream's usage and reports it on done; streamUsage: false asks for none and reports none", async () => {
    await collect(agent().consult(request()));
    expect((server.requests[0]!.body as Record<string, unknown>).stream_options).toEqual({
      include_usage: true,
    });
    expect(server.usages[0]!.prompt_tokens).toBeGreaterThan(0);
    const deltas = await collect(agent({ streamUsage: false }).consult(request()));
    expect(server.requests[1]!.body).not.toHaveProperty("stream_options");
    expect(deltas.at(-1)).toEqual({ type: "done", finishReason: "stop" });
    // A server that sends usage unasked (or a malformed one) is read only where it holds token counts.
    server.configure({
      rawStream:
        'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}\n\n' +
        'data: {"choices":[],"usage":{"prompt_tokens":"many","completion_tokens":-1}}\n\ndata: [DONE]\n\n',
    });
    expect((await collect(agent().consult(request()))).at(-1)).toEqual({
      type: "done",
      finishReason: "stop",
    });
  });

  it("sends model, messages, stream:true and the bearer key to {baseUrl}/chat/completions", async () => {
    await collect(agent({ baseUrl: `${baseUrl}/`, maxTokens: 300 }).consult(request()));
    expect(server.requests).toHaveLength(1);
    const [req] = server.requests;
    expect(req).toMatchObject({
      method: "POST",
      path: "/v1/chat/completions",
      authorization: `Bearer ${KEY}`,
    });
    expect(req!.body).toEqual({
      model: "fake-model",
      messages: request().messages,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 300,
    });
  });

  it("parses events split at arbitrary byte boundaries on the wire", async () => {
    server.configure({
      answer: "Grüße aus Köln 😀, alles gut. ".repeat(2),
      tokenChars: 3,
      writePieceBytes: 7,
    });
    const deltas = await collect(agent().consult(request()));
    expect(textOf(deltas)).toBe(server.answer);
  });

  it("closes the HTTP stream at once when the consult is aborted mid-answer and ends with cancelled", async () => {
    server.configure({ tokenDelayMs: 5 });
    const controller = new AbortController();
    const disconnected = server.nextDisconnect();
    const iterator = agent().consult(request(controller.signal))[Symbol.asyncIterator]();
    let received = 0;
    while (received < 10) {
      const next = await iterator.next();
      if (!next.done && next.value.type === "text") received++;
    }
    const sentAtAbort = server.tokensSent;
    controller.abort();
    await disconnected;
    const err = await failure(iterator.next());
    expect(err.code).toBe("cancelled");
    expect(server.disconnects).toBe(1);
    expect(server.completedStreams).toBe(0);
    // Prompt: the server stopped within a token or two of the abort, far from the end.
    expect(server.tokensSentAtDisconnect!).toBeLessThanOrEqual(sentAtAbort + 2);
    expect(server.tokensSentAtDisconnect!).toBeLessThan(server.tokens.length / 2);
  });

  it("closes the HTTP stream when the consumer stops iterating early", async () => {
    server.configure({ tokenDelayMs: 5 });
    const disconnected = server.nextDisconnect();
    for await (const d of agent().consult(request())) {
      if (d.type === "text") break;
    }
    await disconnected;
    expect(server.disconnects).toBe(1);
    expect(server.completedStreams).toBe(0);
  });

  it("rejects with cancelled and sends nothing when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await failure(collect(agent().consult(request(controller.signal))));
    expect(err.code).toBe("cancelled");
    expect(server.requests).toHaveLength(0);
  });

  it("ends with timeout and closes the stream when the answer outlasts timeoutMs", async () => {
    server.configure({ tokenDelayMs: 20 });
    const disconnected = server.nextDisconnect();
    const err = await failure(collect(agent({ timeoutMs: 150 }).consult(request())));
    expect(err.code).toBe("timeout");
    await disconnected;
    expect(server.completedStreams).toBe(0);
  });

  it("reports 401 as provider_error with the status and without the API key", async () => {
    const wrongKey = `${KEY}-wrong`;
    const err = await failure(collect(agent({ apiKey: wrongKey }).consult(request())));
    expect(err.code).toBe("provider_error");
    expect(err.details).toEqual({ status: 401 });
    expect(err.retryable).toBe(false);
    const everything = JSON.stringify({ message: err.message, json: err.toJSON(), cause: String(err.cause) });
    expect(everything).not.toContain(wrongKey);
    expect(everything).not.toContain("sk-test");
  });

  it("reports other HTTP errors as provider_error with the server's message, key redacted", async () => {
    server.configure({
      errorStatus: 503,
      errorBody: JSON.stringify({ error: { message: `overloaded for ${KEY}` } }),
    });
    const err = await failure(collect(agent().consult(request())));
    expect(err.code).toBe("provider_error");
    expect(err.details).toEqual({ status: 503 });
    expect(err.retryable).toBe(true);
    expect(err.message).toContain("overloaded for [redacted]");
    expect(err.message).not.toContain(KEY);
  });

  it("reports an error object inside the stream as provider_error", async () => {
    server.configure({
      rawStream:
        'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\ndata: {"error":{"message":"model crashed"}}\n\n',
    });
    const deltas: AgentDelta[] = [];
    const err = await failure(
      (async () => {
        for await (const d of agent().consult(request())) deltas.push(d);
      })(),
    );
    expect(deltas).toEqual([{ type: "text", text: "Hi" }]);
    expect(err.code).toBe("provider_error");
    expect(err.message).toContain("model crashed");
  });

  it("reports a malformed stream line as provider_error", async () => {
    server.configure({ rawStream: "data: {not json\n\n" });
    const err = await failure(collect(agent().consult(request())));
    expect(err.code).toBe("provider_error");
    expect(err.message).toMatch(/malformed/);
  });

  it("reports a stream cut before [DONE] and before any finish reason as provider_error", async () => {
    server.configure({ rawStream: 'data: {"choices":[{"delta":{"content":"Hi"}}]}\n\n' });
    const err = await failure(collect(agent().consult(request())));
    expect(err.code).toBe("provider_error");
    expect(err.message).toMatch(/\[DONE\]/);
  });

  it("accepts a stream that ends after a finish reason without [DONE]", async () => {
    server.configure({ answer: "Short answer.", omitDone: true });
    const deltas = await collect(agent().consult(request()));
    expect(textOf(deltas)).toBe("Short answer.");
    expect(deltas.at(-1)).toMatchObject({ type: "done", finishReason: "stop" });
  });

  it("reports an unreachable endpoint as provider_unavailable", async () => {
    await server.close();
    const err = await failure(collect(agent().consult(request())));
    expect(err.code).toBe("provider_unavailable");
    expect(err.message).not.toContain(KEY);
  });
});

describe("OpenAiChatAgent construction", () => {
  it("declares streaming and its model", () => {
    const a = new OpenAiChatAgent({ baseUrl: "http://127.0.0.1:1/v1", model: "m" });
    expect(a.kind).toBe("agent");
    expect(a.capabilities).toEqual({ streaming: true, tools: true, models: ["m"] });
    expect(a.id).toBe("openai-compatible-agent");
  });

  it("rejects invalid options with config_invalid, never echoing the key", () => {
    const cases: OpenAiChatAgentOptions[] = [
      { baseUrl: "", model: "m" },
      { baseUrl: "ftp://x/v1", model: "m" },
      { baseUrl: "not a url", model: "m" },
      { baseUrl: "https://user:pass@x/v1", model: "m" },
      { baseUrl: "https://x/v1", model: " " },
      { baseUrl: "https://x/v1", model: "m", timeoutMs: 0 },
      { baseUrl: "https://x/v1", model: "m", apiKey: "sk-abc\nInjected: 1" },
    ];
    for (const options of cases) {
      let caught: unknown;
      try {
        new OpenAiChatAgent(options);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(TalkError);
      expect((caught as TalkError).code).toBe("config_invalid");
      expect((caught as TalkError).message).not.toContain("sk-abc");
    }
  });

  it("rejects a consult without messages with invalid_params", async () => {
    const a = new OpenAiChatAgent({ baseUrl: "http://127.0.0.1:1/v1", model: "m" });
    const err = await failure(collect(a.consult({ ...request(), messages: [] })));
    expect(err.code).toBe("invalid_params");
  });
});
