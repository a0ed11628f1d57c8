import { TalkError } from "../../core/index.js";
import type {
  AgentConsultRequest,
  AgentDelta,
  AgentUsage,
  AgentProvider,
  ProviderCapabilities,
  ProviderHealth,
} from "../../core/index.js";
import { readBounded } from "./read-bounded.js";
import { SseParser } from "./sse-parser.js";
import { ToolCallAssembler, toWireMessage, toWireTools } from "./openai-chat-tools.js";

/**
 * The `agent-consult` brain over any OpenAI-compatible chat completions
 * endpoint (`POST {baseUrl}/chat/completions`, `stream: true`, server-sent
 * events with `choices[0].delta.content`, ended by `data: [DONE]`): the
 * assistant's own gateway, hosted models and local servers alike. Tools in
 * the request are offered as functions; the calls the model streams
 * (`delta.tool_calls`) are yielded whole, after its text, before `done`.
 *
 * Node's global fetch, no SDK: one request shape is all we need, and owning
 * the stream lets an abort close the HTTP connection at once.
 */
export interface OpenAiChatAgentOptions {
  /** Endpoint root, e.g. "https://api.openai.com/v1" or "http://127.0.0.1:8080/v1". Required. */
  baseUrl: string;
  /** Model name sent in each request. Required. */
  model: string;
  /** Bearer token; omitted for local servers that need none. Never logged or put in errors. Default none. */
  apiKey?: string;
  /** Longest consult, from request to the last token, ms. Default 120 000 (long answers stream for 30 s and more). */
  timeoutMs?: number;
  /** Provider id in the registry and catalog. Default "openai-compatible-agent". */
  id?: string;
  /** Human-readable name. Default "OpenAI-compatible chat agent". */
  label?: string;
  /** Sent as `max_tokens` when set. Default none (the server's default). */
  maxTokens?: number;
  /** Sent as `temperature` when set. Default none. */
  temperature?: number;
  /**
   * Ask for the stream's token counts (`stream_options.include_usage`, a last chunk with `usage`), which
   * the session reports as `usage.metrics`. Off for a server that refuses the field. Default true.
   */
  streamUsage?: boolean;
}

type ResolvedOptions = Required<Omit<OpenAiChatAgentOptions, "apiKey" | "maxTokens" | "temperature">> &
  Pick<OpenAiChatAgentOptions, "apiKey" | "maxTokens" | "temperature">;

export const OPENAI_CHAT_AGENT_DEFAULTS = Object.freeze({
  timeoutMs: 120_000,
  streamUsage: true,
  id: "openai-compatible-agent",
  label: "OpenAI-compatible chat agent",
});

/** Error bodies are read only this far: enough for a message, never a memory hazard. */
const MAX_ERROR_BODY_CHARS = 4096;

export class OpenAiChatAgent implements AgentProvider {
  readonly kind = "agent" as const;
  readonly id: string;
  readonly label: string;
  readonly capabilities: ProviderCapabilities;
  readonly #options: Readonly<ResolvedOptions>;
  readonly #url: string;

  constructor(options: OpenAiChatAgentOptions) {
    const merged: ResolvedOptions = {
      ...OPENAI_CHAT_AGENT_DEFAULTS,
      ...definedOnly(options),
    } as ResolvedOptions;
    validateOptions(merged);
    this.#options = Object.freeze({ ...merged, baseUrl: merged.baseUrl.replace(/\/+$/, "") });
    this.#url = `${this.#options.baseUrl}/chat/completions`;
    this.id = merged.id;
    this.label = merged.label;
    this.capabilities = Object.freeze({ streaming: true, tools: true, models: [merged.model] });
  }

  async health(): Promise<ProviderHealth> {
    // Configuration only: a probe would spend a request (and money) on every health check.
    return { ok: true, detail: `${this.#options.baseUrl}, model ${this.#options.model}` };
  }

  async close(): Promise<void> {
    // Nothing long-lived: every consult owns its HTTP request and ends it.
  }

  async *consult(request: AgentConsultRequest): AsyncGenerator<AgentDelta> {
    const { signal } = request;
    validateMessages(request.messages);
    if (signal.aborted) throw cancelled(signal);

    // The HTTP exchange ends for every reason: the turn's signal, the timeout, or the consumer leaving.
    const stop = new AbortController();
    const httpSignal = AbortSignal.any([signal, stop.signal]);
    const timer = setTimeout(() => {
      stop.abort(new TalkError("timeout", `The agent did not finish within ${this.#options.timeoutMs} ms.`));
    }, this.#options.timeoutMs);
    const failure = (err: unknown): TalkError => {
      if (signal.aborted) return cancelled(signal);
      if (stop.signal.reason instanceof TalkError && stop.signal.reason.code === "timeout")
        return stop.signal.reason;
      return err instanceof TalkError
        ? err
        : new TalkError("provider_error", "The agent stream failed.", { cause: err });
    };
    let finished = false;
    try {
      let response: Response;
      try {
        response = await fetch(this.#url, {
          method: "POST",
          headers: this.#headers(),
          body: JSON.stringify(this.#body(request)),
          signal: httpSignal,
        });
      } catch (err) {
        if (httpSignal.aborted) throw failure(err);
        throw new TalkError(
          "provider_unavailable",
          `The agent endpoint ${this.#options.baseUrl} could not be reached.`,
          {
            cause: err,
          },
        );
      }
      if (!response.ok) throw await this.#httpError(response).catch((err: unknown) => failure(err));
      if (!response.body) throw new TalkError("provider_error", "The agent answered without a body.");

      const contentType = response.headers.get("content-type") ?? "";
      if (contentType.includes("application/json")) {
        // A server that ignores `stream: true` answers with one completion; take it rather than fail.
        const text = await response.text().catch((err: unknown) => Promise.reject(failure(err)));
        yield* this.#fromCompletion(text);
        finished = true;
        return;
      }

      const parser = new SseParser();
      const calls = new ToolCallAssembler();
      let finishReason: string | undefined;
      let usage: AgentUsage | undefined;
      let done = false;
      try {
        for await (const bytes of response.body as AsyncIterable<Uint8Array>) {
          for (const event of parser.push(bytes)) {
            const delta = this.#fromEvent(event.data);
            if (delta === "done") {
              done = true;
              break;
            }
            if (delta.finishReason) finishReason = delta.finishReason;
            if (delta.usage) usage = delta.usage;
            if (delta.toolCalls !== undefined) calls.push(delta.toolCalls);
            if (delta.text) yield { type: "text", text: delta.text };
            if (signal.aborted) throw cancelled(signal);
          }
          if (done) break;
        }
        if (!done) {
          for (const event of parser.end()) {
            const delta = this.#fromEvent(event.data);
            if (delta === "done") done = true;
            else {
              if (delta.usage) usage = delta.usage;
              if (delta.toolCalls !== undefined) calls.push(delta.toolCalls);
              if (delta.text) yield { type: "text", text: delta.text };
            }
          }
        }
      } catch (err) {
        throw failure(err);
      }
      if (signal.aborted) throw cancelled(signal);
      // Lenient: a stream that ended cleanly after a finish_reason lost only its terminator.
      if (!done && finishReason === undefined) {
        throw new TalkError("provider_error", "The agent stream ended before [DONE].");
      }
      for (const call of calls.finish()) yield { type: "tool_call", ...call };
      finished = true;
      yield {
        type: "done",
        ...(finishReason !== undefined ? { finishReason } : {}),
        ...(usage ? { usage } : {}),
      };
    } finally {
      clearTimeout(timer);
      // Consumer stopped early or an error: close the HTTP stream now rather than let it drain.
      if (!finished && !httpSignal.aborted) stop.abort(new TalkError("cancelled", "The consult ended."));
    }
  }

  #headers(): Record<string, string> {
    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "text/event-stream",
    };
    if (this.#options.apiKey) headers.authorization = `Bearer ${this.#options.apiKey}`;
    return headers;
  }

  #body(request: AgentConsultRequest): Record<string, unknown> {
    const body: Record<string, unknown> = {
      model: this.#options.model,
      messages: request.messages.map(toWireMessage),
      stream: true,
    };
    if (this.#options.streamUsage) body.stream_options = { include_usage: true };
    if (request.tools && request.tools.length > 0) body.tools = toWireTools(request.tools);
    if (this.#options.maxTokens !== undefined) body.max_tokens = this.#options.maxTokens;
    if (this.#options.temperature !== undefined) body.temperature = this.#options.temperature;
    return body;
  }

  /** One SSE `data` payload: a text delta with an optional finish reason, or the end marker. */
  #fromEvent(
    data: string,
  ): { text?: string; finishReason?: string; toolCalls?: unknown; usage?: AgentUsage } | "done" {
    if (data.trim() === "[DONE]") return "done";
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch (err) {
      throw new TalkError("provider_error", "The agent sent a malformed stream event.", {
        cause: err,
        details: { sample: this.#redact(data.slice(0, 120)) },
      });
    }
    if (!isRecord(chunk))
      throw new TalkError("provider_error", "The agent sent a stream event that is not an object.");
    if (chunk.error !== undefined) {
      throw new TalkError(
        "provider_error",
        `The agent reported an error: ${this.#errorMessage(chunk.error)}`,
      );
    }
    const choice = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
    // The usage chunk (stream_options.include_usage) comes last, with no choice; keep-alives carry neither.
    if (!isRecord(choice)) {
      const usage = usageOf(chunk.usage);
      return usage ? { usage } : {};
    }
    const delta = isRecord(choice.delta) ? choice.delta : {};
    const result: { text?: string; finishReason?: string; toolCalls?: unknown } = {};
    if (typeof delta.content === "string" && delta.content.length > 0) result.text = delta.content;
    if (delta.tool_calls !== undefined && delta.tool_calls !== null) result.toolCalls = delta.tool_calls;
    if (typeof choice.finish_reason === "string") result.finishReason = choice.finish_reason;
    return result;
  }

  *#fromCompletion(text: string): Generator<AgentDelta> {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch (err) {
      throw new TalkError("provider_error", "The agent sent a malformed JSON body.", { cause: err });
    }
    if (isRecord(body) && body.error !== undefined) {
      throw new TalkError("provider_error", `The agent reported an error: ${this.#errorMessage(body.error)}`);
    }
    const choice = isRecord(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
    const message = isRecord(choice) && isRecord(choice.message) ? choice.message : undefined;
    const toolCalls = message?.tool_calls;
    if (!message || (typeof message.content !== "string" && !Array.isArray(toolCalls))) {
      throw new TalkError("provider_error", "The agent's completion holds no message content.");
    }
    if (typeof message.content === "string" && message.content.length > 0)
      yield { type: "text", text: message.content };
    if (Array.isArray(toolCalls)) {
      const calls = new ToolCallAssembler();
      calls.push(toolCalls);
      for (const call of calls.finish()) yield { type: "tool_call", ...call };
    }
    const finishReason =
      isRecord(choice) && typeof choice.finish_reason === "string" ? choice.finish_reason : undefined;
    const usage = isRecord(body) ? usageOf(body.usage) : undefined;
    yield {
      type: "done",
      ...(finishReason !== undefined ? { finishReason } : {}),
      ...(usage ? { usage } : {}),
    };
  }

  async #httpError(response: Response): Promise<TalkError> {
    const status = response.status;
    const details = { status };
    const retryable = status === 408 || status === 429 || status >= 500;
    if (status === 401 || status === 403) {
      // Servers echo (part of) the key in auth errors: say nothing from the body.
      await response.body?.cancel().catch(() => {});
      return new TalkError(
        "provider_error",
        `The agent endpoint rejected the credentials (HTTP ${status}).`,
        {
          details,
          retryable: false,
        },
      );
    }
    const body = await readBounded(response, MAX_ERROR_BODY_CHARS);
    let message = body.trim();
    try {
      const parsed: unknown = JSON.parse(body);
      if (isRecord(parsed) && parsed.error !== undefined) message = this.#errorMessage(parsed.error);
    } catch {
      // Not JSON: the text itself is the message.
    }
    const suffix = message ? `: ${this.#redact(message.slice(0, 300))}` : "";
    return new TalkError("provider_error", `The agent endpoint answered HTTP ${status}${suffix}`, {
      details,
      retryable,
    });
  }

  #errorMessage(error: unknown): string {
    const raw =
      isRecord(error) && typeof error.message === "string"
        ? error.message
        : typeof error === "string"
          ? error
          : "unknown error";
    return this.#redact(raw.slice(0, 300));
  }

  /** Removes the API key wherever a server echoes it. */
  #redact(text: string): string {
    const key = this.#options.apiKey;
    return key ? text.split(key).join("[redacted]") : text;
  }
}

export function createOpenAiChatAgent(options: OpenAiChatAgentOptions): OpenAiChatAgent {
  return new OpenAiChatAgent(options);
}

function cancelled(signal: AbortSignal): TalkError {
  const reason: unknown = signal.reason;
  if (reason instanceof TalkError && reason.code === "cancelled") return reason;
  return new TalkError("cancelled", "The agent consult was cancelled.", { cause: reason });
}

/** A field explicitly set to undefined keeps its default (config loaders produce such fields). */
function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** A completion's `usage` ({prompt_tokens, completion_tokens}) as token counts; undefined when it holds none. */
function usageOf(value: unknown): AgentUsage | undefined {
  if (!isRecord(value)) return undefined;
  const tokens = (n: unknown): number | undefined =>
    typeof n === "number" && Number.isInteger(n) && n >= 0 ? n : undefined;
  const inputTokens = tokens(value.prompt_tokens);
  const outputTokens = tokens(value.completion_tokens);
  if (inputTokens === undefined && outputTokens === undefined) return undefined;
  return {
    ...(inputTokens !== undefined ? { inputTokens } : {}),
    ...(outputTokens !== undefined ? { outputTokens } : {}),
  };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function validateMessages(messages: unknown): void {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new TalkError("invalid_params", "A consult needs at least one message.");
  }
  for (const m of messages) {
    if (
      !isRecord(m) ||
      !["system", "user", "assistant", "tool"].includes(m.role as string) ||
      typeof m.content !== "string"
    ) {
      throw new TalkError(
        "invalid_params",
        "Each message needs a role (system, user, assistant, tool) and string content.",
      );
    }
    if (m.role === "tool" && (typeof m.toolCallId !== "string" || m.toolCallId === "")) {
      throw new TalkError("invalid_params", "A tool message needs the toolCallId it answers.");
    }
  }
}

function validateOptions(o: ResolvedOptions): void {
  const bad = (field: string, why: string): never => {
    throw new TalkError("config_invalid", `openai-compatible agent: ${field} ${why}`);
  };
  if (typeof o.baseUrl !== "string" || !o.baseUrl) bad("baseUrl", "is required");
  let url: URL | undefined;
  try {
    url = new URL(o.baseUrl);
  } catch {
    bad("baseUrl", "must be an absolute http(s) URL");
  }
  if (url && url.protocol !== "http:" && url.protocol !== "https:") bad("baseUrl", "must use http or https");
  // Credentials in the URL would end up in logs and errors; they belong in apiKey.
  if (url && (url.username || url.password)) bad("baseUrl", "must not contain credentials; use apiKey");
  if (typeof o.model !== "string" || o.model.trim() === "") bad("model", "is required");
  if (o.apiKey !== undefined && (typeof o.apiKey !== "string" || /[\r\n]/.test(o.apiKey))) {
    bad("apiKey", "must be a single-line string");
  }
  if (!Number.isInteger(o.timeoutMs) || o.timeoutMs < 1) bad("timeoutMs", "must be a positive integer (ms)");
  if (!o.id) bad("id", "must be a non-empty string");
  if (o.maxTokens !== undefined && (!Number.isInteger(o.maxTokens) || o.maxTokens < 1)) {
    bad("maxTokens", "must be a positive integer");
  }
  if (
    o.temperature !== undefined &&
    (!Number.isFinite(o.temperature) || o.temperature < 0 || o.temperature > 2)
  ) {
    bad("temperature", "must be between 0 and 2");
  }
}
