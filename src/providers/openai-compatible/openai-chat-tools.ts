import { TalkError } from "../../core/index.js";
import type { AgentMessage, AgentToolCall, RealtimeToolDefinition } from "../../core/index.js";

/**
 * Function calling on the chat completions wire: the request's `tools`
 * (`{type: "function", function: {name, description, parameters}}`), the
 * conversation's assistant `tool_calls` and `role: "tool"` results, and the
 * streamed `choices[0].delta.tool_calls` fragments (the id and name arrive
 * first, the arguments accrete by `index`), assembled into whole calls.
 */

/** Longest arguments text of one call: a model that streams more is broken, not verbose. */
const MAX_ARGUMENTS_CHARS = 64 * 1024;
/** Most calls in one message. */
const MAX_CALLS = 16;

export function toWireTools(tools: readonly RealtimeToolDefinition[]): unknown[] {
  return tools.map((t) => ({
    type: "function",
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
}

export function toWireMessage(m: AgentMessage): Record<string, unknown> {
  if (m.role === "tool") return { role: "tool", tool_call_id: m.toolCallId, content: m.content };
  if (m.role === "assistant" && m.toolCalls && m.toolCalls.length > 0) {
    return {
      role: "assistant",
      content: m.content === "" ? null : m.content,
      tool_calls: m.toolCalls.map((c) => ({
        id: c.callId,
        type: "function",
        function: { name: c.name, arguments: c.argumentsJson },
      })),
    };
  }
  return { role: m.role, content: m.content };
}

interface PartialCall {
  id: string;
  name: string;
  arguments: string;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function malformed(message: string): TalkError {
  return new TalkError("provider_error", `The agent sent a malformed tool call: ${message}`, {
    retryable: false,
  });
}

/** Collects the streamed fragments of a message's tool calls, by index. */
export class ToolCallAssembler {
  readonly #calls = new Map<number, PartialCall>();

  get size(): number {
    return this.#calls.size;
  }

  /** One chunk's `delta.tool_calls` (or a completion's `message.tool_calls`, whole). */
  push(fragments: unknown): void {
    if (!Array.isArray(fragments)) throw malformed("tool_calls is not a list");
    for (const [position, f] of fragments.entries()) {
      if (!isRecord(f)) throw malformed("a tool call is not an object");
      // Whole calls (a completion) may come without an index: their position is it.
      const index = typeof f.index === "number" ? f.index : position;
      if (!Number.isInteger(index) || index < 0) throw malformed("bad index");
      let call = this.#calls.get(index);
      if (!call) {
        if (this.#calls.size >= MAX_CALLS) throw malformed(`more than ${MAX_CALLS} calls`);
        call = { id: "", name: "", arguments: "" };
        this.#calls.set(index, call);
      }
      if (typeof f.id === "string" && f.id !== "") call.id = f.id;
      const fn = isRecord(f.function) ? f.function : {};
      if (typeof fn.name === "string" && fn.name !== "") call.name += call.name === fn.name ? "" : fn.name;
      if (typeof fn.arguments === "string") call.arguments += fn.arguments;
      if (call.arguments.length > MAX_ARGUMENTS_CHARS) throw malformed("arguments too long");
    }
  }

  /** The whole calls, in index order. Every call needs an id and a function name. */
  finish(): AgentToolCall[] {
    return [...this.#calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, c]) => {
        if (!c.id) throw malformed("a call has no id");
        if (!c.name) throw malformed(`call ${c.id} has no function name`);
        return { callId: c.id, name: c.name, argumentsJson: c.arguments };
      });
  }
}
