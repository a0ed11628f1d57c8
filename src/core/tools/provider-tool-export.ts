import type { RealtimeToolDefinition, ToolSchemaProfile } from "../provider-types.js";

/**
 * The sanitizing export layer of seed 003: the canonical tool definitions
 * (ToolRegistry) are offered to each provider through the limits it declares
 * (`capabilities.toolSchema`), never redefined per provider. Tools whose name
 * the provider cannot take are left out (and reported), schemas lose the
 * keywords it does not accept, descriptions are cut to its limit.
 */
export const DEFAULT_TOOL_SCHEMA_KEYWORDS: readonly string[] = Object.freeze([
  "type",
  "description",
  "properties",
  "required",
  "enum",
  "items",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "pattern",
  "additionalProperties",
]);

export interface ToolExport {
  tools: RealtimeToolDefinition[];
  /** Names left out because the provider cannot take them. */
  skipped: string[];
}

export function exportToolsForProvider(
  tools: readonly RealtimeToolDefinition[],
  profile: ToolSchemaProfile = {},
): ToolExport {
  const maxName = profile.maxNameLength ?? 64;
  const maxDescription = profile.maxDescriptionLength ?? 1024;
  const keywords = new Set(profile.keywords ?? DEFAULT_TOOL_SCHEMA_KEYWORDS);
  const out: RealtimeToolDefinition[] = [];
  const skipped: string[] = [];
  for (const tool of tools) {
    if (tool.name.length > maxName || !/^[A-Za-z0-9_-]+$/.test(tool.name)) {
      skipped.push(tool.name);
      continue;
    }
    out.push({
      name: tool.name,
      description:
        tool.description.length > maxDescription
          ? tool.description.slice(0, maxDescription)
          : tool.description,
      parameters: sanitizeSchema(tool.parameters, keywords) as Record<string, unknown>,
    });
  }
  return { tools: out, skipped };
}

/** Keeps only accepted keywords; `properties` keeps every property name and sanitizes each schema. */
function sanitizeSchema(schema: unknown, keywords: ReadonlySet<string>): unknown {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema as Record<string, unknown>)) {
    if (!keywords.has(key)) continue;
    if (key === "properties" && value !== null && typeof value === "object") {
      out[key] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([name, s]) => [
          name,
          sanitizeSchema(s, keywords),
        ]),
      );
    } else if (key === "items" || (key === "additionalProperties" && typeof value === "object")) {
      out[key] = sanitizeSchema(value, keywords);
    } else {
      out[key] = structuredClone(value);
    }
  }
  return out;
}
