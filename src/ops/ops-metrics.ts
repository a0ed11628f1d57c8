import { collectDefaultMetrics, Gauge, Histogram, type Registry } from "prom-client";
import type { TalkEvent, TalkRuntime } from "../core/index.js";
import type { LiveSessions } from "./live-sessions.js";
import { MeetingJoins } from "./meeting-joins.js";
import type { ProviderCall, ProviderCallTrace, ProviderObserver } from "./provider-probe.js";

/** Seconds: from a few tens of ms (a clear, a first audio frame) to a slow provider. */
const LATENCY_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5, 2, 3, 5, 10];
/** Event loop delay sampling, ms (OpsMetricsOptions.eventLoopSampleMs). */
export const DEFAULT_EVENT_LOOP_SAMPLE_MS = 10;
/** Seconds: a turn lasts from a word to a long answer. */
const TURN_BUCKETS = [0.25, 0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300];

export interface OpsMetricsOptions {
  registry: Registry;
  runtime: TalkRuntime;
  live: LiveSessions;
  workerId: string;
  /** prom-client's Node process metrics (`process_*`, `nodejs_*`). Default true. */
  processMetrics?: boolean;
  /**
   * How often the event loop's delay is sampled for `nodejs_eventloop_lag_*`, ms (`ops.eventLoopSampleMs`).
   * Default 10, prom-client's: it wakes an idle worker 100 times a second (5.0-7.0 ms of CPU a second against
   * 2.3-2.7 at 50; docs/notes/performance-history.md, "An idle worker's CPU"). Node's histogram records the whole interval
   * between samples, so the gauges read this interval plus the delay: their floor moves with it.
   */
  eventLoopSampleMs?: number;
}

/**
 * The latency histograms, live-call and bot gauges and Node process metrics
 * of /metrics, from the session events every surface emits (`latency.metrics`
 * from the call adapter, turns, transcripts) and from the providers' calls
 * (provider-probe.ts). Labels stay bounded: surface, carrier, platform,
 * provider ids and outcomes, never session ids.
 */
export class OpsMetrics implements ProviderObserver {
  readonly #speechEndToFirstAudio: Histogram<"surface" | "detector">;
  readonly #bargeInToClear: Histogram<"surface" | "detector">;
  readonly #captionLatency: Histogram<"surface">;
  readonly #turnDuration: Histogram<"surface" | "outcome">;
  readonly #providerConnect: Histogram<"kind" | "provider" | "outcome">;
  readonly #providerFirstAudio: Histogram<"kind" | "provider">;
  readonly #providerResponse: Histogram<"kind" | "provider" | "outcome">;
  readonly #surfaces = new Map<string, string>();
  /** Per session: when the current turn started (performance.now()). */
  readonly #turns = new Map<string, { turnId: string; startedAt: number }>();
  /** Per session: the last turn whose user speech ended and has no final caption yet, and when. */
  readonly #speechEnds = new Map<string, { turnId: string | undefined; at: number }>();
  readonly #off: () => void;
  /** Meeting bots' join attempts and outcomes per platform and sub-code (meeting-joins.ts). */
  readonly joins: MeetingJoins;

  constructor(options: OpsMetricsOptions) {
    const registers = [options.registry];
    const histogram = <L extends string>(
      name: string,
      help: string,
      labelNames: L[],
      buckets = LATENCY_BUCKETS,
    ): Histogram<L> => new Histogram({ name, help, labelNames, buckets, registers });
    this.#speechEndToFirstAudio = histogram(
      "talkgate_speech_end_to_first_audio_seconds",
      "End of the caller's speech (as its detector saw it) to the first frame of the answer sent",
      ["surface", "detector"],
    );
    this.#bargeInToClear = histogram(
      "talkgate_barge_in_to_clear_seconds",
      "Caller speech over an answer detected to the line cleared",
      ["surface", "detector"],
    );
    this.#captionLatency = histogram(
      "talkgate_caption_latency_seconds",
      "End of a speaker's speech to its final caption (transcript.done of the user's turn)",
      ["surface"],
    );
    this.#turnDuration = histogram(
      "talkgate_turn_duration_seconds",
      "turn.started to turn.ended (completed) or turn.cancelled",
      ["surface", "outcome"],
      TURN_BUCKETS,
    );
    this.#providerConnect = histogram(
      "talkgate_provider_connect_seconds",
      "Opening a realtime provider session",
      ["kind", "provider", "outcome"],
    );
    this.#providerFirstAudio = histogram(
      "talkgate_provider_first_audio_seconds",
      "A provider call (tts synthesis, realtime response) to its first audio",
      ["kind", "provider"],
    );
    this.#providerResponse = histogram(
      "talkgate_provider_response_seconds",
      "A provider call (stt stream, agent consult, tts synthesis, realtime response) from start to end",
      ["kind", "provider", "outcome"],
      TURN_BUCKETS,
    );
    const { live, workerId } = options;
    new Gauge({
      name: "talkgate_calls_live",
      help: "Phone calls running on this worker, by carrier",
      labelNames: ["carrier", "worker"],
      registers,
      collect() {
        this.reset();
        for (const s of live.list())
          if (s.surface === "phone") this.inc({ carrier: s.carrier ?? "unknown", worker: workerId });
      },
    });
    new Gauge({
      name: "talkgate_bots_live",
      help: "Meeting bots running on this worker (their caption sessions), by platform and state",
      labelNames: ["platform", "state", "worker"],
      registers,
      collect() {
        this.reset();
        for (const s of live.list()) {
          if (s.surface !== "meeting" || s.counterpart["role"] === "assistant") continue;
          this.inc({ platform: s.platform ?? "unknown", state: s.state, worker: workerId });
        }
      },
    });
    const info = new Gauge({
      name: "talkgate_worker_info",
      help: "This worker's id (always 1)",
      labelNames: ["worker"],
      registers,
    });
    info.set({ worker: workerId }, 1);
    if (options.processMetrics !== false)
      collectDefaultMetrics({
        register: options.registry,
        eventLoopMonitoringPrecision: options.eventLoopSampleMs ?? DEFAULT_EVENT_LOOP_SAMPLE_MS,
      });
    this.joins = new MeetingJoins(options.registry);
    this.#off = options.runtime.subscribeAll((event) => this.#onEvent(event));
  }

  connected(call: ProviderCall, ms: number, ok: boolean): void {
    this.#providerConnect.observe(
      { kind: call.kind, provider: call.provider, outcome: ok ? "ok" : "error" },
      ms / 1000,
    );
  }

  call(call: ProviderCall): ProviderCallTrace {
    const started = performance.now();
    const labels = { kind: call.kind, provider: call.provider };
    return {
      first: () => {
        if (call.kind === "tts" || call.kind === "realtime")
          this.#providerFirstAudio.observe(labels, (performance.now() - started) / 1000);
      },
      end: (outcome) => {
        this.#providerResponse.observe({ ...labels, outcome }, (performance.now() - started) / 1000);
      },
    };
  }

  close(): void {
    this.#off();
    this.#surfaces.clear();
    this.#turns.clear();
    this.#speechEnds.clear();
  }

  #onEvent(event: TalkEvent): void {
    this.joins.observe(event);
    const now = performance.now();
    const sid = event.sessionId;
    switch (event.type) {
      case "session.created":
        this.#surfaces.set(sid, event.payload.metadata["surface"] ?? "unknown");
        return;
      case "session.closed":
        this.#surfaces.delete(sid);
        this.#turns.delete(sid);
        this.#speechEnds.delete(sid);
        return;
      case "latency.metrics": {
        const { name, ms } = event.payload;
        const detector =
          typeof event.payload["detector"] === "string" ? event.payload["detector"] : "unknown";
        const labels = { surface: this.#surface(sid), detector };
        if (name === "speech_end_to_first_audio") this.#speechEndToFirstAudio.observe(labels, ms / 1000);
        else if (name === "barge_in_to_clear") this.#bargeInToClear.observe(labels, ms / 1000);
        return;
      }
      case "turn.started":
        if (event.turnId) this.#turns.set(sid, { turnId: event.turnId, startedAt: now });
        return;
      case "input.audio.speech_stopped":
      case "input.audio.committed": {
        const last = this.#speechEnds.get(sid);
        if (!last || last.turnId !== event.turnId)
          this.#speechEnds.set(sid, { turnId: event.turnId, at: now });
        return;
      }
      case "transcript.done": {
        const end = this.#speechEnds.get(sid);
        if (event.payload.role !== "user" || !end || end.turnId !== event.turnId) return;
        this.#speechEnds.delete(sid);
        this.#captionLatency.observe({ surface: this.#surface(sid) }, (now - end.at) / 1000);
        return;
      }
      case "turn.ended":
      case "turn.cancelled": {
        const turn = this.#turns.get(sid);
        if (!turn || turn.turnId !== event.turnId) return;
        this.#turns.delete(sid);
        this.#turnDuration.observe(
          { surface: this.#surface(sid), outcome: event.type === "turn.ended" ? "completed" : "cancelled" },
          (now - turn.startedAt) / 1000,
        );
        return;
      }
      default:
        return;
    }
  }

  #surface(sessionId: string): string {
    return this.#surfaces.get(sessionId) ?? "unknown";
  }
}
