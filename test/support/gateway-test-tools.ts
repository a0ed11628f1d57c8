import type { ToolDefinition } from "../../src/core/tool-registry.js";
import { SlowTool } from "./gateway-slow-providers.js";

/**
 * A small test tool table for createApp's real registry, policy and
 * dispatcher: `echo` returns its arguments, `slow` hangs until its
 * AbortSignal fires, `shell` is registered but denied by policy. `policy` is
 * the `agent.tools` config that exposes exactly these (no built-in tools).
 */
export function createTestTools(): {
  definitions: ToolDefinition[];
  policy: { allow: string[]; deny: string[] };
  slow: SlowTool;
} {
  const slow = new SlowTool();
  const definitions: ToolDefinition[] = [
    {
      name: "echo",
      description: "Returns its arguments",
      parameters: { type: "object" },
      sideEffects: false,
      handler: async (args) => JSON.stringify(args),
    },
    {
      name: "slow",
      description: "Never finishes on its own",
      parameters: { type: "object" },
      sideEffects: true,
      handler: (_args, ctx) => slow.run(ctx.signal),
    },
    {
      name: "shell",
      description: "Denied by policy",
      parameters: { type: "object" },
      sideEffects: true,
      handler: async () => "never",
    },
  ];
  return { definitions, policy: { allow: definitions.map((t) => t.name), deny: ["shell"] }, slow };
}
