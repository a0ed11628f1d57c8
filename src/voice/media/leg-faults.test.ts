import { afterEach, describe, expect, it } from "vitest";
import { NOOP_LOGGER } from "../../core/logger.js";
import { PrerenderedSpeech } from "../faults/prerendered-speech.js";
import { sessionControllerFactory } from "../pipelines/controller-factory.js";
import { EventLog, RecordingSink } from "../pipelines/testing/pipeline-harness.js";
import { ScriptedRealtimeProvider } from "../pipelines/testing/scripted-realtime-provider.js";
import type { TalkRuntime } from "../../core/session-types.js";
import { audioBytes } from "../../core/audio-chunk.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import type { TerminalReason } from "../../core/talk-events.js";
import { PCM16_16K, type AudioFormat } from "../../core/talk-types.js";
import type { FaultOptions } from "../../core/fault-options.js";
import { MediaLeg, type MediaLegAdapter } from "./media-leg.js";

const PCM16_8K: AudioFormat = { encoding: "pcm16", sampleRate: 8000, channels: 1 };

let runtime: TalkRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

function line(text: string, hz: number): PrerenderedSpeech {
  const pcm = new Int16Array(16_000); // 1 s at 16 kHz
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(6000 * Math.sin((2 * Math.PI * hz * i) / 16_000));
  return new PrerenderedSpeech(text, pcm, PCM16_16K);
}

class Adapter implements MediaLegAdapter {
  readonly sink = new RecordingSink();
  readonly closes: TerminalReason[] = [];
  legClosed(reason: TerminalReason): void {
    this.closes.push(reason);
  }
}

async function leg(faults: FaultOptions) {
  runtime = createTalkRuntime();
  const provider = new ScriptedRealtimeProvider([PCM16_8K]);
  const session = runtime.createSession({
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    owner: "gateway",
  });
  const adapter = new Adapter();
  const speech = { apology: line("apology", 300), goodbye: line("goodbye", 600) };
  const media = new MediaLeg({
    session,
    createController: sessionControllerFactory({
      providers: {
        stt: () => undefined,
        tts: () => undefined,
        agent: () => undefined,
        realtime: () => provider,
      },
      options: {},
      logger: NOOP_LOGGER,
      faults: { options: faults, speech },
    }),
    adapter,
    format: PCM16_8K,
    turnTaking: { kind: "provider" },
    logger: NOOP_LOGGER,
  });
  await media.start();
  return { media, adapter, provider, session, speech, events: new EventLog(session) };
}

async function until(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 2));
}

describe("media leg: the one failure path", () => {
  it("a provider lost: the apology is written to the sink at once, in the leg's format; a new session gets the conversation so far", async () => {
    const { adapter, provider, speech, session } = await leg({ retryBackoffMs: 0 });
    provider.play({ type: "transcript_done", itemId: "i1", role: "assistant", text: "Hello there." });
    const firstOptions = provider.options;
    provider.play({ type: "closed", reason: "socket closed (1006)" });
    const apology = adapter.sink.writes[0]!;
    expect(apology.chunk.format).toEqual(PCM16_8K);
    expect(audioBytes(apology.chunk)).toEqual(speech.apology.audioFor(PCM16_8K).data);
    await until(() => provider.options !== firstOptions);
    expect(provider.options!.instructions).toContain("Assistant: Hello there.");
    expect(session.state).toBe("active");
    expect(adapter.closes).toEqual([]);
  });

  it("faults in a row up to maxConsecutiveFaults: the goodbye, then the leg closes with provider_lost", async () => {
    const { adapter, provider, speech, events } = await leg({ retryBackoffMs: 0, maxConsecutiveFaults: 2 });
    const firstOptions = provider.options;
    provider.play({ type: "closed", reason: "lost" });
    await until(() => provider.options !== firstOptions);
    provider.play({ type: "closed", reason: "lost again" });
    await until(() => adapter.closes.length === 1);
    expect(adapter.closes).toEqual(["provider_lost"]);
    const lines = adapter.sink.writes.map((w) => audioBytes(w.chunk));
    expect(lines).toEqual([speech.apology.audioFor(PCM16_8K).data, speech.goodbye.audioFor(PCM16_8K).data]);
    expect(events.types().filter((t) => t === "session.error")).toHaveLength(2);
  });

  it("policy hangup: no reconnect, the goodbye and provider_lost on the first fault", async () => {
    const { adapter, provider } = await leg({ policy: "hangup" });
    const firstOptions = provider.options;
    provider.play({ type: "error", code: "connection_lost", message: "gone", fatal: true });
    await until(() => adapter.closes.length === 1);
    expect(adapter.closes).toEqual(["provider_lost"]);
    expect(provider.options).toBe(firstOptions);
  });

  it("a refused request (a non-fatal client error) is only reported: no apology, no reconnect", async () => {
    const { adapter, provider, events } = await leg({});
    const firstOptions = provider.options;
    provider.play({
      type: "error",
      code: "response_cancel_not_active",
      message: "nothing to cancel",
      fatal: false,
    });
    expect(adapter.sink.writes).toHaveLength(0);
    expect(provider.options).toBe(firstOptions);
    expect(events.types()).toContain("session.error");
  });
});
