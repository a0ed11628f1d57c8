import { afterEach, describe, expect, it } from "vitest";
import { encodeMulaw } from "../../codecs/mulaw.js";
import { loadSpeech } from "../../codecs/testing/audio-tools.js";
import { TalkError } from "../../core/errors.js";
import { NOOP_LOGGER, type TalkLogger } from "../../core/logger.js";
import { sessionControllerFactory } from "../pipelines/controller-factory.js";
import type { PipelineProviderResolver } from "../pipelines/pipeline-options.js";
import { EventLog, RecordingSink } from "../pipelines/testing/pipeline-harness.js";
import { ScriptedRealtimeProvider } from "../pipelines/testing/scripted-realtime-provider.js";
import type { TalkRuntime } from "../../core/session-types.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import type { TerminalReason } from "../../core/talk-events.js";
import { PCM16_24K, ULAW_8K, type AudioFormat } from "../../core/talk-types.js";
import { MediaLeg, type MediaLegAdapter, type TurnTaking } from "./media-leg.js";
import { createEchoCanceller, echoCancellerAvailable } from "../../codecs/echo-canceller.js";
import type { EchoCancellerFactory } from "./echo-guard.js";

const PCM16_8K: AudioFormat = { encoding: "pcm16", sampleRate: 8000, channels: 1 };

let runtime: TalkRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

function realtimeOnly(provider: ScriptedRealtimeProvider): PipelineProviderResolver {
  return { stt: () => undefined, tts: () => undefined, agent: () => undefined, realtime: () => provider };
}

/** An adapter that records what the leg tells it, as a carrier call would. */
class RecordingAdapter implements MediaLegAdapter {
  readonly sink = new RecordingSink();
  readonly closes: TerminalReason[] = [];
  protect = false;
  interruptible(): boolean {
    return !this.protect;
  }
  legClosed(reason: TerminalReason): void {
    this.closes.push(reason);
  }
}

function legOver(
  provider: ScriptedRealtimeProvider,
  o: {
    turnTaking?: TurnTaking;
    passthrough?: AudioFormat;
    mode?: "realtime" | "transcription";
    interruptOnSpeech?: boolean;
    echo?: { create: EchoCancellerFactory; enabled?: boolean; doubleTalk?: boolean };
    echoReference?: boolean;
    logger?: TalkLogger;
  } = {},
) {
  runtime = createTalkRuntime();
  const mode = o.mode ?? "realtime";
  const session = runtime.createSession({
    mode,
    transport: "gateway-relay",
    brain: mode === "realtime" ? "agent-consult" : "none",
    owner: "gateway",
  });
  const adapter = new RecordingAdapter();
  const leg = new MediaLeg({
    session,
    createController: sessionControllerFactory({
      providers: realtimeOnly(provider),
      options: o.interruptOnSpeech !== undefined ? { interruptOnSpeech: o.interruptOnSpeech } : {},
      logger: NOOP_LOGGER,
      ...(o.echo
        ? {
            echo: {
              create: o.echo.create,
              options: {
                enabled: o.echo.enabled ?? true,
                ...(o.echo.doubleTalk !== undefined ? { doubleTalk: o.echo.doubleTalk } : {}),
              },
            },
          }
        : {}),
    }),
    ...(o.echoReference !== undefined ? { echoReference: o.echoReference } : {}),
    adapter,
    format: PCM16_8K,
    ...(o.passthrough ? { passthrough: o.passthrough } : {}),
    turnTaking: o.turnTaking ?? { kind: "provider" },
    logger: o.logger ?? NOOP_LOGGER,
  });
  return { leg, adapter, session, events: new EventLog(session) };
}

/** 20 ms of a loud 8 kHz tone as PCM16. */
function tone(ms: number, amplitude = 12_000): Int16Array {
  const pcm = new Int16Array(8 * ms);
  for (let i = 0; i < pcm.length; i++)
    pcm[i] = Math.round(amplitude * Math.sin((2 * Math.PI * 300 * i) / 8000));
  return pcm;
}

/** The provider starts an answer: 100 ms of audio for item out_1, now the session's active output. */
function answer(provider: ScriptedRealtimeProvider): void {
  provider.play({ type: "response_started", responseId: "r1" });
  provider.play({
    type: "audio_delta",
    responseId: "r1",
    itemId: "out_1",
    data: new Uint8Array(4800),
    format: PCM16_24K,
  });
}

describe("media leg", () => {
  it("passes the adapter's encoded format through when the realtime provider carries it both ways", async () => {
    const provider = new ScriptedRealtimeProvider([ULAW_8K, PCM16_24K]);
    const { leg } = legOver(provider, { passthrough: ULAW_8K });
    await leg.start();
    expect(leg.passthrough).toBe(true);
    expect(leg.outputFormat).toEqual(ULAW_8K);
    const ulaw = encodeMulaw(tone(20));
    leg.appendEncoded(ulaw);
    expect(provider.audio).toHaveLength(1);
    expect(provider.audio[0]).toEqual(ulaw);
    expect(provider.options?.inputFormat).toEqual(ULAW_8K);
  });

  it("takes PCM samples with their format, converted once, when the provider does not carry the encoded format", async () => {
    const provider = new ScriptedRealtimeProvider([PCM16_24K]);
    const { leg } = legOver(provider, { passthrough: ULAW_8K });
    await leg.start();
    expect(leg.passthrough).toBe(false);
    for (let i = 0; i < 10; i++) leg.appendAudio(tone(20), PCM16_8K);
    const bytes = provider.audio.reduce((n, a) => n + a.byteLength, 0);
    // 200 ms at 24 kHz PCM16 is 9,600 bytes; the resampler holds back a few samples.
    expect(bytes).toBeGreaterThan(9000);
    expect(bytes).toBeLessThanOrEqual(9600);
  });

  it("refuses audio in another format without throwing at the adapter, and keeps taking good frames", async () => {
    const provider = new ScriptedRealtimeProvider([PCM16_24K]);
    const { leg } = legOver(provider);
    await leg.start();
    expect(() => leg.appendAudio(tone(20), PCM16_24K)).not.toThrow();
    expect(() => leg.appendEncoded(new Uint8Array(160))).not.toThrow();
    expect(provider.audio).toHaveLength(0);
    leg.appendAudio(tone(20), PCM16_8K);
    expect(provider.audio.length).toBeGreaterThan(0);
  });

  it("a session closed by the runtime closes the leg and tells the adapter exactly once", async () => {
    const provider = new ScriptedRealtimeProvider([PCM16_24K]);
    const { leg, adapter, session } = legOver(provider);
    await leg.start();
    await session.close("owner_lost");
    await expect(leg.closed).resolves.toBe("owner_lost");
    expect(leg.state).toBe("closed");
    expect(adapter.closes).toEqual(["owner_lost"]);
    expect(provider.calls).toContain("close"); // the provider session went with it
    await leg.close("completed");
    expect(adapter.closes).toEqual(["owner_lost"]);
  });

  it("close() is idempotent, tells the adapter once, and a closed leg refuses to start or speak", async () => {
    const provider = new ScriptedRealtimeProvider([PCM16_24K]);
    const { leg, adapter, events } = legOver(provider);
    await leg.start();
    const first = leg.close("completed");
    expect(leg.close("error")).toBe(first);
    await first;
    expect(adapter.closes).toEqual(["completed"]);
    expect(events.ofType("session.closed")).toHaveLength(1);
    await expect(leg.start()).rejects.toMatchObject({ code: "session_closed" });
    expect(() => leg.say("hello")).toThrow(TalkError);
    expect(leg.bargeIn("local_vad")).toBe(false);
  });

  it("a leg closed before it started still closes its session and tells the adapter", async () => {
    const provider = new ScriptedRealtimeProvider([PCM16_24K]);
    const { leg, adapter, session } = legOver(provider);
    await leg.close("cancelled");
    expect(session.state).toBe("closed");
    expect(adapter.closes).toEqual(["cancelled"]);
  });

  it("local barge-in asks the one policy: a protected output keeps playing, an unprotected one is cancelled", async () => {
    const provider = new ScriptedRealtimeProvider([PCM16_24K]);
    const { leg, adapter, events } = legOver(provider);
    await leg.start();
    answer(provider);
    adapter.protect = true;
    expect(leg.bargeIn("local_vad")).toBe(false);
    expect(events.ofType("output.audio.cancelled")).toHaveLength(0);
    adapter.protect = false;
    expect(leg.bargeIn("local_vad")).toBe(true);
    expect(events.ofType("output.audio.cancelled")).toHaveLength(1);
    expect(adapter.sink.entries.some((e) => e.kind === "clear")).toBe(true);
  });

  it("talk.input.interruptOnSpeech off (the factory's option) keeps answers playing for local and provider speech alike", async () => {
    const provider = new ScriptedRealtimeProvider([PCM16_24K]);
    const { leg, events } = legOver(provider, { interruptOnSpeech: false });
    await leg.start();
    answer(provider);
    expect(leg.bargeIn("local_vad")).toBe(false);
    provider.play({ type: "speech_started", itemId: "in_1" });
    expect(events.ofType("output.audio.cancelled")).toHaveLength(0);
    expect(events.ofType("input.audio.speech_started")).toHaveLength(1);
  });

  it("the provider's speech_started goes through the same policy (greeting protection)", async () => {
    const provider = new ScriptedRealtimeProvider([PCM16_24K]);
    const { leg, adapter, events } = legOver(provider);
    await leg.start();
    answer(provider);
    adapter.protect = true;
    provider.play({ type: "speech_started", itemId: "in_1" });
    expect(events.ofType("output.audio.cancelled")).toHaveLength(0);
    adapter.protect = false;
    provider.play({ type: "speech_started", itemId: "in_2" });
    expect(events.ofType("output.audio.cancelled")).toHaveLength(1);
    // The line is cleared before the output is cancelled: the caller stops hearing it first.
    const clearIndex = adapter.sink.entries.findIndex((e) => e.kind === "clear");
    expect(clearIndex).toBeGreaterThan(-1);
    expect(provider.calls).toContain("cancelResponse");
  });

  it("local VAD turn-taking starts a turn on speech and ends it after silence", async () => {
    const provider = new ScriptedRealtimeProvider([PCM16_24K]);
    const { leg, events } = legOver(provider, {
      turnTaking: { kind: "local-vad", threshold: -40, minSpeechMs: 100, silenceMs: 300 },
    });
    await leg.start();
    for (let i = 0; i < 10; i++) leg.appendAudio(new Int16Array(160), PCM16_8K);
    expect(events.ofType("turn.started")).toHaveLength(0);
    // Real speech (a pocketsphinx test recording at 8 kHz), fed in 20 ms frames.
    const speech = loadSpeech("goforward.raw", 8000);
    for (let i = 0; i + 160 <= speech.length; i += 160) leg.appendAudio(speech.slice(i, i + 160), PCM16_8K);
    expect(events.ofType("turn.started")).toHaveLength(1);
    for (let i = 0; i < 50; i++) leg.appendAudio(new Int16Array(160), PCM16_8K);
    await new Promise((r) => setTimeout(r, 10));
    expect(events.ofType("turn.ended")).toHaveLength(1);
    // The local VAD reports what it heard, as a provider's VAD would, on the turn it started and ended.
    const turnId = events.ofType("turn.started")[0]!.turnId;
    const [started] = events.ofType("input.audio.speech_started");
    const [stopped] = events.ofType("input.audio.speech_stopped");
    expect(events.ofType("input.audio.speech_started")).toHaveLength(1);
    expect(events.ofType("input.audio.speech_stopped")).toHaveLength(1);
    expect(started).toMatchObject({ turnId, source: "local_vad" });
    expect(stopped).toMatchObject({ turnId, source: "local_vad" });
    const { audioStartMs } = started!.payload as { audioStartMs: number };
    const { audioEndMs } = stopped!.payload as { audioEndMs: number };
    // Speech begins after the 200 ms of silence fed first and ends before the trailing silence.
    expect(audioStartMs).toBeGreaterThanOrEqual(200);
    expect(audioEndMs).toBeGreaterThan(audioStartMs);
    expect(audioEndMs).toBeLessThanOrEqual(200 + (speech.length / 8000) * 1000 + 20);
    const types = events.types();
    expect(types.indexOf("input.audio.speech_stopped")).toBeLessThan(types.indexOf("turn.ended"));
  });

  it("adapter turn-taking: the adapter's startTurn / endTurn drive the session; other legs refuse them", async () => {
    const provider = new ScriptedRealtimeProvider([PCM16_24K]);
    const own = legOver(provider);
    await own.leg.start();
    expect(() => own.leg.startTurn()).toThrow(/not the adapter's/);
    await own.leg.close("completed");
    await runtime!.close();
    const { leg, events } = legOver(provider, { turnTaking: { kind: "adapter" } });
    await leg.start();
    const turn = leg.startTurn();
    await leg.endTurn(turn.id);
    expect(events.ofType("turn.started")).toHaveLength(1);
    expect(events.ofType("turn.ended")).toHaveLength(1);
    // An adapter's turn is a segment of speech its own detector found (a meeting's utterance).
    expect(events.ofType("input.audio.speech_started")).toMatchObject([
      { turnId: turn.id, source: "adapter" },
    ]);
    expect(events.ofType("input.audio.speech_stopped")).toMatchObject([
      { turnId: turn.id, source: "adapter" },
    ]);
  });
});

describe.skipIf(!echoCancellerAvailable())("media leg: echo cancellation", () => {
  /** The codecs' canceller, counted: created and closed. */
  function counted() {
    const count = { created: 0, closed: 0 };
    const create: EchoCancellerFactory = (o) => {
      count.created++;
      const c = createEchoCanceller(o);
      return {
        played: (pcm) => c.played(pcm),
        process: (mic) => c.process(mic),
        close: () => {
          count.closed++;
          c.close();
        },
      };
    };
    return { count, create };
  }

  it("one canceller per leg, created at start and closed with the leg; the caller's audio goes through it", async () => {
    const provider = new ScriptedRealtimeProvider([PCM16_24K]);
    const { count, create } = counted();
    const { leg } = legOver(provider, { echo: { create }, echoReference: true });
    await leg.start();
    expect(count.created).toBe(1);
    // The caller's channel carries exactly what was played: after convergence far less of it gets through.
    const played = tone(20);
    let inEnergy = 0;
    for (let i = 0; i < 150; i++) leg.appendAudio(played, PCM16_8K, played);
    expect(provider.audio.length).toBe(150);
    for (const chunk of provider.audio.slice(-20)) {
      const pcm = new Int16Array(chunk.buffer, chunk.byteOffset, chunk.byteLength / 2);
      for (const v of pcm) inEnergy += v * v;
    }
    let toneEnergy = 0;
    for (const v of played) toneEnergy += v * v;
    // 24 kHz chunks: 3x the samples of the 8 kHz tone per frame.
    expect(inEnergy / (20 * 3)).toBeLessThan(toneEnergy / 100);
    await leg.close("closed");
    await leg.close("closed");
    expect(count.closed).toBe(1);
  });

  it("reports what its guard saw: on the leg while it runs, and once in the log when it closes", async () => {
    const provider = new ScriptedRealtimeProvider([PCM16_24K]);
    const lines: { obj: unknown; msg: string | undefined }[] = [];
    const logger: TalkLogger = { ...NOOP_LOGGER, info: (obj, msg) => lines.push({ obj, msg }) };
    const { leg } = legOver(provider, { echo: { create: counted().create }, echoReference: true, logger });
    await leg.start();
    // A line that returns everything played: 0 dB of echo return loss (a steady tone has no envelope
    // to estimate a delay on, so that is not checked here; echo-guard.test.ts does).
    const played = tone(20);
    for (let i = 0; i < 250; i++) leg.appendAudio(played, PCM16_8K, played);
    const stats = leg.echoStats!;
    expect(stats.frames).toBe(250);
    // Once converged the canceller's output is residual, under the bar: attenuated, not let through.
    expect(stats.suppressedFrames).toBeGreaterThan(200);
    expect(stats.suppressedFrames + stats.doubleTalkFrames).toBeLessThanOrEqual(250);
    expect(stats.echoReturnLossDb).toBeCloseTo(0, 0);
    await leg.close("closed");
    await leg.close("closed");
    const summaries = lines.filter((l) => l.msg === "media leg: echo cancellation over the call");
    expect(summaries).toHaveLength(1);
    expect(summaries[0]!.obj).toMatchObject({
      echo: { frames: 250, echoReturnLossDb: stats.echoReturnLossDb },
    });
  });

  it("has no echo report without a canceller", async () => {
    const { leg } = legOver(new ScriptedRealtimeProvider([PCM16_24K]));
    await leg.start();
    expect(leg.echoStats).toBeUndefined();
    await leg.close("closed");
  });

  it("asks the canceller for the double-talk measure unless talk.input.echoCancellation.doubleTalk is false", async () => {
    for (const doubleTalk of [undefined, true, false]) {
      const asked: boolean[] = [];
      const create: EchoCancellerFactory = (o) => {
        asked.push(o.doubleTalk);
        return createEchoCanceller(o);
      };
      const provider = new ScriptedRealtimeProvider([PCM16_24K]);
      const { leg } = legOver(provider, {
        echo: { create, ...(doubleTalk !== undefined ? { doubleTalk } : {}) },
        echoReference: true,
      });
      await leg.start();
      expect(asked).toEqual([doubleTalk ?? true]);
      await leg.close("closed");
    }
  });

  it("none when the adapter supplies no reference or talk.input.echoCancellation is off", async () => {
    for (const o of [{ echoReference: false }, { echoReference: true, enabled: false }]) {
      const provider = new ScriptedRealtimeProvider([PCM16_24K]);
      const { count, create } = counted();
      const { leg } = legOver(provider, {
        echo: { create, ...(o.enabled !== undefined ? { enabled: o.enabled } : {}) },
        echoReference: o.echoReference,
      });
      await leg.start();
      leg.appendAudio(tone(20), PCM16_8K, tone(20));
      expect(provider.audio).toHaveLength(1);
      await leg.close("closed");
      await runtime?.close();
      runtime = undefined;
      expect(count.created).toBe(0);
    }
  });
});
