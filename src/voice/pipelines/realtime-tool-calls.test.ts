import { afterEach, describe, expect, it } from "vitest";
import { TalkError } from "../../core/errors.js";
import type {
  RealtimeProviderEvent,
  RealtimeSessionOptions,
  RealtimeVoiceSession,
} from "../../core/provider-types.js";
import type { TalkRuntime } from "../../core/session-types.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import { PCM16_24K } from "../../core/talk-types.js";
import { ToolDispatcher } from "../../core/tool-dispatcher.js";
import { ToolPolicy } from "../../core/tool-policy.js";
import { ToolRegistry } from "../../core/tool-registry.js";
import { createSessionController } from "./session-controller.js";
import { EventLog, RecordingSink } from "./testing/pipeline-harness.js";
import { ScriptedRealtimeProvider } from "./testing/scripted-realtime-provider.js";

/** A provider session that can no longer take a tool result (its socket went away under the call). */
class ClosedUnderCallProvider extends ScriptedRealtimeProvider {
  override async connect(
    options: RealtimeSessionOptions,
    onEvent: (e: RealtimeProviderEvent) => void,
  ): Promise<RealtimeVoiceSession> {
    const voice = await super.connect(options, onEvent);
    return {
      ...voice,
      submitToolResult: () => {
        throw new TalkError("invalid_state", "The realtime session is closed.");
      },
    };
  }
}

let runtime: TalkRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

describe("realtime tool calls", () => {
  it("a provider session that refuses the result does not become an unhandled rejection", async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => void rejections.push(reason);
    process.on("unhandledRejection", onRejection);
    try {
      runtime = createTalkRuntime();
      const session = runtime.createSession({
        mode: "realtime",
        transport: "gateway-relay",
        brain: "agent-consult",
        owner: "gateway",
      });
      const registry = new ToolRegistry().register({
        name: "lookup",
        description: "Looks up",
        parameters: { type: "object" },
        sideEffects: false,
        handler: async () => "found",
      });
      const tools = Object.assign(new ToolDispatcher({ registry, policy: new ToolPolicy() }), {
        definitions: registry.toRealtimeTools(),
      });
      const provider = new ClosedUnderCallProvider([PCM16_24K]);
      const log = new EventLog(session);
      const controller = createSessionController({
        session,
        providers: {
          stt: () => undefined,
          tts: () => undefined,
          agent: () => undefined,
          realtime: () => provider,
        },
        sink: new RecordingSink(),
        tools,
        outputFormat: PCM16_24K,
      });
      await controller.ready;
      provider.play({ type: "response_started", responseId: "r1" });
      provider.play({
        type: "tool_call",
        responseId: "r1",
        itemId: "fc_1",
        callId: "c1",
        name: "lookup",
        argumentsJson: "{}",
      });
      while (log.ofType("tool.result").length === 0) await new Promise((r) => setTimeout(r, 1));
      // Let the result's hand-off to the provider (and any rejection of it) settle.
      await new Promise((r) => setTimeout(r, 20));
      expect(rejections).toEqual([]);
      expect(session.state).toBe("active");
    } finally {
      process.off("unhandledRejection", onRejection);
    }
  });
});
