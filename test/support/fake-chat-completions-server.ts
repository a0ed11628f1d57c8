import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A local server speaking the OpenAI chat completions streaming wire protocol
 * (`POST /v1/chat/completions`, `stream: true`, `data: {chunk}` events, then
 * `data: [DONE]`), so the agent provider is tested against the protocol and
 * not against a mock of our own interface. It streams a long answer token by
 * token with a per-token delay (a 30 s answer is possible), checks the bearer
 * key, records requests, and counts clients that disconnect mid-stream.
 *
 * Function calling: scripted replies (`script`, one per request, in order)
 * may end with `tool_calls`, streamed as the docs describe: the first
 * fragment of a call carries its `index`, `id`, `type: "function"` and
 * `function.name`, later fragments only `index` and pieces of
 * `function.arguments`, and the last chunk `finish_reason: "tool_calls"`.
 */
export interface ScriptedToolCall {
  /** Default `call_<n>`. */
  id?: string;
  name: string;
  /** The arguments object (sent as JSON text, in pieces). */
  arguments: Record<string, unknown>;
}

export interface ScriptedReply {
  /** Text streamed before the calls. Default none. */
  text?: string;
  toolCalls?: ScriptedToolCall[];
  /** Hold the stream after the role chunk until release() (a round that can be cancelled). */
  hold?: boolean;
}

export interface FakeChatCompletionsOptions {
  /** Bearer key required; undefined accepts any request. Default "test-key". */
  apiKey?: string | undefined;
  /** The answer streamed. Default `longAnswer(2000)`. */
  answer?: string;
  /** Characters per token (the last may be shorter). Default 4. */
  tokenChars?: number;
  /** Delay before each token, ms. Default 0. */
  tokenDelayMs?: number;
  /** Delay before the first token, after the role chunk: a model's time to first token, ms. Default 0. */
  firstTokenDelayMs?: number;
  /** Answer every request with this status and body instead of streaming. */
  errorStatus?: number;
  errorBody?: string;
  /** Raw SSE text sent instead of the answer (for malformed-stream tests). */
  rawStream?: string;
  /** Write each event in pieces of this many bytes, to exercise chunk boundaries. Default whole events. */
  writePieceBytes?: number;
  /** Leave out the final `data: [DONE]`. Default false. */
  omitDone?: boolean;
  /** Model name echoed in chunks. Default "fake-model". */
  model?: string;
  /** Hold each stream before its first token until release() (a slow-to-start agent). Default false. */
  holdFirstToken?: boolean;
  /** Replies for the next requests, one each, in order; then `answer`. Default none. */
  script?: ScriptedReply[];
  /** Accept each request and never answer it (no status line, no headers): a hung endpoint. Default false. */
  hang?: boolean;
}

export interface RecordedRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: unknown;
}

export class FakeChatCompletionsServer {
  #options: FakeChatCompletionsOptions;
  #server: Server | undefined;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[] = [];
  /** Clients that went away before their stream ended. */
  disconnects = 0;
  /** Streams that were sent to the end. */
  completedStreams = 0;
  /** Tokens written in the current (or last) stream. */
  tokensSent = 0;
  /** The `usage` of each stream that asked for it (`stream_options.include_usage`), in order. */
  readonly usages: { prompt_tokens: number; completion_tokens: number; total_tokens: number }[] = [];
  /** Tokens written when the last disconnect was observed. */
  tokensSentAtDisconnect: number | undefined;
  #disconnectWaiters: Array<() => void> = [];
  #tokenWaiters: Array<{ count: number; resolve: () => void }> = [];
  #held: Array<() => void> = [];
  #callIds = 0;
  #requestWaiters: Array<() => void> = [];

  constructor(options: FakeChatCompletionsOptions = {}) {
    this.#options = { ...options };
  }

  /** Changes the behaviour for the following requests. */
  configure(options: Partial<FakeChatCompletionsOptions>): void {
    this.#options = { ...this.#options, ...options };
  }

  get apiKey(): string | undefined {
    return "apiKey" in this.#options ? this.#options.apiKey : "test-key";
  }

  get answer(): string {
    return this.#options.answer ?? longAnswer(2000);
  }

  /** The tokens the answer is streamed as. */
  get tokens(): string[] {
    return this.#tokenize(this.answer);
  }

  #tokenize(text: string): string[] {
    const size = this.#options.tokenChars ?? 4;
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out;
  }

  /** Listens on a free loopback port; resolves with the base URL (".../v1"). */
  async start(): Promise<string> {
    const server = createServer((req, res) => void this.#handle(req, res));
    this.#server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as AddressInfo;
    return `http://127.0.0.1:${port}/v1`;
  }

  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Resolves at the next client disconnect: call it before causing one. */
  nextDisconnect(): Promise<void> {
    return new Promise((resolve) => this.#disconnectWaiters.push(resolve));
  }

  /** Lets streams held by holdFirstToken send their tokens. */
  release(): void {
    for (const go of this.#held.splice(0)) go();
  }

  /** Resolves when a stream request has arrived (now or later). */
  nextRequest(): Promise<void> {
    return new Promise((resolve) => this.#requestWaiters.push(resolve));
  }

  /** Resolves once the current stream has sent `count` tokens. */
  tokensReached(count: number): Promise<void> {
    if (this.tokensSent >= count) return Promise.resolve();
    return new Promise((resolve) => this.#tokenWaiters.push({ count, resolve }));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
    }
    this.requests.push({
      method: req.method ?? "",
      path: req.url ?? "",
      authorization: req.headers.authorization,
      body,
    });
    const o = this.#options;
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      return json(res, 404, {
        error: { message: `No route ${req.method} ${req.url}`, type: "invalid_request_error" },
      });
    }
    const key = this.apiKey;
    if (key !== undefined && req.headers.authorization !== `Bearer ${key}`) {
      // Like real servers, echo the offending key, so tests can prove we never pass it on.
      const given = (req.headers.authorization ?? "").replace(/^Bearer /, "");
      return json(res, 401, {
        error: { message: `Incorrect API key provided: ${given}`, type: "invalid_request_error" },
      });
    }
    if (o.hang) {
      // Counted as a disconnect when the client gives up on it.
      res.on("close", () => {
        this.disconnects++;
        for (const wake of this.#disconnectWaiters.splice(0)) wake();
      });
      return;
    }
    if (o.errorStatus !== undefined) {
      res.writeHead(o.errorStatus, { "content-type": "application/json" });
      res.end(o.errorBody ?? JSON.stringify({ error: { message: "fake failure" } }));
      return;
    }
    await this.#stream(res, body);
  }

  async #stream(res: ServerResponse, body: unknown): Promise<void> {
    const o = this.#options;
    let gone = false;
    res.on("close", () => {
      if (res.writableFinished) return;
      gone = true;
      this.disconnects++;
      this.tokensSentAtDisconnect = this.tokensSent;
      for (const wake of this.#disconnectWaiters.splice(0)) wake();
    });
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    this.tokensSent = 0;
    if (o.rawStream !== undefined) {
      await this.#write(res, o.rawStream);
      res.end();
      return;
    }
    const base = {
      id: "chatcmpl-fake",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: o.model ?? "fake-model",
    };
    const event = (delta: Record<string, unknown>, finish: string | null): string =>
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const reply = o.script?.shift() ?? { text: this.answer };
    await this.#write(res, event({ role: "assistant", content: "" }, null));
    for (const wake of this.#requestWaiters.splice(0)) wake();
    if (o.holdFirstToken || reply.hold) await new Promise<void>((resolve) => this.#held.push(resolve));
    if (o.firstTokenDelayMs) await sleep(o.firstTokenDelayMs);
    for (const token of this.#tokenize(reply.text ?? "")) {
      if (o.tokenDelayMs) await sleep(o.tokenDelayMs);
      if (gone) return;
      await this.#write(res, event({ content: token }, null));
      this.tokensSent++;
      this.#wakeTokenWaiters();
    }
    if (gone) return;
    const calls = reply.toolCalls ?? [];
    for (const [index, call] of calls.entries()) {
      const id = call.id ?? `call_${++this.#callIds}`;
      const head = { index, id, type: "function", function: { name: call.name, arguments: "" } };
      await this.#write(res, event({ tool_calls: [head] }, null));
      for (const piece of JSON.stringify(call.arguments).match(/[\s\S]{1,8}/g) ?? []) {
        if (gone) return;
        await this.#write(res, event({ tool_calls: [{ index, function: { arguments: piece } }] }, null));
      }
    }
    const finish = calls.length > 0 ? "tool_calls" : "stop";
    // As OpenAI does when asked (stream_options.include_usage): one last chunk, no choices, the usage.
    const usage = wantsUsage(body) ? this.#usage(body, reply) : undefined;
    const usageChunk = usage ? `data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n` : "";
    await this.#write(res, event({}, finish) + usageChunk + (o.omitDone ? "" : "data: [DONE]\n\n"));
    this.completedStreams++;
    res.end();
  }

  /** Prompt tokens: the messages' characters / 4 (rounded up); completion: the tokens streamed plus one per call. */
  #usage(body: unknown, reply: ScriptedReply): (typeof this.usages)[number] {
    const messages = (body as { messages?: { content?: unknown }[] }).messages ?? [];
    const chars = messages.reduce((n, m) => n + (typeof m.content === "string" ? m.content.length : 0), 0);
    const prompt = Math.ceil(chars / 4);
    const completion = this.#tokenize(reply.text ?? "").length + (reply.toolCalls?.length ?? 0);
    const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    this.usages.push(usage);
    return usage;
  }

  #wakeTokenWaiters(): void {
    this.#tokenWaiters = this.#tokenWaiters.filter((w) => {
      if (this.tokensSent < w.count) return true;
      w.resolve();
      return false;
    });
  }

  async #write(res: ServerResponse, text: string): Promise<void> {
    const piece = this.#options.writePieceBytes;
    const bytes = Buffer.from(text, "utf8");
    if (!piece) {
      res.write(bytes);
      return;
    }
    for (let i = 0; i < bytes.length; i += piece) {
      if (res.destroyed) return;
      res.write(bytes.subarray(i, i + piece));
      // A turn of the event loop between pieces so they tend to leave as separate TCP segments.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}

/**
 * A deterministic answer of exactly `chars` characters that reads like an
 * assistant's: sentences, clauses, a list and paragraphs.
 */
export function longAnswer(chars: number): string {
  const sentences = [
    "Here is a summary of what I found for you today.",
    "The first option is the morning train, which leaves at 7:40 and arrives shortly after nine.",
    "It costs about 42 dollars, e.g. with the saver fare, and seats are still available.",
    "The second option is the bus, slower but cheaper; it takes roughly three hours.",
    "\n\nA few things to keep in mind:\n- bring your ticket on your phone\n- arrive ten minutes early\n- check the platform on the board",
    "\n\nDr. Lee's office confirmed your appointment at 11:15 in the U.S. office on Main St.",
    "If anything changes, I will let you know right away!",
    "Would you like me to book one of these now?",
  ];
  let text = "";
  for (let i = 0; text.length < chars; i++) {
    const s = sentences[i % sentences.length]!;
    text += text.length === 0 || s.startsWith("\n") ? s : ` ${s}`;
  }
  return text.slice(0, chars);
}

function wantsUsage(body: unknown): boolean {
  const options = (body as { stream_options?: { include_usage?: unknown } } | null)?.stream_options;
  return options?.include_usage === true;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (data += d));
    req.on("end", () => resolve(data));
    req.on("error", reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
