import { afterEach, describe, expect, it } from "vitest";
import type { TalkRuntime } from "../../core/session-types.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import { ULAW_8K } from "../../core/talk-types.js";
import type { OutputAudioPayload } from "../../core/talk-events.js";
import { createSessionController } from "./session-controller.js";
import { EventLog, RecordingSink } from "./testing/pipeline-harness.js";
import { ScriptedRealtimeProvider } from "./testing/scripted-realtime-provider.js";
import type { PipelineOptions } from "./pipeline-options.js";

let runtime: TalkRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

/** A u-law call relayed as is (the telephony hot path), with output.audio.delta coalescing at `intervalMs`. */
/** A Gateway-owned realtime session over the relay, on a fresh runtime. */
function newSession() {
  runtime = createTalkRuntime();
  return runtime.createSession({
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    owner: "gateway",
  });
}

/** A u-law realtime relay over the scripted provider, ready. */
async function openRelay(options: PipelineOptions = {}) {
  const session = newSession();
  const provider = new ScriptedRealtimeProvider([ULAW_8K]);
  const sink = new RecordingSink();
  const log = new EventLog(session);
  const controller = createSessionController({
    session,
    providers: {
      stt: () => undefined,
      tts: () => undefined,
      agent: () => undefined,
      realtime: () => provider,
    },
    sink,
    tools: undefined,
    inputFormat: ULAW_8K,
    outputFormat: ULAW_8K,
    options,
  });
  await controller.ready;
  return { session, provider, sink, log, controller };
}

async function relay(intervalMs?: number) {
  const { session, provider, sink, log, controller } = await openRelay(
    intervalMs === undefined ? {} : { outputDeltaIntervalMs: intervalMs },
  );
  provider.play({ type: "response_started", responseId: "r1" });
  /** `n` 20 ms chunks of the answer, as a provider streams them. */
  const stream = (n: number): void => {
    for (let i = 0; i < n; i++)
      provider.play({
        type: "audio_delta",
        responseId: "r1",
        itemId: "out_1",
        data: new Uint8Array(160).fill(0x7f),
        format: ULAW_8K,
      });
  };
  const deltaBytes = (): number[] =>
    log.ofType("output.audio.delta").map((e) => (e.payload as OutputAudioPayload).bytes);
  return { session, provider, sink, log, controller, stream, deltaBytes };
}

describe("output.audio.delta coalescing (realtime relay)", () => {
  it("reports the first chunk at once and the rest in one event before output.audio.done; audio is not held back", async () => {
    const { provider, sink, log, stream, deltaBytes } = await relay();
    stream(1);
    expect(deltaBytes()).toEqual([160]);
    stream(9);
    // Every chunk reached the sink as it came; only the metadata events are coalesced.
    expect(sink.bytes).toBe(1600);
    expect(deltaBytes()).toEqual([160]);
    provider.play({ type: "audio_done", responseId: "r1", itemId: "out_1" });
    expect(deltaBytes()).toEqual([160, 1440]);
    const types = log.types();
    expect(types.lastIndexOf("output.audio.delta")).toBeLessThan(types.indexOf("output.audio.done"));
    const done = log.ofType("output.audio.done")[0]!.payload as OutputAudioPayload;
    expect(done.bytes).toBe(1600);
    expect(done.durationMs).toBe(200);
  });

  it("reports again once the interval has passed", async () => {
    const { stream, deltaBytes } = await relay(30);
    stream(3);
    expect(deltaBytes()).toEqual([160]);
    await new Promise((r) => setTimeout(r, 40)); // more than the interval, on any machine
    stream(1);
    expect(deltaBytes()).toEqual([160, 480]);
  });

  it("reports every chunk with interval 0", async () => {
    const { stream, deltaBytes } = await relay(0);
    stream(4);
    expect(deltaBytes()).toEqual([160, 160, 160, 160]);
  });

  it("reports what was delivered before a barge-in cancels the output, so the counts add up", async () => {
    const { provider, log, stream, deltaBytes } = await relay();
    stream(6);
    provider.play({ type: "speech_started", itemId: "in_2" });
    expect(deltaBytes()).toEqual([160, 800]);
    const types = log.types();
    expect(types.lastIndexOf("output.audio.delta")).toBeLessThan(types.indexOf("output.audio.cancelled"));
    stream(2); // late audio of the interrupted answer: neither delivered nor reported
    expect(deltaBytes()).toEqual([160, 800]);
  });

  it("reports pending bytes when the session closes mid-answer", async () => {
    const { controller, stream, deltaBytes } = await relay();
    stream(5);
    await controller.close("completed");
    expect(deltaBytes()).toEqual([160, 640]);
  });

  it("refuses a bad interval with config_invalid", async () => {
    const session = newSession();
    const provider = new ScriptedRealtimeProvider([ULAW_8K]);
    expect(() =>
      createSessionController({
        session,
        providers: {
          stt: () => undefined,
          tts: () => undefined,
          agent: () => undefined,
          realtime: () => provider,
        },
        tools: undefined,
        options: { outputDeltaIntervalMs: -1 },
      }),
    ).toThrow(expect.objectContaining({ code: "config_invalid" }));
  });
});

describe("realtime relay: the caller's audio in pieces (providerAppendMs)", () => {
  it("asks the provider session for 60 ms pieces by default, and for what the options say", async () => {
    expect((await openRelay()).provider.options?.inputAppendMs).toBe(60);
    expect((await openRelay({ providerAppendMs: 0 })).provider.options?.inputAppendMs).toBe(0);
  });

  it("refuses a bad piece length with config_invalid naming it", async () => {
    for (const providerAppendMs of [-1, 501, 2.5])
      await expect(openRelay({ providerAppendMs })).rejects.toThrow(/PipelineOptions\.providerAppendMs/);
  });
});
