import { Counter, Gauge, Registry } from "prom-client";
import type { TalkRuntime } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";

/**
 * Prometheus metrics of one server. A private Registry (never prom-client's
 * global one) so several servers can live in one process, as tests do.
 * Other surfaces (telephony, meetings) may register their own metrics on
 * `registry` so `/metrics` shows them too.
 */
export class GatewayMetrics {
  readonly registry = new Registry();
  readonly sessionsTotal: Counter<"mode">;
  readonly turnsTotal: Counter<"outcome">;
  readonly eventsTotal: Counter<"family">;
  readonly rpcRequestsTotal: Counter<"method" | "outcome">;
  readonly rpcErrorsTotal: Counter<"code">;
  readonly wsConnections: Gauge;
  readonly wsClosedTotal: Counter<"code">;
  readonly slowConsumersTotal: Counter<"limit">;
  #unsubscribe: (() => void) | undefined;
  #exposition: (() => Promise<string>) | undefined;
  /** Events by family not yet added to `eventsTotal` (added when the counter is collected). */
  readonly #pendingEvents = new Map<string, number>();

  /** `queuedBytes`: reply bytes queued on every /talk socket and not read yet (the slow-reader budget's). */
  constructor(runtime: TalkRuntime, queuedBytes: () => number = () => 0) {
    const registers = [this.registry];
    new Gauge({
      name: "talkgate_sessions_active",
      help: "Talk sessions not yet closed",
      registers,
      collect() {
        this.set(runtime.listSessions().filter((s) => s.state !== "closed").length);
      },
    });
    this.sessionsTotal = new Counter({
      name: "talkgate_sessions_total",
      help: "Talk sessions created",
      labelNames: ["mode"],
      registers,
    });
    this.turnsTotal = new Counter({
      name: "talkgate_turns_total",
      help: "Turns finished, by outcome (completed, cancelled)",
      labelNames: ["outcome"],
      registers,
    });
    const pendingEvents = this.#pendingEvents;
    this.eventsTotal = new Counter({
      name: "talkgate_events_total",
      help: "talk.event envelopes emitted, by type family (session, turn, output, ...)",
      labelNames: ["family"],
      registers,
      // Counted in a plain Map per event and added to the counter when it is read (a scrape, or get()):
      // prom-client hashes the labels of every inc(), and this runs for every event of every session.
      collect() {
        for (const [family, count] of pendingEvents) this.inc({ family }, count);
        pendingEvents.clear();
      },
    });
    this.rpcRequestsTotal = new Counter({
      name: "talkgate_rpc_requests_total",
      help: "Talk API requests answered, by method and outcome (ok, error)",
      labelNames: ["method", "outcome"],
      registers,
    });
    this.rpcErrorsTotal = new Counter({
      name: "talkgate_rpc_errors_total",
      help: "Talk API error responses, by error code",
      labelNames: ["code"],
      registers,
    });
    this.wsConnections = new Gauge({
      name: "talkgate_ws_connections",
      help: "Open /talk WebSocket connections",
      registers,
    });
    this.wsClosedTotal = new Counter({
      name: "talkgate_ws_closed_total",
      help: "/talk WebSocket connections closed, by close code",
      labelNames: ["code"],
      registers,
    });
    this.slowConsumersTotal = new Counter({
      name: "talkgate_ws_slow_consumers_total",
      help: "/talk sockets cut for not reading their replies, by the bound they passed (connection, client: one token's sockets, total)",
      labelNames: ["limit"],
      registers,
    });
    new Gauge({
      name: "talkgate_ws_queued_bytes",
      help: "Reply bytes queued on /talk sockets and not yet read by their peers",
      registers,
      collect() {
        this.set(queuedBytes());
      },
    });
    this.#unsubscribe = runtime.subscribeAll((event) => this.#onEvent(event));
  }

  #onEvent(event: TalkEvent): void {
    const family = familyOf(event.type);
    this.#pendingEvents.set(family, (this.#pendingEvents.get(family) ?? 0) + 1);
    if (event.type === "session.created") this.sessionsTotal.inc({ mode: event.mode });
    else if (event.type === "turn.ended") this.turnsTotal.inc({ outcome: "completed" });
    else if (event.type === "turn.cancelled") this.turnsTotal.inc({ outcome: "cancelled" });
  }

  /** Stops listening to the runtime. Idempotent. */
  close(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  /**
   * What `/metrics` answers: this registry's text, or, when the process is one
   * of several sharing the port, the whole machine's (src/cli/worker-pool.ts):
   * a scrape lands on any worker and must not see one worker's counters.
   */
  exposition(): Promise<string> {
    return this.#exposition ? this.#exposition() : this.registry.metrics();
  }

  useExposition(source: () => Promise<string>): void {
    this.#exposition = source;
  }
}

const FAMILIES = new Map<string, string>();

/** The part of an event type before its first dot ("output.audio.delta" -> "output"), computed once per type. */
function familyOf(type: string): string {
  let family = FAMILIES.get(type);
  if (family === undefined) {
    family = type.split(".")[0] || "unknown";
    FAMILIES.set(type, family);
  }
  return family;
}
