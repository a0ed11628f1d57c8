import { context, type Span, SpanStatusCode, trace, type Tracer } from "@opentelemetry/api";
import type { TalkEvent, TalkRuntime } from "../core/index.js";
import type { ProviderCall, ProviderCallTrace, ProviderObserver } from "./provider-probe.js";
import { traceIds } from "./trace-log.js";

/** What a session's root span is called, by surface. */
const ROOT_NAMES: Record<string, string> = { phone: "talkgate.call", meeting: "talkgate.bot" };

interface SessionSpans {
  root: Span;
  /**
   * The current turn's span. It outlives `turn.ended` (the user's input is
   * complete; the answer is produced under the same turn) and ends with the
   * turn's first answer done or cancelled, the turn's cancellation, the next
   * turn, or the session's close.
   */
  turn: { id: string; span: Span; inputEnded: boolean } | undefined;
}

/**
 * The span tree of every session: one root span per session (a call, a bot,
 * a Talk API session), a child per turn, and under the turn a child per
 * provider call (STT stream, agent consult, TTS synthesis, realtime
 * response); opening a realtime provider session is a child of the root.
 * Built from the session events every surface emits and the providers'
 * calls (provider-probe.ts), with explicit parents: nothing depends on
 * async context. Each session's trace and span ids are published for log
 * lines (trace-log.ts).
 */
export class SessionTracer implements ProviderObserver {
  readonly #tracer: Tracer;
  readonly #workerId: string;
  readonly #sessions = new Map<string, SessionSpans>();
  /** The keys each session's ids are published under for log lines (session id, call sid, bot id). */
  readonly #logKeys = new Map<string, string[]>();
  readonly #off: () => void;

  constructor(tracer: Tracer, runtime: TalkRuntime, workerId: string) {
    this.#tracer = tracer;
    this.#workerId = workerId;
    this.#off = runtime.subscribeAll((event) => this.#onEvent(event));
  }

  connected(call: ProviderCall, ms: number, ok: boolean): void {
    const parent = this.#sessions.get(call.session.id);
    if (!parent) return;
    const end = Date.now();
    const span = this.#tracer.startSpan(
      "talkgate.provider.connect",
      {
        startTime: end - ms,
        attributes: { "talkgate.provider.kind": call.kind, "talkgate.provider.id": call.provider },
      },
      trace.setSpan(context.active(), parent.root),
    );
    if (!ok) span.setStatus({ code: SpanStatusCode.ERROR, message: "connect failed" });
    span.end(end);
  }

  call(call: ProviderCall): ProviderCallTrace {
    const spans = this.#sessions.get(call.session.id);
    if (!spans) return { first: () => {}, end: () => {} };
    const parent =
      spans.turn && (call.turnId === undefined || call.turnId === spans.turn.id)
        ? spans.turn.span
        : spans.root;
    const span = this.#tracer.startSpan(
      `talkgate.${call.kind}`,
      {
        attributes: {
          "talkgate.provider.kind": call.kind,
          "talkgate.provider.id": call.provider,
          ...(call.turnId !== undefined ? { "talkgate.turn_id": call.turnId } : {}),
        },
      },
      trace.setSpan(context.active(), parent),
    );
    return {
      first: () =>
        span.addEvent(call.kind === "agent" || call.kind === "stt" ? "first_output" : "first_audio"),
      end: (outcome, units) => {
        span.setAttribute("talkgate.outcome", outcome);
        if (units?.sttSeconds !== undefined)
          span.setAttribute("talkgate.stt.audio_seconds", units.sttSeconds);
        if (units?.ttsCharacters !== undefined)
          span.setAttribute("talkgate.tts.characters", units.ttsCharacters);
        if (outcome === "error") span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      },
    };
  }

  /** Ends every open span (the process is closing). */
  close(): void {
    this.#off();
    for (const [sessionId, spans] of this.#sessions) {
      spans.turn?.span.end();
      spans.root.setAttribute("talkgate.close_reason", "shutdown");
      spans.root.end();
      for (const key of this.#logKeys.get(sessionId) ?? []) traceIds.delete(key);
    }
    this.#sessions.clear();
    this.#logKeys.clear();
  }

  #forgetLater(sessionId: string): void {
    const keys = this.#logKeys.get(sessionId) ?? [];
    this.#logKeys.delete(sessionId);
    setTimeout(() => {
      for (const key of keys) traceIds.delete(key);
    }, 5000).unref();
  }

  #onEvent(event: TalkEvent): void {
    const sid = event.sessionId;
    if (event.type === "session.created") {
      const meta = event.payload.metadata;
      const surface = meta["surface"] ?? "session";
      const root = this.#tracer.startSpan(ROOT_NAMES[surface] ?? "talkgate.session", {
        root: true,
        attributes: {
          "talkgate.session_id": sid,
          "talkgate.surface": surface,
          "talkgate.mode": event.mode,
          "talkgate.transport": event.transport,
          "talkgate.worker": this.#workerId,
          ...(meta["carrier"] !== undefined ? { "talkgate.carrier": meta["carrier"] } : {}),
          ...(meta["platform"] !== undefined ? { "talkgate.platform": meta["platform"] } : {}),
          ...(meta["callSid"] !== undefined ? { "talkgate.call_sid": meta["callSid"] } : {}),
          ...(meta["botId"] !== undefined ? { "talkgate.bot_id": meta["botId"] } : {}),
        },
      });
      this.#sessions.set(sid, { root, turn: undefined });
      const ctx = root.spanContext();
      const ids = { traceId: ctx.traceId, spanId: ctx.spanId };
      const keys = [sid, meta["callSid"], meta["botId"]].filter((k): k is string => k !== undefined);
      for (const key of keys) traceIds.set(key, ids);
      this.#logKeys.set(sid, keys);
      return;
    }
    const spans = this.#sessions.get(sid);
    if (!spans) return;
    switch (event.type) {
      case "turn.started": {
        spans.turn?.span.end();
        spans.turn = undefined;
        if (!event.turnId) return;
        const span = this.#tracer.startSpan(
          "talkgate.turn",
          { attributes: { "talkgate.turn_id": event.turnId, ...sourceOf(event) } },
          trace.setSpan(context.active(), spans.root),
        );
        spans.turn = { id: event.turnId, span, inputEnded: false };
        return;
      }
      case "turn.ended": {
        if (!spans.turn || spans.turn.id !== event.turnId) return;
        spans.turn.inputEnded = true;
        spans.turn.span.setAttribute("talkgate.outcome", "completed");
        spans.turn.span.addEvent("input_ended", { reason: String(event.payload.reason) });
        return;
      }
      case "turn.cancelled": {
        if (!spans.turn || spans.turn.id !== event.turnId) return;
        spans.turn.span.setAttribute("talkgate.outcome", "cancelled");
        spans.turn.span.setAttribute("talkgate.reason", String(event.payload.reason));
        spans.turn.span.end();
        spans.turn = undefined;
        return;
      }
      case "output.audio.done":
      case "output.audio.cancelled": {
        const turn = spans.turn;
        if (event.type === "output.audio.cancelled")
          (turn?.span ?? spans.root).addEvent("output_cancelled", { reason: String(event.payload.reason) });
        if (turn && turn.id === event.turnId && turn.inputEnded) {
          turn.span.end();
          spans.turn = undefined;
        }
        return;
      }
      case "latency.metrics":
        (spans.turn?.span ?? spans.root).addEvent(event.payload.name, { ms: event.payload.ms });
        return;
      case "session.error":
        spans.root.addEvent("session_error", { code: event.payload.code });
        return;
      case "session.closed":
        spans.turn?.span.end();
        spans.root.setAttribute("talkgate.close_reason", String(event.payload.reason));
        if (event.payload.reason === "error") spans.root.setStatus({ code: SpanStatusCode.ERROR });
        spans.root.end();
        this.#sessions.delete(sid);
        // Log lines of the session's last moments (its close) still carry the ids; dropped a little later.
        this.#forgetLater(sid);
        return;
      default:
        return;
    }
  }
}

function sourceOf(event: TalkEvent): Record<string, string> {
  const source = event.type === "turn.started" ? event.payload.source : undefined;
  return source !== undefined ? { "talkgate.turn_source": source } : {};
}
