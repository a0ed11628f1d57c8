import type {
  AgentConsultRequest,
  AgentDelta,
  AgentProvider,
  TtsProvider,
  TtsRequest,
} from "../../src/core/provider-types.js";
import { pcmChunk, type AudioChunk } from "../../src/core/audio-chunk.js";
import { TalkError } from "../../src/core/errors.js";
import { PCM16_16K } from "../../src/core/talk-types.js";

/**
 * Provider plugins for cancellation tests: they implement the core provider
 * contracts, start work, then wait until their AbortSignal fires and record
 * it. A test awaits `started` (no timers) and then checks `aborted`.
 */
class AbortProbe {
  readonly aborted: unknown[] = [];
  #started!: () => void;
  started: Promise<void> = new Promise((resolve) => (this.#started = resolve));
  calls = 0;

  markStarted(): void {
    this.calls += 1;
    this.#started();
  }

  /** Resolves when `signal` aborts, recording its reason. */
  untilAborted(signal: AbortSignal): Promise<never> {
    return new Promise((_resolve, reject) => {
      const onAbort = (): void => {
        this.aborted.push(signal.reason);
        reject(signal.reason instanceof Error ? signal.reason : new TalkError("cancelled"));
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  reset(): void {
    this.started = new Promise((resolve) => (this.#started = resolve));
  }
}

/** TTS that sends one short chunk of silence, then hangs until aborted. */
export class SlowTtsProvider extends AbortProbe implements TtsProvider {
  readonly kind = "tts" as const;
  readonly id = "slow-tts";
  readonly label = "Slow test TTS";
  readonly capabilities = { local: true, streaming: true, outputFormats: [PCM16_16K] };

  async health(): Promise<{ ok: boolean }> {
    return { ok: true };
  }

  /** Every signal synthesize() was given, to check it was aborted even when the stream was abandoned. */
  readonly signals: AbortSignal[] = [];

  async *synthesize(request: TtsRequest): AsyncIterable<AudioChunk> {
    this.signals.push(request.signal);
    yield pcmChunk(new Int16Array(160), PCM16_16K);
    this.markStarted();
    await this.untilAborted(request.signal);
  }
}

/** An agent that never answers until aborted. */
export class SlowAgentProvider extends AbortProbe implements AgentProvider {
  readonly kind = "agent" as const;
  readonly id = "slow-agent";
  readonly label = "Slow test agent";
  readonly capabilities = { local: true, streaming: true };

  async health(): Promise<{ ok: boolean }> {
    return { ok: true };
  }

  async *consult(request: AgentConsultRequest): AsyncIterable<AgentDelta> {
    this.markStarted();
    await this.untilAborted(request.signal);
    yield { type: "done" };
  }
}

/** A tool body that hangs until aborted (for talk.client.toolCall cancellation). */
export class SlowTool extends AbortProbe {
  run(signal: AbortSignal): Promise<never> {
    this.markStarted();
    return this.untilAborted(signal);
  }
}
