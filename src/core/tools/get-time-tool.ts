import type { ToolDefinition } from "../tool-registry.js";

export interface GetTimeToolOptions {
  /** IANA time zone the answer is given in. Default: the process's zone. */
  timeZone?: string;
  /** Clock, for tests. Default Date.now. */
  now?: () => number;
}

/** `get_time`: the current date and time, side-effect free. */
export function createGetTimeTool(options: GetTimeToolOptions = {}): ToolDefinition {
  const timeZone = options.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  // Fails at registration, not on the first call, when the zone is not a real one.
  new Intl.DateTimeFormat("en-US", { timeZone });
  const now = options.now ?? Date.now;
  return {
    name: "get_time",
    description: "Returns the current date and time.",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    sideEffects: false,
    handler: async () => {
      const at = new Date(now());
      const local = new Intl.DateTimeFormat("en-US", {
        timeZone,
        dateStyle: "full",
        timeStyle: "long",
      }).format(at);
      return JSON.stringify({ iso: at.toISOString(), timeZone, local });
    },
  };
}
