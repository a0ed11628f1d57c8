import { TalkError } from "../../src/core/errors.js";
import type { RealtimeToolDefinition } from "../../src/core/provider-types.js";
import type { GatewayToolCall, GatewayToolDispatcher } from "../../src/gateway/gateway-deps.js";
import { SlowTool } from "./gateway-slow-providers.js";

/**
 * A test-only tool table behind the Gateway's dispatcher contract (core's
 * dispatcher is wired by the composition root): `echo` returns its
 * arguments, `slow` hangs until aborted, `shell` exists but policy denies it.
 */
export class TestToolDispatcher implements GatewayToolDispatcher {
  readonly slow = new SlowTool();
  readonly calls: GatewayToolCall[] = [];
  readonly deny = new Set(["shell"]);

  readonly definitions: RealtimeToolDefinition[] = [
    { name: "echo", description: "Returns its arguments", parameters: { type: "object" } },
    { name: "slow", description: "Never finishes on its own", parameters: { type: "object" } },
    { name: "shell", description: "Denied by policy", parameters: { type: "object" } },
  ];

  /** Tools declared to providers: policy applied. */
  allowedDefinitions(): RealtimeToolDefinition[] {
    return this.definitions.filter((d) => !this.deny.has(d.name));
  }

  async dispatch(call: GatewayToolCall): Promise<{ output: string }> {
    this.calls.push(call);
    if (this.deny.has(call.name)) throw new TalkError("tool_denied", `Tool "${call.name}" is denied by policy.`);
    call.signal.throwIfAborted();
    switch (call.name) {
      case "echo":
        return { output: call.argumentsJson };
      case "slow":
        return this.slow.run(call.signal);
      default:
        throw new TalkError("tool_not_found", `No tool "${call.name}".`);
    }
  }
}
