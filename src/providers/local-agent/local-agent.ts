import { randomUUID } from "node:crypto";
import { TalkError } from "../../core/index.js";
import type {
  AgentConsultRequest,
  AgentDelta,
  AgentMessage,
  AgentToolCall,
  AgentProvider,
  ProviderCapabilities,
  ProviderHealth,
  RealtimeToolDefinition,
} from "../../core/index.js";
import { mergeOptions } from "../support/options.js";

/** Options of the built-in rule-based agent. */
export interface LocalAgentOptions {
  /** Provider id in the registry and catalog. Default "local-agent". */
  id?: string;
  /** IANA time zone for "what time is it" answers. Default: the process's zone. */
  timeZone?: string;
  /** BCP 47 locale used to format times and dates. Default "en-US". */
  locale?: string;
  /** Source of the current time; tests pin it. Default () => new Date(). */
  now?: () => Date;
  /** Longest echo of what the user said, in characters. Default 200. */
  maxEchoLength?: number;
}

const DEFAULTS: Readonly<Required<LocalAgentOptions>> = Object.freeze({
  id: "local-agent",
  timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
  locale: "en-US",
  now: () => new Date(),
  maxEchoLength: 200,
});

export const LOCAL_AGENT_HELP =
  "I am the built-in local assistant, a simple rule-based stand-in. " +
  "You can ask me what time it is or what today's date is, and I will repeat back anything else you say.";

const NOT_HEARD = "I did not catch that. Ask me for help to hear what I can do.";

/**
 * The embedded default brain: a rule-based stand-in, not a language model. It
 * looks only at the last user message and answers the time, the date, a help
 * text, or an echo. It needs no network and no keys, so a fresh install can
 * hold a full spoken conversation loop end to end.
 *
 * When it is offered the call tools it uses them by rule, through the same
 * function-call path as a model: a goodbye says goodbye and calls
 * `end_call`; asking for an operator, an agent or a human calls
 * `transfer_call` to the first destination its schema lists (none: it says
 * it cannot). After a tool's result it says nothing more, or apologises
 * when the tool failed.
 */
export class LocalAgentProvider implements AgentProvider {
  readonly kind = "agent" as const;
  readonly id: string;
  readonly label = "Built-in local agent (rule-based, not a language model)";
  readonly capabilities: ProviderCapabilities = Object.freeze({ local: true, streaming: true, tools: true });
  readonly #options: Readonly<Required<LocalAgentOptions>>;
  readonly #time: Intl.DateTimeFormat;
  readonly #date: Intl.DateTimeFormat;

  constructor(options: LocalAgentOptions = {}) {
    const merged = mergeOptions(DEFAULTS, options);
    if (!merged.id) throw new TalkError("config_invalid", "local-agent: id must be a non-empty string");
    if (!Number.isInteger(merged.maxEchoLength) || merged.maxEchoLength < 1) {
      throw new TalkError("config_invalid", "local-agent: maxEchoLength must be a positive integer");
    }
    try {
      this.#time = new Intl.DateTimeFormat(merged.locale, {
        timeZone: merged.timeZone,
        hour: "numeric",
        minute: "2-digit",
      });
      this.#date = new Intl.DateTimeFormat(merged.locale, {
        timeZone: merged.timeZone,
        weekday: "long",
        month: "long",
        day: "numeric",
        year: "numeric",
      });
    } catch (err) {
      throw new TalkError("config_invalid", "local-agent: timeZone or locale is not valid", { cause: err });
    }
    this.#options = Object.freeze(merged);
    this.id = merged.id;
  }

  async health(): Promise<ProviderHealth> {
    return { ok: true, detail: "rule-based, no network" };
  }

  async *consult(request: AgentConsultRequest): AsyncGenerator<AgentDelta> {
    const { signal } = request;
    if (signal.aborted) throw cancelled(signal);
    const { text: answer, toolCalls } = this.plan(request.messages, request.tools ?? []);
    // A few deltas, split at word boundaries, so consumers exercise their streaming path.
    for (const piece of splitIntoDeltas(answer)) {
      // Yield to the event loop between deltas so an abort can land mid-answer.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (signal.aborted) throw cancelled(signal);
      if (piece) yield { type: "text", text: piece };
    }
    for (const call of toolCalls) yield { type: "tool_call", ...call };
    yield { type: "done", finishReason: toolCalls.length > 0 ? "tool_calls" : "stop" };
  }

  /** The answer to the conversation so far: text, and the call tools the rules pick among those offered. */
  plan(
    messages: readonly AgentMessage[],
    tools: readonly RealtimeToolDefinition[],
  ): { text: string; toolCalls: AgentToolCall[] } {
    const last = messages[messages.length - 1];
    if (last?.role === "tool") return { text: afterTool(messages, last), toolCalls: [] };
    const heard = normalize([...messages].reverse().find((m) => m.role === "user")?.content ?? "");
    const offered = (name: string) => tools.find((t) => t.name === name);
    const call = (name: string, args: Record<string, unknown>): AgentToolCall => ({
      callId: `local-${randomUUID()}`,
      name,
      argumentsJson: JSON.stringify(args),
    });
    if (offered("end_call") && GOODBYE.test(heard)) {
      return { text: "Goodbye!", toolCalls: [call("end_call", { reason: "the caller said goodbye" })] };
    }
    const transfer = offered("transfer_call");
    if (transfer && OPERATOR.test(heard)) {
      const target = firstTarget(transfer);
      if (target === undefined) return { text: "Sorry, I cannot transfer calls here.", toolCalls: [] };
      return {
        text: "Let me transfer you.",
        toolCalls: [call("transfer_call", { target, briefing: "A caller asked for a person." })],
      };
    }
    return { text: this.answer(messages), toolCalls: [] };
  }

  /** The whole answer to the last user message (exposed for talk.speak-style callers and tests). */
  answer(messages: readonly AgentMessage[]): string {
    const last = [...messages].reverse().find((m) => m.role === "user");
    const heard = normalize(last?.content ?? "");
    if (!heard) return NOT_HEARD;
    const now = this.#options.now();
    if (/\b(help|what can you do)\b/.test(heard)) return LOCAL_AGENT_HELP;
    if (/\b(time|clock|hour)\b/.test(heard)) return `It is ${this.#time.format(now)}.`;
    if (/\b(date|day|today)\b/.test(heard)) return `Today is ${this.#date.format(now)}.`;
    const echo = (last?.content ?? "").trim().replace(/\s+/g, " ").slice(0, this.#options.maxEchoLength);
    return `You said: ${echo}`;
  }

  async close(): Promise<void> {}
}

export function createLocalAgent(options: LocalAgentOptions = {}): LocalAgentProvider {
  return new LocalAgentProvider(options);
}

const GOODBYE = /\b(goodbye|good bye|bye|hang up)\b/;
const OPERATOR = /\b(operator|agent|human|person|representative)\b/;

/** The first destination a transfer_call schema offers (its `target` enum), if any. */
function firstTarget(tool: RealtimeToolDefinition): string | undefined {
  const properties = tool.parameters["properties"] as Record<string, { enum?: unknown }> | undefined;
  const names = properties?.["target"]?.enum;
  return Array.isArray(names) && typeof names[0] === "string" ? names[0] : undefined;
}

/** What to say after a tool's result: nothing when it worked (the call ends or moves), an apology when it failed. */
function afterTool(messages: readonly AgentMessage[], result: AgentMessage): string {
  let failed = false;
  try {
    const parsed: unknown = JSON.parse(result.content);
    failed = typeof parsed === "object" && parsed !== null && "error" in parsed;
  } catch {
    // A plain-text output is a success.
  }
  if (!failed) return "";
  const asked = [...messages]
    .reverse()
    .find((m) => m.toolCalls?.some((c) => c.callId === result.toolCallId))
    ?.toolCalls?.find((c) => c.callId === result.toolCallId);
  if (asked?.name === "transfer_call") return "Sorry, I could not transfer you. I am still here to help.";
  if (asked?.name === "end_call") return "Sorry, I could not hang up.";
  return "Sorry, that did not work.";
}

function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s']/gu, " ")
    .replace(/\s+/g, " ")
    .trim();
}

/** Splits into at most four pieces at spaces; concatenating them gives the text back. */
export function splitIntoDeltas(text: string, pieces = 4): string[] {
  const words = text.split(/(?<= )/);
  const per = Math.max(1, Math.ceil(words.length / pieces));
  const out: string[] = [];
  for (let i = 0; i < words.length; i += per) out.push(words.slice(i, i + per).join(""));
  return out;
}

function cancelled(signal: AbortSignal): TalkError {
  return new TalkError("cancelled", "The agent consult was cancelled.", { cause: signal.reason });
}
