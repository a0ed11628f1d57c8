import { TalkError } from "../errors.js";
import type { RealtimeToolDefinition } from "../provider-types.js";

/** At most this many client-completed tools per session. */
export const MAX_CLIENT_TOOLS = 16;
/** A tool name as the realtime providers accept function names. */
export const CLIENT_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const MAX_CLIENT_TOOL_DESCRIPTION = 1024;
/** A parameters schema's size as JSON, UTF-8 bytes. */
export const MAX_CLIENT_TOOL_SCHEMA_BYTES = 8192;

export interface ClientToolRules {
  /** True for a name the server runs itself (a client tool must not shadow it). */
  isServerTool(name: string): boolean;
  /** The tool policy's verdict on a name. */
  isAllowed(name: string): boolean;
}

function invalid(field: string, reason: string, message: string): TalkError {
  return new TalkError("invalid_params", `${field}: ${message}`, { details: { field, reason } });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parseOne(
  value: unknown,
  at: string,
  rules: ClientToolRules,
  seen: Set<string>,
): RealtimeToolDefinition {
  if (!isPlainObject(value))
    throw invalid(at, "not_object", "a tool is an object {name, description?, parameters}.");
  for (const key of Object.keys(value)) {
    if (key !== "name" && key !== "description" && key !== "parameters")
      throw invalid(`${at}.${key}`, "unknown_key", "unknown key.");
  }
  const { name, description, parameters } = value;
  if (typeof name !== "string" || !CLIENT_TOOL_NAME.test(name))
    throw invalid(`${at}.name`, "bad_name", "1 to 64 letters, digits, _ or -.");
  if (seen.has(name)) throw invalid(`${at}.name`, "duplicate", `"${name}" is declared twice.`);
  if (rules.isServerTool(name))
    throw invalid(`${at}.name`, "shadows_server_tool", `"${name}" is a server tool.`);
  if (!rules.isAllowed(name))
    throw invalid(`${at}.name`, "denied_by_policy", `tool policy denies "${name}".`);
  if (
    description !== undefined &&
    (typeof description !== "string" || description.length > MAX_CLIENT_TOOL_DESCRIPTION)
  )
    throw invalid(
      `${at}.description`,
      "bad_description",
      `a string of at most ${MAX_CLIENT_TOOL_DESCRIPTION} characters.`,
    );
  if (!isPlainObject(parameters) || parameters["type"] !== "object")
    throw invalid(`${at}.parameters`, "bad_schema", 'a JSON Schema object with type "object".');
  if (Buffer.byteLength(JSON.stringify(parameters)) > MAX_CLIENT_TOOL_SCHEMA_BYTES)
    throw invalid(
      `${at}.parameters`,
      "schema_too_large",
      `at most ${MAX_CLIENT_TOOL_SCHEMA_BYTES} bytes as JSON.`,
    );
  seen.add(name);
  return { name, description: description ?? "", parameters };
}

/**
 * A session's client-completed tools as its client declared them: checked
 * against the server's tools (no shadowing) and the tool policy, sizes
 * bounded. Errors are `invalid_params` with `details.field` naming the field
 * (`clientTools[1].name`) and `details.reason`.
 */
export function parseClientTools(
  value: unknown,
  rules: ClientToolRules,
  field = "clientTools",
): RealtimeToolDefinition[] {
  if (!Array.isArray(value)) throw invalid(field, "not_array", "an array of tools.");
  if (value.length > MAX_CLIENT_TOOLS) throw invalid(field, "too_many", `at most ${MAX_CLIENT_TOOLS} tools.`);
  const seen = new Set<string>();
  return value.map((tool, i) => parseOne(tool, `${field}[${i}]`, rules, seen));
}
