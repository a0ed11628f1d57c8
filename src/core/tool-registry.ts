import { TalkError } from "./errors.js";
import type { TalkLogger } from "./logger.js";
import type { RealtimeToolDefinition } from "./provider-types.js";

/** What a tool handler gets: enough to do its job and stop on abort, nothing of the session itself. */
export interface ToolContext {
  /** Aborted when the call's turn is cancelled or the session closes. */
  readonly signal: AbortSignal;
  readonly sessionId: string;
  readonly turnId: string;
  readonly callId: string;
  readonly logger: TalkLogger;
}

/** Returns the tool's output as text (what the model reads). Throwing reports tool.error. */
export type ToolHandler = (args: Record<string, unknown>, ctx: ToolContext) => Promise<string>;

/** A JSON Schema for tool arguments; its top level is always an object. */
export interface ToolParametersSchema {
  type: "object";
  properties?: Record<string, { type?: string; description?: string; [key: string]: unknown }>;
  required?: string[];
  additionalProperties?: boolean;
  [key: string]: unknown;
}

/** The one canonical definition of a tool; provider tool lists are exports of it, never copies. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: ToolParametersSchema;
  /** The tool changes something outside the process; such tools are told about cancellation and must report it. */
  sideEffects: boolean;
  handler: ToolHandler;
}

/** Function names every realtime provider accepts. */
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const JSON_TYPES: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === "string",
  number: (v) => typeof v === "number" && Number.isFinite(v),
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === "boolean",
  object: (v) => v !== null && typeof v === "object" && !Array.isArray(v),
  array: (v) => Array.isArray(v),
  null: (v) => v === null,
};

/**
 * Parses and checks a call's arguments against the tool's schema: top-level
 * object, required properties, declared property types, and no extras when
 * the schema forbids them. Deeper validation is the tool's own concern.
 */
export function parseToolArguments(tool: ToolDefinition, argumentsJson: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = argumentsJson.trim() === "" ? {} : JSON.parse(argumentsJson);
  } catch (err) {
    throw new TalkError("invalid_params", `Arguments of ${tool.name} are not valid JSON.`, { cause: err });
  }
  if (!JSON_TYPES["object"]!(parsed))
    throw new TalkError("invalid_params", `Arguments of ${tool.name} must be a JSON object.`);
  const args = parsed as Record<string, unknown>;
  const props = tool.parameters.properties ?? {};
  for (const name of tool.parameters.required ?? []) {
    if (!(name in args))
      throw new TalkError("invalid_params", `${tool.name} needs argument "${name}".`, {
        details: { argument: name },
      });
  }
  for (const [name, value] of Object.entries(args)) {
    const schema = props[name];
    if (!schema) {
      if (tool.parameters.additionalProperties === false) {
        throw new TalkError("invalid_params", `${tool.name} has no argument "${name}".`, {
          details: { argument: name },
        });
      }
      continue;
    }
    const check = schema.type === undefined ? undefined : JSON_TYPES[schema.type];
    if (check && !check(value)) {
      throw new TalkError("invalid_params", `Argument "${name}" of ${tool.name} must be ${schema.type}.`, {
        details: { argument: name },
      });
    }
  }
  return args;
}

/** The tools the assistant may call, validated when registered. */
export class ToolRegistry {
  readonly #tools = new Map<string, ToolDefinition>();

  register(tool: ToolDefinition): this {
    const invalid = (message: string): TalkError =>
      new TalkError("config_invalid", message, { details: { tool: tool?.name } });
    if (tool === null || typeof tool !== "object") throw invalid("A tool definition must be an object.");
    if (typeof tool.name !== "string" || !TOOL_NAME.test(tool.name)) {
      throw invalid(`Tool name ${JSON.stringify(tool.name)} is invalid: use 1-64 of [A-Za-z0-9_-].`);
    }
    if (this.#tools.has(tool.name)) throw invalid(`A tool named "${tool.name}" is already registered.`);
    if (typeof tool.description !== "string" || tool.description.length === 0)
      throw invalid(`Tool "${tool.name}" needs a description.`);
    if (
      tool.parameters === null ||
      typeof tool.parameters !== "object" ||
      tool.parameters.type !== "object"
    ) {
      throw invalid(`Tool "${tool.name}" parameters must be a JSON Schema with type "object".`);
    }
    if (typeof tool.sideEffects !== "boolean") throw invalid(`Tool "${tool.name}" must declare sideEffects.`);
    if (typeof tool.handler !== "function") throw invalid(`Tool "${tool.name}" needs a handler.`);
    this.#tools.set(tool.name, Object.freeze({ ...tool }));
    return this;
  }

  get(name: string): ToolDefinition | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  list(): ToolDefinition[] {
    return [...this.#tools.values()];
  }

  /** The provider-facing export: name, description and schema of the tools `include` lets through. */
  toRealtimeTools(include: (name: string) => boolean = () => true): RealtimeToolDefinition[] {
    return this.list()
      .filter((t) => include(t.name))
      .map((t) => ({ name: t.name, description: t.description, parameters: structuredClone(t.parameters) }));
  }
}
