import { afterEach, describe, expect, it } from "vitest";
import type { RealtimeProvider, RealtimeProviderEvent } from "../../core/provider-types.js";
import type { TalkRuntime, TalkSession } from "../../core/session-types.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import { type AudioFormat, PCM16_16K, PCM16_24K, ULAW_8K } from "../../core/talk-types.js";
import type { PipelineOptions, PipelineProviderResolver, SpeechOverOutput } from "./pipeline-options.js";
import { createSessionController } from "./session-controller.js";
import { EventLog, RecordingSink } from "./testing/pipeline-harness.js";
import { ScriptedRealtimeProvider } from "./testing/scripted-realtime-provider.js";
import { ToolDispatcher } from "../../core/tool-dispatcher.js";
import { ToolPolicy } from "../../core/tool-policy.js";
import { ToolRegistry } from "../../core/tool-registry.js";

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

/** 100 ms of a 24 kHz tone as PCM16 bytes. */
function tone24k(): Uint8Array {
  const pcm = new Int16Array(2400);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24_000));
  return new Uint8Array(pcm.buffer);
}

/** The provider's 100 ms of answer audio for item out_1 of response r1. */
function toneDelta(): RealtimeProviderEvent {
  return { type: "audio_delta", responseId: "r1", itemId: "out_1", data: tone24k(), format: PCM16_24K };
}

/** The provider asks for the `lookup` tool in response r1. */
function lookupCall(callId: string, argumentsJson = "{}"): RealtimeProviderEvent {
  return { type: "tool_call", responseId: "r1", itemId: "fc_1", callId, name: "lookup", argumentsJson };
}

let runtime: TalkRuntime;
afterEach(async () => {
  await runtime?.close();
});

/** A fresh runtime (closed after the test) with one realtime relay session. */
function relaySession(): TalkSession {
  runtime = createTalkRuntime();
  return runtime.createSession({
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    owner: "gateway",
  });
}

/** Providers with only a realtime one. */
function realtimeOnly(provider: RealtimeProvider): PipelineProviderResolver {
  return { stt: () => undefined, tts: () => undefined, agent: () => undefined, realtime: () => provider };
}

interface SetupOptions {
  tools?: ReturnType<typeof toolsWith>;
  /** What the scripted provider declares it takes and gives (default PCM16 24 kHz). */
  providerFormats?: AudioFormat[];
  inputFormat?: AudioFormat;
  outputFormat?: AudioFormat;
  options?: PipelineOptions;
  /** The media leg's answer to speech over an answer (SessionControllerDeps.speechOverOutput). */
  speechOverOutput?: SpeechOverOutput;
  turns?: "pipeline" | "leg";
}

/** A relay session on a scripted provider, its controller ready. */
async function setup(o: SetupOptions = {}) {
  const session = relaySession();
  const provider = new ScriptedRealtimeProvider(o.providerFormats ?? [PCM16_24K]);
  const sink = new RecordingSink();
  const log = new EventLog(session);
  const controller = createSessionController({
    session,
    providers: realtimeOnly(provider),
    sink,
    tools: o.tools ?? toolsWith(),
    inputFormat: o.inputFormat ?? PCM16_16K,
    outputFormat: o.outputFormat ?? PCM16_24K,
    options: o.options ?? { persona: "Trusted persona from config." },
    ...(o.speechOverOutput ? { speechOverOutput: o.speechOverOutput } : {}),
    ...(o.turns ? { turns: o.turns } : {}),
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
    provider.play(toneDelta());
    provider.play(toneDelta());
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
    provider.play(toneDelta());
    const answering = session.activeTurn!;
    provider.play({ type: "speech_started", itemId: "in_2" });
    provider.play(toneDelta());

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

  it("speech the leg keeps playing (its policy says no) does not interrupt", async () => {
    const asked: string[] = [];
    const { provider, sink, log } = await setup({
      speechOverOutput: (output) => (asked.push(output.itemId), "kept"),
    });
    provider.play({ type: "response_started", responseId: "r1" });
    provider.play(toneDelta());
    provider.play({ type: "speech_started" });
    provider.play(toneDelta());
    expect(log.ofType("output.audio.cancelled")).toHaveLength(0);
    expect(provider.calls).not.toContain("cancelResponse");
    expect(sink.bytes).toBe(9600);
    // The pipeline decided nothing itself: it asked the leg, once, about the answer that played.
    expect(asked).toEqual(["out_1"]);
  });

  it("speech the leg leaves to its own gate is only noted; the leg's interruption makes it the caller's turn", async () => {
    const { session, provider, sink, log, controller } = await setup({ speechOverOutput: () => "deferred" });
    provider.play({ type: "response_started", responseId: "r1" });
    provider.play(toneDelta());
    const answering = session.activeTurn!;
    provider.play({ type: "speech_started", audioStartMs: 400, itemId: "in_2" });
    provider.play(toneDelta());
    expect(log.ofType("output.audio.cancelled")).toHaveLength(0);
    expect(provider.calls).not.toContain("cancelResponse");
    expect(sink.bytes).toBe(9600);
    expect(log.ofType("input.audio.speech_started")[0]?.turnId).toBe(answering.id);
    // The local detector (a media leg's gate on echo-cancelled audio) cuts the answer: the one sequence.
    expect(controller.interrupt!(session.activeOutput!)).toBe(true);
    expect(provider.calls).toContain("cancelResponse");
    expect(sink.entries.at(-1)).toMatchObject({ kind: "clear", itemId: "out_1", reason: "barge_in" });
    const caller = session.activeTurn!;
    expect(caller.id).not.toBe(answering.id);
    expect(log.ofType("input.audio.speech_started").at(-1)).toMatchObject({
      turnId: caller.id,
      payload: { audioStartMs: 400 },
    });
    // The provider's end of speech ends the caller's turn, as on any provider turn.
    provider.play({ type: "speech_stopped", audioEndMs: 1400, itemId: "in_2" });
    expect(log.ofType("turn.ended").at(-1)?.turnId).toBe(caller.id);
  });

  it("echo the provider heard and the leg's gate did not is no turn when the answer ends", async () => {
    const { session, provider, log } = await setup({ speechOverOutput: () => "deferred" });
    provider.play({ type: "response_started", responseId: "r1" });
    provider.play(toneDelta());
    provider.play({ type: "speech_started", itemId: "in_2" });
    provider.play({ type: "speech_stopped", itemId: "in_2" });
    provider.play({ type: "response_done", responseId: "r1", status: "completed" });
    expect(log.ofType("turn.started")).toHaveLength(1);
    expect(session.activeOutput).toBeUndefined();
  });

  describe("speech over a kept answer that ends while that answer still plays", () => {
    /** Response r2's 100 ms for item out_2: the answer to that speech. */
    const answerDelta = (): RealtimeProviderEvent => ({
      type: "audio_delta",
      responseId: "r2",
      itemId: "out_2",
      data: tone24k(),
      format: PCM16_24K,
    });

    it("waits for that answer's end, then is a turn of its own with its words and the answer to them", async () => {
      const { session, provider, sink, log } = await setup({ speechOverOutput: () => "kept" });
      provider.play({ type: "response_started", responseId: "r1" });
      provider.play(toneDelta());
      const greeting = session.activeTurn!;
      provider.play({ type: "speech_started", itemId: "in_2" });
      provider.play({ type: "speech_stopped", itemId: "in_2" });
      provider.play({ type: "transcript_done", itemId: "in_2", text: "hello", role: "user" });
      provider.play({ type: "response_started", responseId: "r2" });
      provider.play(answerDelta());
      // The greeting still plays: its own audio goes on, the rest waits with the caller's turn.
      provider.play(toneDelta());
      expect(sink.bytes).toBe(9600);
      expect(session.activeTurn?.id).toBe(greeting.id);
      expect(log.ofType("transcript.done")).toHaveLength(0);
      provider.play({ type: "audio_done", responseId: "r1", itemId: "out_1" });
      provider.play({ type: "response_done", responseId: "r1", status: "completed" });
      const caller = session.activeTurn!;
      expect(caller.id).not.toBe(greeting.id);
      expect(log.ofType("output.audio.done")[0]).toMatchObject({ turnId: greeting.id, itemId: "out_1" });
      expect(log.ofType("transcript.done")[0]).toMatchObject({
        turnId: caller.id,
        payload: { text: "hello" },
      });
      expect(log.ofType("output.audio.started").at(-1)).toMatchObject({ turnId: caller.id, itemId: "out_2" });
      expect(log.ofType("turn.ended").at(-1)?.turnId).toBe(caller.id);
      expect(log.ofType("input.audio.speech_stopped").at(-1)?.turnId).toBe(caller.id);
      expect(sink.bytes).toBe(14_400);
      // r1's end ends none of r2's audio: the answer to the caller plays on until its own end.
      expect(session.activeOutput?.itemId).toBe("out_2");
      provider.play({ type: "response_done", responseId: "r2", status: "completed" });
      expect(log.ofType("output.audio.done").map((e) => [e.itemId, e.turnId])).toEqual([
        ["out_1", greeting.id],
        ["out_2", caller.id],
      ]);
      expect(log.ofType("output.audio.cancelled")).toHaveLength(0);
      expect(log.ofType("turn.cancelled")).toHaveLength(0);
    });

    it("speech that then interrupts the answer (no longer kept) cuts it at once; the waiting turn's answer never plays", async () => {
      let keep = true;
      const { session, provider, sink, log, controller } = await setup({
        speechOverOutput: (output) =>
          keep ? "kept" : controller.interrupt!(output) ? "interrupted" : "kept",
      });
      provider.play({ type: "response_started", responseId: "r1" });
      provider.play(toneDelta());
      provider.play({ type: "speech_started", itemId: "in_2" });
      provider.play({ type: "speech_stopped", itemId: "in_2" });
      provider.play({ type: "response_started", responseId: "r2" });
      provider.play(answerDelta());
      keep = false;
      provider.play({ type: "speech_started", itemId: "in_3" });
      expect(log.ofType("output.audio.cancelled")[0]).toMatchObject({
        itemId: "out_1",
        payload: { reason: "barge_in" },
      });
      expect(provider.calls).toContain("cancelResponse");
      // The waiting speech had its turn (ended), the answer to it was cancelled with r2; the new speech is live.
      const turns = log.ofType("turn.started").map((e) => e.turnId);
      expect(turns).toHaveLength(3);
      expect(log.ofType("turn.ended").map((e) => e.turnId)).toContain(turns[1]);
      expect(session.activeTurn?.id).toBe(turns[2]);
      expect(session.activeTurn?.state).toBe("active");
      expect(log.ofType("output.audio.started").map((e) => e.itemId)).toEqual(["out_1"]);
      expect(sink.bytes).toBe(4800);
    });
  });

  it("the leg's turns: the provider session never answers by itself", async () => {
    const { provider } = await setup({ turns: "leg" });
    expect(provider.options).toMatchObject({ autoRespond: false });
  });

  it("a tool the server does not run is completed by submitToolResult through the one dispatch path", async () => {
    const { session, provider, log, controller } = await setup();
    provider.play({ type: "speech_started" });
    provider.play(lookupCall("call_1", '{"id":"7"}'));
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
    const { provider, log } = await setup({
      tools: toolsWith(async (args) => {
        seen.push(JSON.stringify(args));
        return '{"ok":true}';
      }),
    });
    expect(provider.options?.tools.map((t) => t.name)).toEqual(["lookup"]);
    provider.play({ type: "speech_started" });
    provider.play(lookupCall("call_9"));
    await log.next("tool.result");
    await new Promise((r) => setImmediate(r));
    expect(seen).toEqual(["{}"]);
    expect(provider.toolResults).toEqual([["call_9", '{"ok":true}']]);
    expect(log.ofType("tool.call")).toHaveLength(1);
  });

  it("a tool denied by policy never runs and the provider is told why", async () => {
    let ran = false;
    const { provider, log } = await setup({
      tools: toolsWith(
        async () => {
          ran = true;
          return "{}";
        },
        new ToolPolicy({ deny: ["lookup"] }),
      ),
    });
    provider.play({ type: "speech_started" });
    provider.play(lookupCall("call_d"));
    await log.next("tool.error");
    await new Promise((r) => setImmediate(r));
    expect(ran).toBe(false);
    expect(provider.toolResults).toHaveLength(1);
    expect(JSON.parse(provider.toolResults[0]![1])).toMatchObject({ error: "tool_denied" });
  });

  it("cancelTurn cancels the provider response and clears the sink; close closes the provider session once", async () => {
    const { session, provider, sink, log, controller } = await setup();
    provider.play({ type: "response_started", responseId: "r1" });
    provider.play(toneDelta());
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
    const session = relaySession();
    const clientOnly: RealtimeProvider = {
      kind: "realtime",
      id: "c",
      label: "c",
      capabilities: {},
      health: async () => ({ ok: true }),
    };
    expect(() => createSessionController({ session, providers: realtimeOnly(clientOnly) })).toThrowError(
      expect.objectContaining({ code: "capability_unsupported" }),
    );
  });

  it("passes g711 u-law through both ways untouched when the provider declares it", async () => {
    const { provider, sink, controller } = await setup({
      providerFormats: [PCM16_24K, ULAW_8K],
      inputFormat: ULAW_8K,
      outputFormat: ULAW_8K,
    });
    expect(provider.options).toMatchObject({ inputFormat: ULAW_8K, outputFormat: ULAW_8K });
    const frame = new Uint8Array(160).map((_, i) => i); // 20 ms, odd-sized frames are fine for 1-byte samples
    controller.appendAudio(frame.subarray(0, 159));
    expect(Array.from(provider.audio[0]!)).toEqual(Array.from(frame.subarray(0, 159)));
    provider.play({ type: "speech_started", itemId: "in_1" });
    provider.play({ type: "speech_stopped", itemId: "in_1" });
    provider.play({ type: "response_started", responseId: "r1" });
    const reply = new Uint8Array(800).fill(0x55);
    provider.play({ type: "audio_delta", responseId: "r1", itemId: "out_1", data: reply, format: ULAW_8K });
    // An encoded passthrough: the provider's u-law bytes reach the sink untouched, said to be u-law.
    expect(sink.writes[0]!.chunk).toEqual({ kind: "encoded", bytes: reply, format: ULAW_8K });
    expect((sink.writes[0]!.chunk as { bytes: Uint8Array }).bytes).toBe(reply);
  });

  it("refuses u-law with a provider that does not declare it, rather than transcoding silently", () => {
    const session = relaySession();
    const providers = realtimeOnly(new ScriptedRealtimeProvider([PCM16_24K]));
    expect(() =>
      createSessionController({ session, providers, inputFormat: ULAW_8K, outputFormat: ULAW_8K }),
    ).toThrowError(expect.objectContaining({ code: "capability_unsupported" }));
  });
});
