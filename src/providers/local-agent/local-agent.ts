import { TalkError } from "../../core/index.js";
import type {
  AgentConsultRequest,
  AgentDelta,
  AgentMessage,
  AgentProvider,
  ProviderCapabilities,
  ProviderHealth,
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
 */
export class LocalAgentProvider implements AgentProvider {
  readonly kind = "agent" as const;
  readonly id: string;
  readonly label = "Built-in local agent (rule-based, not a language model)";
  readonly capabilities: ProviderCapabilities = Object.freeze({ local: true, streaming: true });
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
    const answer = this.answer(request.messages);
    // A few deltas, split at word boundaries, so consumers exercise their streaming path.
    for (const piece of splitIntoDeltas(answer)) {
      // Yield to the event loop between deltas so an abort can land mid-answer.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (signal.aborted) throw cancelled(signal);
      yield { type: "text", text: piece };
    }
    yield { type: "done", finishReason: "stop" };
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
