import { afterEach, describe, expect, it } from "vitest";
import { createEspeakTts } from "../../providers/espeak-ng/espeak-tts.js";
import { createLocalAgent } from "../../providers/local-agent/local-agent.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import type { TalkRuntime } from "../../core/session-types.js";
import type { OutputTextPayload, ToolErrorPayload } from "../../core/talk-events.js";
import { ToolDispatcher } from "../../core/tool-dispatcher.js";
import { ToolPolicy } from "../../core/tool-policy.js";
import { ToolRegistry } from "../../core/tool-registry.js";
import { CallControlRegistry } from "../../core/tools/call-control.js";
import { createEndCallTool } from "../../core/tools/call-tools.js";
import type { PipelineProviderResolver, PipelineToolDispatcher } from "./pipeline-options.js";
import { createSessionController } from "./session-controller.js";
import { EventLog, RecordingSink } from "./testing/pipeline-harness.js";

/** Real parts: the local agent, espeak-ng, core's registry, policy and dispatcher (no phone call behind the session). */
const providers: PipelineProviderResolver = {
  stt: () => undefined,
  tts: () => tts,
  agent: () => agent,
  realtime: () => undefined,
};
const tts = createEspeakTts();
const agent = createLocalAgent();

function toolsWith(policy: ToolPolicy): PipelineToolDispatcher {
  const registry = new ToolRegistry().register(createEndCallTool(new CallControlRegistry()));
  const dispatcher = new ToolDispatcher({ registry, policy });
  return {
    get definitions() {
      return registry.toRealtimeTools((name) => policy.isAllowed(name));
    },
    handleProviderCall: (s, r) => dispatcher.handleProviderCall(s, r),
    dispatch: (s, r) => dispatcher.dispatch(s, r),
    submitToolResult: (id, callId, out) => dispatcher.submitToolResult(id, callId, out),
  };
}

let runtime: TalkRuntime;
afterEach(async () => {
  await runtime?.close();
});

function start(policy: ToolPolicy) {
  runtime = createTalkRuntime();
  const session = runtime.createSession({
    mode: "stt-tts",
    transport: "managed-room",
    brain: "agent-consult",
    owner: "gateway",
  });
  const log = new EventLog(session);
  const controller = createSessionController({
    session,
    providers,
    tools: toolsWith(policy),
    sink: new RecordingSink(),
  });
  return { session, log, controller: controller as typeof controller & { sendUserText(t: string): void } };
}

const said = (log: EventLog) =>
  log.ofType("output.text.done").map((e) => (e.payload as OutputTextPayload).text);

describe("agent tool rounds (stt-tts, local agent)", () => {
  it("a goodbye calls end_call through the dispatcher; its error comes back to the agent, which apologises aloud", async () => {
    const { log, controller } = start(new ToolPolicy());
    controller.sendUserText("Goodbye!");
    while (log.ofType("output.audio.done").length < 2) await new Promise((r) => setTimeout(r, 5));
    expect(said(log)).toEqual(["Goodbye!", "Sorry, I could not hang up."]);
    expect(log.ofType("tool.call")[0]).toMatchObject({
      provider: "local-agent",
      payload: { name: "end_call" },
    });
    // No phone call behind this session: the tool's error, with its code, is what the agent heard.
    expect((log.ofType("tool.error")[0]!.payload as ToolErrorPayload).code).toBe("capability_unsupported");
    // Each round is its own output item, the farewell played to its end before the tool ran.
    const types = log.types();
    expect(types.indexOf("tool.call")).toBeGreaterThan(types.indexOf("output.audio.done"));
  });

  it("a tool the policy denies is not offered, so the agent answers in text", async () => {
    const { log, controller } = start(new ToolPolicy({ deny: ["end_call"] }));
    controller.sendUserText("goodbye");
    await log.next("output.audio.done");
    expect(said(log)).toEqual(["You said: goodbye"]);
    expect(log.ofType("tool.call")).toHaveLength(0);
  });
});
