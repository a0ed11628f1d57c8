import { TalkError } from "./errors.js";

export interface ToolPolicyOptions {
  /**
   * Tool names (or `*` patterns) that may run. Undefined allows every tool
   * not denied; an empty list allows none.
   */
  allow?: readonly string[];
  /** Tool names (or `*` patterns) that never run. Deny wins over allow (default: none). */
  deny?: readonly string[];
  /**
   * A policy this one narrows: a name it refuses is refused here too, with
   * its decision (a selection inside the general policy, e.g. the tools a
   * direct-tools session may call). Default: none.
   */
  within?: ToolPolicy;
}

export type ToolPolicyDecision =
  | { allowed: true }
  | { allowed: false; reason: "denied"; pattern: string }
  | { allowed: false; reason: "not_allowed" };

const PATTERN = /^[A-Za-z0-9_.*-]{1,128}$/;

function compile(pattern: string): RegExp {
  const escaped = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\-]/g, "\\$&"));
  return new RegExp(`^${escaped.join(".*")}$`);
}

function compileList(
  field: string,
  list: readonly string[] | undefined,
): { pattern: string; re: RegExp }[] | undefined {
  if (list === undefined) return undefined;
  if (!Array.isArray(list))
    throw new TalkError("config_invalid", `Tool policy ${field} must be a list of tool names.`);
  return list.map((pattern) => {
    if (typeof pattern !== "string" || !PATTERN.test(pattern)) {
      throw new TalkError(
        "config_invalid",
        `Tool policy ${field} entry ${JSON.stringify(pattern)} is not a tool name or * pattern.`,
      );
    }
    return { pattern, re: compile(pattern) };
  });
}

/** Allow/deny lists of tool names, evaluated for every call. */
export class ToolPolicy {
  readonly #allow: { pattern: string; re: RegExp }[] | undefined;
  readonly #deny: { pattern: string; re: RegExp }[];
  readonly #within: ToolPolicy | undefined;

  constructor(options: ToolPolicyOptions = {}) {
    this.#allow = compileList("allow", options.allow);
    this.#deny = compileList("deny", options.deny) ?? [];
    if (options.within !== undefined && !(options.within instanceof ToolPolicy))
      throw new TalkError("config_invalid", "Tool policy within must be a ToolPolicy.");
    this.#within = options.within;
  }

  evaluate(name: string): ToolPolicyDecision {
    const outer = this.#within?.evaluate(name);
    if (outer && !outer.allowed) return outer;
    const denied = this.#deny.find((d) => d.re.test(name));
    if (denied) return { allowed: false, reason: "denied", pattern: denied.pattern };
    if (this.#allow && !this.#allow.some((a) => a.re.test(name)))
      return { allowed: false, reason: "not_allowed" };
    return { allowed: true };
  }

  isAllowed(name: string): boolean {
    return this.evaluate(name).allowed;
  }
}

/** A policy that allows no tool at all. */
export const DENY_ALL_TOOLS = new ToolPolicy({ allow: [] });
