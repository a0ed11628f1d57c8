/**
 * The two latencies a caller feels, measured by the call adapter and carried
 * by core as `latency.metrics` talk.events on the call's session:
 *
 * - `speech_end_to_first_audio`: the end of the caller's speech was detected
 *   (local VAD `speech-end` for stt-tts, provider `speech_stopped` for
 *   realtime) -> the first 20 ms frame of the next answer sent to Twilio.
 *   The silence that ended the turn (`endpointingMs` for the local VAD: the
 *   end-of-turn rule's endpoint for that turn, fixed or adaptive; the
 *   provider's silence duration for realtime) comes before it.
 * - `barge_in_to_clear`: caller speech over an answer was detected (the
 *   provider's `speech_started` event as it reached the adapter, or the local
 *   VAD onset) -> `clear` sent to Twilio.
 *
 * Times are `performance.now()`, so they are monotonic and sub-millisecond.
 */
import type { RealtimeProvider, RealtimeProviderEvent } from "../core/index.js";
import type { LatencyMetricsPayload } from "../core/index.js";

export type LatencyDetector = "local_vad" | "provider";

export interface CallLatencyPayload extends LatencyMetricsPayload {
  name: "speech_end_to_first_audio" | "barge_in_to_clear";
  detector: LatencyDetector;
  /** Local VAD: the silence after which this turn ended (talk.input.endOfTurn's endpoint for it), ms. */
  endpointingMs?: number;
}

export interface CallLatencyOptions {
  /** Emits one measurement (the call puts it on its session as `latency.metrics`). */
  emit(payload: CallLatencyPayload): void;
}

export class CallLatency {
  readonly #o: CallLatencyOptions;
  #bargeInAt: number | undefined;
  #bargeInDetector: LatencyDetector = "provider";
  #speechEndAt: number | undefined;
  #speechEndDetector: LatencyDetector = "provider";
  #endpointingMs: number | undefined;

  constructor(options: CallLatencyOptions) {
    this.#o = options;
  }

  /**
   * Caller speech over an answer is being handled now: a `clear` sent before
   * `bargeInHandled()` is attributed to it.
   */
  bargeInDetected(detector: LatencyDetector, at = performance.now()): void {
    this.#bargeInAt = at;
    this.#bargeInDetector = detector;
  }

  /** The barge-in was handled (with or without a clear): later clears are not attributed to it. */
  bargeInHandled(): void {
    this.#bargeInAt = undefined;
  }

  /** The playout sent `clear`. */
  clearSent(): void {
    const at = this.#bargeInAt;
    if (at === undefined) return;
    this.#bargeInAt = undefined;
    this.#o.emit({
      name: "barge_in_to_clear",
      ms: round(performance.now() - at),
      detector: this.#bargeInDetector,
    });
  }

  /** The caller stopped speaking (as the detector sees it); `endpointingMs`: the local VAD's silence for this turn. */
  speechEnded(detector: LatencyDetector, endpointingMs?: number): void {
    this.#speechEndAt = performance.now();
    this.#speechEndDetector = detector;
    this.#endpointingMs = endpointingMs;
  }

  /** The first frame of an answer went out (CallPlayout reports each item's first frame). */
  itemFirstFrame(): void {
    const at = this.#speechEndAt;
    if (at === undefined) return;
    this.#speechEndAt = undefined;
    const detector = this.#speechEndDetector;
    this.#o.emit({
      name: "speech_end_to_first_audio",
      ms: round(performance.now() - at),
      detector,
      ...(detector === "local_vad" && this.#endpointingMs !== undefined
        ? { endpointingMs: this.#endpointingMs }
        : {}),
    });
  }

  /**
   * The provider as the call's pipeline sees it, with its events timed as
   * they reach the adapter: speech_started (barge-in) and speech_stopped
   * (end of the caller's speech). `beforeSpeechStarted` runs before the
   * pipeline sees speech_started (the call clears the line there). Everything
   * else is the provider itself.
   */
  timedRealtime(provider: RealtimeProvider, beforeSpeechStarted?: () => void): RealtimeProvider {
    const connect = provider.connect?.bind(provider);
    if (!connect) return provider;
    const timed = Object.create(provider) as RealtimeProvider & {
      connect: NonNullable<RealtimeProvider["connect"]>;
    };
    timed.connect = (options, onEvent) =>
      connect(options, (event: RealtimeProviderEvent) => {
        if (event.type === "speech_stopped") this.speechEnded("provider");
        if (event.type !== "speech_started") return onEvent(event);
        this.bargeInDetected("provider");
        try {
          beforeSpeechStarted?.();
          onEvent(event);
        } finally {
          this.bargeInHandled();
        }
      });
    return timed;
  }
}

function round(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}
