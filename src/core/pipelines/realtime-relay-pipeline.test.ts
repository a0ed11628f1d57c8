import { afterEach, describe, expect, it } from "vitest";
import type {
  ProviderCapabilities,
  RealtimeProvider,
  RealtimeProviderEvent,
  RealtimeSessionOptions,
  RealtimeVoiceSession,
} from "../provider-types.js";
import type { TalkRuntime } from "../session-types.js";
import { createTalkRuntime } from "../session-runtime.js";
import { PCM16_16K, PCM16_24K, ULAW_8K } from "../talk-types.js";
import type { PipelineProviderResolver } from "./pipeline-options.js";
import { createSessionController } from "./session-controller.js";
import { EventLog, RecordingSink } from "./testing/pipeline-harness.js";
import { ToolDispatcher } from "../tool-dispatcher.js";
import { ToolPolicy } from "../tool-policy.js";
import { ToolRegistry } from "../tool-registry.js";

/** Core's one tool dispatch path, with `lookup` registered when a handler is given. */
function toolsWith(handler?: (args: Record<string, unknown>) => Promise<string>, policy = new ToolPolicy()) {
  const registry = new ToolRegistry();
  if (handler)
    registry.register({
      name: "lookup",
      description: "Looks up",
      parameters: { type: "object" },
      sideEffects: false,
      handler,
    });
  const dispatcher = new ToolDispatcher({ registry, policy });
  return Object.assign(dispatcher, { definitions: registry.toRealtimeTools() });
}

/**
 * An in-process provider implementing the RealtimeProvider contract (the
 * OpenAI Realtime `connect` arrives with the telephony issue). It records what
 * the pipeline asks of it and lets the test play provider events.
 */
class ScriptedRealtimeProvider implements RealtimeProvider {
  readonly kind = "realtime" as const;
  readonly id = "scripted";
  readonly label = "Scripted realtime provider";
  readonly capabilities: ProviderCapabilities = {
    modes: ["realtime"],
    transports: ["gateway-relay"],
    gatewayRelay: true,
    inputFormats: [PCM16_24K],
  };
  readonly calls: string[] = [];
  readonly audio: Uint8Array[] = [];
  readonly toolResults: [string, string][] = [];
  options: RealtimeSessionOptions | undefined;
  #emit: ((e: RealtimeProviderEvent) => void) | undefined;

  async health() {
    return { ok: true };
  }

  async connect(
    options: RealtimeSessionOptions,
    onEvent: (e: RealtimeProviderEvent) => void,
  ): Promise<RealtimeVoiceSession> {
    this.options = options;
    this.#emit = onEvent;
    const calls = this.calls;
    return {
      appendAudio: (data) => void this.audio.push(data),
      commitAudio: () => void calls.push("commit"),
      cancelResponse: () => void calls.push("cancelResponse"),
      truncate: (itemId, ms) => void calls.push(`truncate:${itemId}:${ms}`),
      submitToolResult: (callId, output) => void this.toolResults.push([callId, output]),
      createResponse: () => void calls.push("createResponse"),
      close: async () => void calls.push("close"),
    };
  }

  play(event: RealtimeProviderEvent): void {
    this.#emit!(event);
  }
}

/** 100 ms of a 24 kHz tone as PCM16 bytes. */
function tone24k(): Uint8Array {
  const pcm = new Int16Array(2400);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24_000));
  return new Uint8Array(pcm.buffer);
}

let runtime: TalkRuntime;
afterEach(async () => {
  await runtime?.close();
});

async function setup(tools = toolsWith()) {
  runtime = createTalkRuntime();
  const session = runtime.createSession({
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    owner: "gateway",
  });
  const provider = new ScriptedRealtimeProvider();
  const providers: PipelineProviderResolver = {
    stt: () => undefined,
    tts: () => undefined,
    agent: () => undefined,
    realtime: () => provider,
  };
  const sink = new RecordingSink();
  const log = new EventLog(session);
  const controller = createSessionController({
    session,
    providers,
    sink,
    tools,
    inputFormat: PCM16_16K,
    outputFormat: PCM16_24K,
    options: { persona: "Trusted persona from config." },
  });
  await controller.ready;
  return { session, provider, sink, log, controller };
}

describe("realtime relay pipeline", () => {
  it("connects with trusted instructions and forwards input audio converted to the provider's format", async () => {
    const { provider, controller } = await setup();
    expect(provider.options).toMatchObject({
      instructions: "Trusted persona from config.",
      inputFormat: PCM16_24K,
      outputFormat: PCM16_24K,
    });
    controller.appendAudio(new Uint8Array(3200)); // 100 ms at 16 kHz
    const forwarded = provider.audio.reduce((n, a) => n + a.byteLength, 0);
    // 16 kHz -> 24 kHz: 1.5x the bytes, minus what the resampler still holds.
    expect(forwarded).toBeGreaterThan(3200);
    expect(forwarded).toBeLessThanOrEqual(4800);
  });

  it("maps speech, audio and the end of a response onto a turn, with audio only in the sink", async () => {
    const { session, provider, sink, log } = await setup();
    provider.play({ type: "speech_started", audioStartMs: 120, itemId: "in_1" });
    const turn = session.activeTurn!;
    expect(log.ofType("input.audio.speech_started")[0]).toMatchObject({
      turnId: turn.id,
      payload: { audioStartMs: 120 },
    });
    provider.play({ type: "speech_stopped", audioEndMs: 900, itemId: "in_1" });
    expect(log.ofType("turn.ended")[0]?.turnId).toBe(turn.id);
    provider.play({ type: "transcript_done", itemId: "in_1", text: "hello", role: "user" });
    provider.play({ type: "response_started", responseId: "r1" });
    provider.play({
      type: "audio_delta",
      responseId: "r1",
      itemId: "out_1",
      data: tone24k(),
      format: PCM16_24K,
    });
    provider.play({
      type: "audio_delta",
      responseId: "r1",
      itemId: "out_1",
      data: tone24k(),
      format: PCM16_24K,
    });
    provider.play({ type: "audio_done", responseId: "r1", itemId: "out_1" });
    provider.play({ type: "response_done", responseId: "r1", status: "completed" });

    expect(sink.bytes).toBe(9600);
    expect(log.ofType("transcript.done")[0]).toMatchObject({
      turnId: turn.id,
      payload: { role: "user", text: "hello" },
    });
    expect(log.ofType("output.audio.started")).toHaveLength(1);
    expect(log.ofType("output.audio.delta").map((e) => e.payload)).toEqual([
      { format: { ...PCM16_24K }, bytes: 4800, durationMs: 100 },
      { format: { ...PCM16_24K }, bytes: 4800, durationMs: 100 },
    ]);
    expect(log.ofType("output.audio.done")[0]).toMatchObject({ itemId: "out_1", payload: { bytes: 9600 } });
    expect(session.activeOutput).toBeUndefined();
  });

  it("barge-in on provider speech cancels output, the provider response and the sink, and drops late audio", async () => {
    const { session, provider, sink, log } = await setup();
    provider.play({ type: "response_started", responseId: "r1" });
    provider.play({
      type: "audio_delta",
      responseId: "r1",
      itemId: "out_1",
      data: tone24k(),
      format: PCM16_24K,
    });
    const answering = session.activeTurn!;
    provider.play({ type: "speech_started", itemId: "in_2" });
    provider.play({
      type: "audio_delta",
      responseId: "r1",
      itemId: "out_1",
      data: tone24k(),
      format: PCM16_24K,
    });

    expect(log.ofType("output.audio.cancelled")).toHaveLength(1);
    expect(log.ofType("output.audio.cancelled")[0]).toMatchObject({
      itemId: "out_1",
      payload: { reason: "barge_in" },
    });
    expect(provider.calls).toContain("cancelResponse");
    expect(sink.entries.at(-1)).toMatchObject({ kind: "clear", itemId: "out_1", reason: "barge_in" });
    expect(sink.bytes).toBe(4800);
    expect(log.ofType("output.audio.delta")).toHaveLength(1);
    // The interrupted answer gave way to a new user turn; output.audio.cancelled was its one terminal event.
    expect(session.activeTurn?.id).not.toBe(answering.id);
    expect(log.ofType("turn.started").at(-1)?.turnId).toBe(session.activeTurn?.id);
    expect(log.ofType("turn.cancelled")).toHaveLength(0);
  });

  it("speech does not interrupt when interruptOnSpeech is off", async () => {
    runtime = createTalkRuntime();
    const session = runtime.createSession({
      mode: "realtime",
      transport: "gateway-relay",
      brain: "agent-consult",
      owner: "gateway",
    });
    const provider = new ScriptedRealtimeProvider();
    const sink = new RecordingSink();
    const log = new EventLog(session);
    const controller = createSessionController({
      session,
      sink,
      providers: {
        stt: () => undefined,
        tts: () => undefined,
        agent: () => undefined,
        realtime: () => provider,
      },
      options: { interruptOnSpeech: false },
    });
    await controller.ready;
    provider.play({ type: "response_started", responseId: "r1" });
    provider.play({
      type: "audio_delta",
      responseId: "r1",
      itemId: "out_1",
      data: tone24k(),
      format: PCM16_24K,
    });
    provider.play({ type: "speech_started" });
    provider.play({
      type: "audio_delta",
      responseId: "r1",
      itemId: "out_1",
      data: tone24k(),
      format: PCM16_24K,
    });
    expect(log.ofType("output.audio.cancelled")).toHaveLength(0);
    expect(provider.calls).not.toContain("cancelResponse");
    expect(sink.bytes).toBe(9600);
  });

  it("a tool the server does not run is completed by submitToolResult through the one dispatch path", async () => {
    const { session, provider, log, controller } = await setup();
    provider.play({ type: "speech_started" });
    provider.play({
      type: "tool_call",
      responseId: "r1",
      itemId: "fc_1",
      callId: "call_1",
      name: "lookup",
      argumentsJson: '{"id":"7"}',
    });
    const call = log.ofType("tool.call")[0]!;
    expect(call).toMatchObject({
      callId: "call_1",
      turnId: session.activeTurn!.id,
      payload: { name: "lookup", argumentsJson: '{"id":"7"}' },
    });
    controller.submitToolResult("call_1", '{"status":"shipped"}');
    await log.next("tool.result");
    await new Promise((r) => setImmediate(r));
    expect(provider.toolResults).toEqual([["call_1", '{"status":"shipped"}']]);
    expect(log.ofType("tool.call")).toHaveLength(1);
    expect(log.ofType("tool.result")).toHaveLength(1);
    expect(() => controller.submitToolResult("call_1", "{}")).toThrowError(
      expect.objectContaining({ code: "tool_not_found" }),
    );
  });

  it("a registered tool runs on the server under the turn's signal and its output goes to the provider", async () => {
    const seen: string[] = [];
    const { provider, log } = await setup(
      toolsWith(async (args) => {
        seen.push(JSON.stringify(args));
        return '{"ok":true}';
      }),
    );
    expect(provider.options?.tools.map((t) => t.name)).toEqual(["lookup"]);
    provider.play({ type: "speech_started" });
    provider.play({
      type: "tool_call",
      responseId: "r1",
      itemId: "fc_1",
      callId: "call_9",
      name: "lookup",
      argumentsJson: "{}",
    });
    await log.next("tool.result");
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(["{}"]);
    expect(provider.toolResults).toEqual([["call_9", '{"ok":true}']]);
    expect(log.ofType("tool.call")).toHaveLength(1);
  });

  it("a tool denied by policy never runs and the provider is told why", async () => {
    let ran = false;
    const { provider, log } = await setup(
      toolsWith(
        async () => {
          ran = true;
          return "{}";
        },
        new ToolPolicy({ deny: ["lookup"] }),
      ),
    );
    provider.play({ type: "speech_started" });
    provider.play({
      type: "tool_call",
      responseId: "r1",
      itemId: "fc_1",
      callId: "call_d",
      name: "lookup",
      argumentsJson: "{}",
    });
    await log.next("tool.error");
    await new Promise((r) => setImmediate(r));
    expect(ran).toBe(false);
    expect(provider.toolResults).toHaveLength(1);
    expect(JSON.parse(provider.toolResults[0]![1])).toMatchObject({ error: "tool_denied" });
  });

  it("cancelTurn cancels the provider response and clears the sink; close closes the provider session once", async () => {
    const { session, provider, sink, log, controller } = await setup();
    provider.play({ type: "response_started", responseId: "r1" });
    provider.play({
      type: "audio_delta",
      responseId: "r1",
      itemId: "out_1",
      data: tone24k(),
      format: PCM16_24K,
    });
    expect(controller.cancelTurn(undefined, "client_request")).toBe(true);
    expect(provider.calls).toContain("cancelResponse");
    expect(sink.entries.at(-1)).toMatchObject({ kind: "clear", reason: "client_request" });
    expect(log.ofType("turn.cancelled")).toHaveLength(1);
    await Promise.all([controller.close("client_request"), controller.close("client_request")]);
    expect(provider.calls.filter((c) => c === "close")).toHaveLength(1);
    expect(log.ofType("session.closed")).toHaveLength(1);
    expect(session.state).toBe("closed");
  });

  it("a provider without connect is refused at creation", () => {
    runtime = createTalkRuntime();
    const session = runtime.createSession({
      mode: "realtime",
      transport: "gateway-relay",
      brain: "agent-consult",
      owner: "gateway",
    });
    const clientOnly: RealtimeProvider = {
      kind: "realtime",
      id: "c",
      label: "c",
      capabilities: {},
      health: async () => ({ ok: true }),
    };
    expect(() =>
      createSessionController({
        session,
        providers: {
          stt: () => undefined,
          tts: () => undefined,
          agent: () => undefined,
          realtime: () => clientOnly,
        },
      }),
    ).toThrowError(expect.objectContaining({ code: "capability_unsupported" }));
  });

  it("passes g711 u-law through both ways untouched when the provider declares it", async () => {
    runtime = createTalkRuntime();
    const session = runtime.createSession({
      mode: "realtime",
      transport: "gateway-relay",
      brain: "agent-consult",
      owner: "gateway",
    });
    const provider = new ScriptedRealtimeProvider();
    (provider as { capabilities: ProviderCapabilities }).capabilities = {
      ...provider.capabilities,
      inputFormats: [PCM16_24K, ULAW_8K],
      outputFormats: [PCM16_24K, ULAW_8K],
    };
    const sink = new RecordingSink();
    const providers: PipelineProviderResolver = {
      stt: () => undefined,
      tts: () => undefined,
      agent: () => undefined,
      realtime: () => provider,
    };
    const controller = createSessionController({
      session,
      providers,
      sink,
      inputFormat: ULAW_8K,
      outputFormat: ULAW_8K,
    });
    await controller.ready;
    expect(provider.options).toMatchObject({ inputFormat: ULAW_8K, outputFormat: ULAW_8K });
    const frame = new Uint8Array(160).map((_, i) => i); // 20 ms, odd-sized frames are fine for 1-byte samples
    controller.appendAudio(frame.subarray(0, 159));
    expect(Array.from(provider.audio[0]!)).toEqual(Array.from(frame.subarray(0, 159)));
    provider.play({ type: "speech_started", itemId: "in_1" });
    provider.play({ type: "speech_stopped", itemId: "in_1" });
    provider.play({ type: "response_started", responseId: "r1" });
    const reply = new Uint8Array(800).fill(0x55);
    provider.play({ type: "audio_delta", responseId: "r1", itemId: "out_1", data: reply, format: ULAW_8K });
    expect(sink.writes[0]!.chunk).toEqual({ data: reply, format: ULAW_8K });
  });

  it("refuses u-law with a provider that does not declare it, rather than transcoding silently", async () => {
    runtime = createTalkRuntime();
    const session = runtime.createSession({
      mode: "realtime",
      transport: "gateway-relay",
      brain: "agent-consult",
      owner: "gateway",
    });
    const provider = new ScriptedRealtimeProvider();
    const providers: PipelineProviderResolver = {
      stt: () => undefined,
      tts: () => undefined,
      agent: () => undefined,
      realtime: () => provider,
    };
    expect(() =>
      createSessionController({ session, providers, inputFormat: ULAW_8K, outputFormat: ULAW_8K }),
    ).toThrowError(expect.objectContaining({ code: "capability_unsupported" }));
  });
});
