import type { TalkEvent, TalkRuntime } from "../core/index.js";
import type {
  ProviderCall,
  ProviderCallKind,
  ProviderCallTrace,
  ProviderObserver,
} from "./provider-probe.js";

/** One provider call of a session as the console shows it; times in ms from the call's start. */
export interface ProviderTiming {
  kind: ProviderCallKind | "connect";
  provider: string;
  turnId?: string;
  /** Epoch ms when it started. */
  at: number;
  /** To the first output (audio for tts and realtime, text for agent and stt). */
  firstMs?: number;
  /** To its end (a connect: the time to open the session). */
  totalMs?: number;
  outcome?: "ok" | "error" | "cancelled";
}

/** Something that went wrong on this worker, for the operator's "recent errors". */
export interface RecentError {
  /** Epoch ms. */
  at: number;
  workerId: string;
  sessionId: string;
  surface: string;
  /** `session.error`, `tool.error`, `session.closed` (an abnormal close) or `provider` (a failed call). */
  source: string;
  code: string;
  message: string;
}

/** Provider calls remembered per session (the latest). */
const TIMINGS_PER_SESSION = 8;
/** Errors remembered per worker (the latest). */
const MAX_ERRORS = 50;
/** Close reasons that are not an operator's, a client's or a caller's ordinary end. */
const ABNORMAL_CLOSE = new Set(["error", "provider_lost", "owner_lost", "process_lost", "timeout"]);

/**
 * What an operator wants to see that the session events alone do not carry
 * across the cluster: each live session's latest provider calls (connect,
 * first output and total times, from the provider probes) and this worker's
 * latest errors (session and tool errors, abnormal closes, failed provider
 * calls), bounded. Read by the session summaries and the `listErrors`
 * worker command.
 */
export class RecentActivity implements ProviderObserver {
  readonly #workerId: string;
  readonly #timings = new Map<string, ProviderTiming[]>();
  readonly #surfaces = new Map<string, string>();
  readonly #errors: RecentError[] = [];
  readonly #off: () => void;

  constructor(runtime: TalkRuntime, workerId: string) {
    this.#workerId = workerId;
    this.#off = runtime.subscribeAll((event) => this.#observe(event));
  }

  /** The session's latest provider calls, oldest first. */
  timings(sessionId: string): ProviderTiming[] {
    return (this.#timings.get(sessionId) ?? []).map((t) => ({ ...t }));
  }

  /** This worker's latest errors, newest first. */
  errors(): RecentError[] {
    return [...this.#errors].reverse();
  }

  connected(call: ProviderCall, ms: number, ok: boolean): void {
    this.#push(call.session.id, {
      kind: "connect",
      provider: call.provider,
      at: Date.now() - Math.round(ms),
      totalMs: Math.round(ms),
      outcome: ok ? "ok" : "error",
    });
    if (!ok)
      this.#error(call.session.id, "provider", "provider_unavailable", `${call.provider}: connect failed`);
  }

  call(call: ProviderCall): ProviderCallTrace {
    const started = performance.now();
    const timing: ProviderTiming = {
      kind: call.kind,
      provider: call.provider,
      at: Date.now(),
      ...(call.turnId !== undefined ? { turnId: call.turnId } : {}),
    };
    this.#push(call.session.id, timing);
    return {
      first: () => {
        timing.firstMs = Math.round(performance.now() - started);
      },
      end: (outcome) => {
        timing.totalMs = Math.round(performance.now() - started);
        timing.outcome = outcome;
        if (outcome === "error")
          this.#error(call.session.id, "provider", "provider_error", `${call.kind} ${call.provider} failed`);
      },
    };
  }

  close(): void {
    this.#off();
    this.#timings.clear();
    this.#surfaces.clear();
  }

  #push(sessionId: string, timing: ProviderTiming): void {
    // Only sessions that are live (created and not closed) are remembered.
    const list = this.#timings.get(sessionId);
    if (!list) return;
    list.push(timing);
    if (list.length > TIMINGS_PER_SESSION) list.shift();
  }

  #error(sessionId: string, source: string, code: string, message: string): void {
    this.#errors.push({
      at: Date.now(),
      workerId: this.#workerId,
      sessionId,
      surface: this.#surfaces.get(sessionId) ?? "unknown",
      source,
      code: code.slice(0, 64),
      message: message.slice(0, 300),
    });
    if (this.#errors.length > MAX_ERRORS) this.#errors.shift();
  }

  #observe(event: TalkEvent): void {
    const sid = event.sessionId;
    switch (event.type) {
      case "session.created":
        this.#timings.set(sid, []);
        this.#surfaces.set(sid, event.payload.metadata["surface"] ?? "unknown");
        return;
      case "session.error":
        this.#error(sid, event.type, event.payload.code, event.payload.message);
        return;
      case "tool.error":
        this.#error(sid, event.type, event.payload.code, `${event.payload.name}: ${event.payload.message}`);
        return;
      case "session.closed": {
        const reason = String(event.payload.reason);
        if (ABNORMAL_CLOSE.has(reason))
          this.#error(sid, event.type, reason, event.payload.message ?? `closed: ${reason}`);
        this.#timings.delete(sid);
        this.#surfaces.delete(sid);
        return;
      }
    }
  }
}
