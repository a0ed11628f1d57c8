import { afterEach, describe, expect, it } from "vitest";
import { createEspeakTts } from "../../providers/espeak-ng/espeak-tts.js";
import { createLocalAgent } from "../../providers/local-agent/local-agent.js";
import type { AgentProvider } from "../../core/provider-types.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import type { TalkRuntime } from "../../core/session-types.js";
import type { OutputTextPayload } from "../../core/talk-events.js";
import type { TalkBrain } from "../../core/talk-types.js";
import { ToolDispatcher } from "../../core/tool-dispatcher.js";
import { ToolPolicy } from "../../core/tool-policy.js";
import { ToolRegistry } from "../../core/tool-registry.js";
import { createGetTimeTool } from "../../core/tools/get-time-tool.js";
import { hasDirectTools, spokenText } from "./direct-tools-turns.js";
import type { PipelineProviderResolver, PipelineToolDispatcher } from "./pipeline-options.js";
import { createSessionController } from "./session-controller.js";
import { EventLog, RecordingSink } from "./testing/pipeline-harness.js";

/** Real parts: espeak-ng, the local agent (counted), core's registry, policy and dispatcher. */
const tts = createEspeakTts();
const localAgent = createLocalAgent();
let consults = 0;
const agent: AgentProvider = {
  kind: localAgent.kind,
  id: localAgent.id,
  label: localAgent.label,
  capabilities: localAgent.capabilities,
  health: () => localAgent.health(),
  consult: (request) => {
    consults += 1;
    return localAgent.consult(request);
  },
};
const providers: PipelineProviderResolver = {
  stt: () => undefined,
  tts: () => tts,
  agent: () => agent,
  realtime: () => undefined,
};

const AT = Date.UTC(2026, 10, 24, 15, 30);

function tools(): PipelineToolDispatcher {
  const registry = new ToolRegistry().register(createGetTimeTool({ timeZone: "UTC", now: () => AT }));
  const dispatcher = new ToolDispatcher({ registry, policy: new ToolPolicy({ allow: ["get_time"] }) });
  return {
    handleProviderCall: (s, r) => dispatcher.handleProviderCall(s, r),
    dispatch: (s, r) => dispatcher.dispatch(s, r),
    submitToolResult: (id, callId, out) => dispatcher.submitToolResult(id, callId, out),
  };
}

let runtime: TalkRuntime;
afterEach(async () => {
  await runtime?.close();
  consults = 0;
});

function start(brain: TalkBrain, withTools = true) {
  runtime = createTalkRuntime();
  const session = runtime.createSession({
    mode: "stt-tts",
    transport: "managed-room",
    brain,
    owner: "gateway",
  });
  const log = new EventLog(session);
  const sink = new RecordingSink();
  const controller = createSessionController({
    session,
    providers,
    sink,
    ...(withTools ? { tools: tools() } : {}),
  });
  if (!hasDirectTools(controller)) throw new Error("stt-tts controllers take direct tool calls");
  return {
    session,
    log,
    sink,
    controller: controller as typeof controller & { sendUserText(t: string): void },
  };
}

describe("spokenText", () => {
  it("says a JSON result by its values, a JSON string as itself, and plain text as it is", () => {
    expect(spokenText('{"text":"hello"}')).toBe("hello");
    expect(spokenText('{"a":"one","b":{"c":2,"d":[true,"three"]},"e":null,"f":" "}')).toBe(
      "one. 2. true. three",
    );
    expect(spokenText('"Ready."')).toBe("Ready.");
    expect(spokenText("  It is noon.  ")).toBe("It is noon.");
    expect(spokenText("{}")).toBe("");
  });
});

describe("direct-tools turns (stt-tts, espeak-ng)", () => {
  it("a text turn gets its transcript and no agent; the surface's calls answer it aloud, in order", async () => {
    const { session, log, sink, controller } = start("direct-tools");
    controller.sendUserText("what time is it");
    const transcript = await log.next("transcript.done");
    const turnId = transcript.turnId!;
    const first = await controller.callTool({ name: "get_time", argumentsJson: "{}", turnId });
    const second = await controller.callTool({ name: "get_time", argumentsJson: "", turnId });
    expect(first.turnId).toBe(turnId);
    expect(second.callId).not.toBe(first.callId);
    while (log.ofType("output.audio.done").length < 2) await new Promise((r) => setTimeout(r, 5));
    const said = log.ofType("output.text.done").map((e) => (e.payload as OutputTextPayload).text);
    expect(said).toEqual([spokenText(first.output), spokenText(second.output)]);
    expect(said[0]).toContain("November 24, 2026");
    // Each item's audio is the TTS job of its call.
    const started = log.ofType("output.audio.started");
    expect(started.map((e) => e.parentId)).toEqual([first.callId, second.callId]);
    expect(sink.bytes).toBeGreaterThan(0);
    expect(consults).toBe(0);
    expect(session.state).toBe("active");
  });

  it("the same text turn in an agent-consult session is answered by the agent, and callTool is refused", async () => {
    const { log, controller } = start("agent-consult");
    controller.sendUserText("hello");
    await log.next("output.audio.done");
    expect(consults).toBe(1);
    await expect(controller.callTool({ name: "get_time", argumentsJson: "{}" })).rejects.toMatchObject({
      code: "invalid_state",
    });
  });

  it("a session without tools answers a call tool_not_found without opening a turn", async () => {
    const { session, controller } = start("direct-tools", false);
    await expect(controller.callTool({ name: "get_time", argumentsJson: "{}" })).rejects.toMatchObject({
      code: "tool_not_found",
    });
    expect(session.activeTurn).toBeUndefined();
  });
});
