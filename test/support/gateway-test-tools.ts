import { ToolDispatcher } from "../../src/core/tool-dispatcher.js";
import { ToolPolicy } from "../../src/core/tool-policy.js";
import { ToolRegistry } from "../../src/core/tool-registry.js";
import { SlowTool } from "./gateway-slow-providers.js";

/**
 * Core's real tool dispatcher over a small test tool table: `echo` returns
 * its arguments, `slow` hangs until its AbortSignal fires, `shell` is
 * registered but denied by policy.
 */
export function createTestTools(): {
  dispatcher: ToolDispatcher;
  registry: ToolRegistry;
  policy: ToolPolicy;
  slow: SlowTool;
} {
  const slow = new SlowTool();
  const registry = new ToolRegistry()
    .register({
      name: "echo",
      description: "Returns its arguments",
      parameters: { type: "object" },
      sideEffects: false,
      handler: async (args) => JSON.stringify(args),
    })
    .register({
      name: "slow",
      description: "Never finishes on its own",
      parameters: { type: "object" },
      sideEffects: true,
      handler: (_args, ctx) => slow.run(ctx.signal),
    })
    .register({
      name: "shell",
      description: "Denied by policy",
      parameters: { type: "object" },
      sideEffects: true,
      handler: async () => "never",
    });
  const policy = new ToolPolicy({ deny: ["shell"] });
  return { dispatcher: new ToolDispatcher({ registry, policy }), registry, policy, slow };
}
