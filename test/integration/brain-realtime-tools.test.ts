import { afterEach, describe, expect, it } from "vitest";
import type { BrainOptions } from "../../src/voice/pipelines/brain-options.js";
import { createSessionController } from "../../src/voice/pipelines/session-controller.js";
import type { PipelineProviderResolver } from "../../src/voice/pipelines/pipeline-options.js";
import { EventLog, RecordingSink } from "../../src/voice/pipelines/testing/pipeline-harness.js";
import { createTalkRuntime } from "../../src/core/session-runtime.js";
import type { TalkRuntime } from "../../src/core/session-types.js";
import { chunkText } from "../../src/voice/speech/smart-chunker.js";
import { ToolDispatcher } from "../../src/core/tool-dispatcher.js";
import { ToolPolicy } from "../../src/core/tool-policy.js";
import { ToolRegistry } from "../../src/core/tool-registry.js";
import { createAgentConsultTool } from "../../src/voice/tools/agent-consult-tool.js";
import { CallControlRegistry, type CallControl } from "../../src/core/tools/call-control.js";
import {
  createEndCallTool,
  createSendDtmfTool,
  createTransferCallTool,
} from "../../src/core/tools/call-tools.js";
import { ConsultProgressChannel } from "../../src/core/tools/consult-progress.js";
import { resolveBrainOptions } from "../../src/voice/pipelines/brain-options.js";
import { OpenAiChatAgent } from "../../src/providers/openai-compatible/openai-chat-agent.js";
import { createOpenAiRealtimeProvider } from "../../src/providers/openai-realtime/openai-realtime-provider.js";
import { createPocketsphinxStt } from "../../src/providers/pocketsphinx/pocketsphinx-stt.js";
import { FakeChatCompletionsServer, longAnswer } from "../support/fake-chat-completions-server.js";
import { FakeOpenAiRealtimeServer, type ReceivedEvent } from "../support/fake-openai-realtime-server.js";

/**
 * Realtime sessions and the one tool layer, over real sockets: the OpenAI
 * Realtime provider against the local fake Realtime server, agent_consult
 * against the local streaming chat completions server, core's registry,
 * policy and dispatcher, and a recording CallControl (the contract a phone
 * call implements).
 */
class RecordingCall implements CallControl {
  readonly calls: string[] = [];
  /** send_dtmf waits for its signal to abort (a long-running side effect). */
  blockDtmf = false;
  readonly aborted: string[] = [];

  async hangUp(o: { afterPlayback: boolean; signal: AbortSignal }): Promise<void> {
    this.calls.push(`hangUp:${o.afterPlayback}`);
  }

  async sendDtmf(digits: string, signal: AbortSignal): Promise<void> {
    this.calls.push(`dtmf:${digits}`);
    if (!this.blockDtmf) return;
    await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
    this.aborted.push(`dtmf:${digits}`);
  }

  async transfer(destination: string): Promise<void> {
    this.calls.push(`transfer:${destination}`);
  }

  async collectDigits(request: { count?: number }): Promise<{ digits: string; reason: "count" }> {
    this.calls.push(`collect:${request.count ?? ""}`);
    return { digits: "1".repeat(request.count ?? 1), reason: "count" };
  }
}

const stt = createPocketsphinxStt();
let runtime: TalkRuntime | undefined;
let realtime: FakeOpenAiRealtimeServer | undefined;
let chat: FakeChatCompletionsServer | undefined;
afterEach(async () => {
  await runtime?.close();
  await realtime?.close();
  await chat?.close();
  runtime = realtime = chat = undefined;
});

interface SetupOptions {
  brain?: BrainOptions;
  deny?: string[];
  answer?: string;
  tokenDelayMs?: number;
  withCall?: boolean;
}

async function setup(o: SetupOptions = {}) {
  realtime = new FakeOpenAiRealtimeServer();
  const url = await realtime.start();
  chat = new FakeChatCompletionsServer({
    apiKey: "k",
    answer: o.answer ?? longAnswer(1200),
    tokenDelayMs: o.tokenDelayMs ?? 5,
  });
  const agent = new OpenAiChatAgent({ baseUrl: await chat.start(), model: "fake-model", apiKey: "k" });
  const provider = createOpenAiRealtimeProvider({
    apiKey: "sk-test-realtime",
    realtimeUrl: url,
    inputTranscriptionModel: null,
  });
  runtime = createTalkRuntime();
  const rt = runtime;
  const brain = { ...o.brain };
  const calls = new CallControlRegistry();
  const progress = new ConsultProgressChannel();
  const registry = new ToolRegistry()
    .register(
      createAgentConsultTool({
        agent: () => agent,
        session: (id) => ({ metadata: rt.getSession(id)?.metadata ?? {}, history: [] }),
        persona: "Trusted persona.",
        brain: resolveBrainOptions(brain),
        progress,
      }),
    )
    .register(createEndCallTool(calls))
    .register(createSendDtmfTool(calls))
    .register(createTransferCallTool({ calls, targets: { "front desk": "+15551230000" } }));
  const dispatcher = new ToolDispatcher({ registry, policy: new ToolPolicy({ deny: o.deny ?? [] }) });
  const session = runtime.createSession({
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    owner: "gateway",
  });
  const call = new RecordingCall();
  if (o.withCall !== false) calls.set(session.id, call);
  const log = new EventLog(session);
  const sink = new RecordingSink();
  const providers: PipelineProviderResolver = {
    // The brain reply path hears the caller with the local STT.
    stt: () => stt,
    tts: () => undefined,
    agent: () => agent,
    realtime: () => provider,
  };
  const controller = createSessionController({
    session,
    providers,
    sink,
    tools: Object.assign(dispatcher, { definitions: registry.toRealtimeTools(), progress }),
    options: { persona: "Trusted persona.", brain },
  });
  await controller.ready;
  return { realtime, chat, session, log, controller, call, sink };
}

const isOutput = (e: ReceivedEvent): boolean =>
  e.type === "conversation.item.create" &&
  (e.event.item as { type?: string }).type === "function_call_output";
const isOutOfBand = (e: ReceivedEvent): boolean =>
  e.type === "response.create" &&
  (e.event.response as { conversation?: string } | undefined)?.conversation === "none";
const outputOf = (e: ReceivedEvent): string => (e.event.item as { output: string }).output;
/** The text a progressive response.create asks the provider to say: its input message, never its instructions. */
const spokenText = (e: ReceivedEvent): string =>
  (e.event.response as { input: { content: { text: string }[] }[] }).input[0]!.content[0]!.text;

describe("brain: realtime agent_consult, progressive answers and the one tool layer", () => {
  it("progressive: chunks are spoken out of band while the consult streams, and the function output comes last", async () => {
    const answer = longAnswer(1200);
    const { realtime, chat, log } = await setup({ answer, brain: { progressive: true } });
    realtime.callTool({ name: "agent_consult", arguments: { request: "What trains are there?" } });
    await realtime.waitFor(isOutOfBand);
    // Speech started while the agent was still streaming its answer.
    expect(chat.tokensSent).toBeLessThan(chat.tokens.length);
    const outputEvent = await realtime.waitFor(isOutput);
    const at = realtime.received.indexOf(outputEvent);
    const spoken = realtime.received.filter(isOutOfBand);
    expect(spoken.length).toBeGreaterThan(1);
    expect(spoken.every((e) => realtime.received.indexOf(e) < at)).toBe(true);
    // The conversation does not grow per chunk: no items are added before the output.
    expect(realtime.received.slice(0, at).filter((e) => e.type === "conversation.item.create")).toHaveLength(
      0,
    );
    const output = JSON.parse(outputOf(outputEvent)) as {
      already_spoken_to_caller: string;
      continue_with: string;
    };
    expect(output.already_spoken_to_caller).toBe(spoken.map(spokenText).join(" "));
    expect([...spoken.map(spokenText), output.continue_with].join(" ")).toBe(
      chunkText(answer, { speakable: true }).join(" "),
    );
    // Each response waited for the one before it: the server never refused one as overlapping.
    expect(log.ofType("session.error")).toHaveLength(0);
    expect(log.ofType("tool.result")).toHaveLength(1);
    // Each spoken chunk was a tool.progress of the consult's call, in order, under the call's response.
    const call = log.ofType("tool.call")[0]!;
    const progress = log.ofType("tool.progress");
    expect(progress.every((e) => e.callId === call.callId && e.parentId === call.parentId)).toBe(true);
    expect(call.parentId).toMatch(/^resp/);
    const chunks = progress.filter((e) => (e.payload as { kind: string }).kind === "chunk");
    expect(chunks.map((e) => (e.payload as { message: string }).message).slice(0, spoken.length)).toEqual(
      spoken.map(spokenText),
    );
  });

  it("without progressive the whole answer is one atomic function output", async () => {
    const answer = "The train leaves at nine. The bus leaves at ten.";
    const { realtime } = await setup({ answer });
    realtime.callTool({ name: "agent_consult", arguments: { request: "When?" } });
    const out = await realtime.waitFor(isOutput);
    expect(outputOf(out)).toBe(answer);
    expect(realtime.received.filter(isOutOfBand)).toHaveLength(0);
  });

  it("caller speech during a progressive answer aborts the consult and no queued chunk is spoken afterwards", async () => {
    const { realtime, chat, log } = await setup({
      answer: longAnswer(2000),
      tokenDelayMs: 10,
      brain: { progressive: true },
    });
    realtime.callTool({ name: "agent_consult", arguments: { request: "Tell me everything." } });
    await realtime.waitFor(isOutOfBand);
    const disconnected = chat.nextDisconnect();
    realtime.triggerSpeechStarted();
    await disconnected;
    const spokenAtBargeIn = realtime.received.filter(isOutOfBand).length;
    await log.next("tool.cancelled");
    expect(chat.completedStreams).toBe(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(realtime.received.filter(isOutOfBand)).toHaveLength(spokenAtBargeIn);
    expect(realtime.received.filter(isOutput)).toHaveLength(0);
    expect(log.ofType("tool.cancelled")[0]!.payload).toMatchObject({ name: "agent_consult", started: true });
  });

  it("a denied tool never runs: the provider gets a clear tool error and tool.error is emitted", async () => {
    const { realtime, log, call } = await setup({ deny: ["transfer_call"] });
    realtime.callTool({ name: "transfer_call", arguments: { target: "front desk" } });
    const out = JSON.parse(outputOf(await realtime.waitFor(isOutput))) as { error: string; message: string };
    expect(out.error).toBe("tool_denied");
    expect(out.message).toContain("transfer_call");
    expect(call.calls).toEqual([]);
    expect(log.ofType("tool.error")[0]!.payload).toMatchObject({
      name: "transfer_call",
      code: "tool_denied",
    });
  });

  it("transfer_call goes only to a configured destination, by name", async () => {
    const { realtime, call } = await setup();
    realtime.callTool({ name: "transfer_call", arguments: { target: "+15559999999" } });
    const refused = JSON.parse(outputOf(await realtime.waitFor(isOutput))) as { error: string };
    expect(refused.error).toBe("invalid_params");
    realtime.callTool({ name: "transfer_call", arguments: { target: "front desk" } });
    await realtime.waitFor((e) => isOutput(e) && outputOf(e).includes("transferredTo"));
    expect(call.calls).toEqual(["transfer:+15551230000"]);
  });

  it("a queued side-effecting tool never starts after its turn is cancelled; the running one gets the abort", async () => {
    const { realtime, log, call, controller, session } = await setup();
    call.blockDtmf = true;
    realtime.callTool({ name: "send_dtmf", arguments: { digits: "1" } });
    realtime.callTool({ name: "send_dtmf", arguments: { digits: "2" } });
    while (log.ofType("tool.call").length < 2 || call.calls.length < 1)
      await new Promise((r) => setTimeout(r, 5));
    const turnId = log.ofType("tool.call")[0]!.turnId!;
    expect(controller.cancelTurn(turnId, "client_request")).toBe(true);
    while (log.ofType("tool.cancelled").length < 2) await new Promise((r) => setTimeout(r, 5));
    expect(call.calls).toEqual(["dtmf:1"]);
    expect(call.aborted).toEqual(["dtmf:1"]);
    const cancelled = log.ofType("tool.cancelled").map((e) => e.payload as { started: boolean });
    expect(cancelled.map((c) => c.started).sort()).toEqual([false, true]);
    expect(session.state).toBe("active");
  });

  it("call tools in a session without a call give a clear tool error", async () => {
    const { realtime, log } = await setup({ withCall: false });
    realtime.callTool({ name: "end_call", arguments: {} });
    const out = JSON.parse(outputOf(await realtime.waitFor(isOutput))) as { error: string; message: string };
    expect(out.error).toBe("capability_unsupported");
    expect(out.message).toContain("not a phone call");
    expect(log.ofType("tool.error")).toHaveLength(1);
  });

  it("brain reply path: the provider is offered no tools, answers nothing by itself, and its tool calls are ignored", async () => {
    const { realtime, log, call } = await setup({ brain: { replyPath: "brain" } });
    const update = realtime.received.find((e) => e.type === "session.update")!;
    const configured = update.event.session as {
      tools?: unknown[];
      audio: { input: { turn_detection: unknown } };
    };
    expect(configured.tools ?? []).toEqual([]);
    expect(configured.audio.input.turn_detection).toBeNull();
    realtime.callTool({ name: "end_call", arguments: {} });
    // Events arrive in order on one socket: once this later response is heard, the call was seen and ignored.
    realtime.respond();
    await log.next("output.audio.started");
    expect(log.ofType("tool.call")).toHaveLength(0);
    expect(realtime.received.filter(isOutput)).toHaveLength(0);
    expect(call.calls).toEqual([]);
  });

  it("native reply path: the provider is offered the canonical tools, sanitized", async () => {
    const { realtime } = await setup();
    const update = realtime.received.find((e) => e.type === "session.update")!;
    const tools = (update.event.session as { tools: { name: string }[] }).tools;
    expect(tools.map((t) => t.name).sort()).toEqual([
      "agent_consult",
      "end_call",
      "send_dtmf",
      "transfer_call",
    ]);
  });
});
