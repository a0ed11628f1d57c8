import type { TalkEvent, TalkRuntime, TalkSession } from "../core/index.js";
import type { ProviderTiming, RecentActivity } from "./recent-activity.js";

/**
 * One live session as an operator sees it, whichever surface runs it. Built
 * on the worker that runs the session (from the session and the adapter's
 * metadata), carried as JSON to the worker that asked.
 */
export interface SessionSummary {
  sessionId: string;
  workerId: string;
  /** The adapter that created it: `phone`, `meeting`, `gateway`, ... (metadata `surface`). */
  surface: string;
  /** Phone calls: the carrier id (`twilio`, ...). */
  carrier?: string;
  /** Meeting bots: the platform id. */
  platform?: string;
  mode: string;
  transport: string;
  brain: string;
  provider?: string;
  /** Epoch ms. */
  startedAt: number;
  /**
   * The adapter's own state when it reports one (a meeting bot's
   * `joining`/`in_call`...), else the session's (`active`, `closing`).
   */
  state: string;
  /** What the session does now: `speaking` (assistant output), `listening` (a user turn), `idle`. */
  activity: "speaking" | "listening" | "idle";
  /** Who is on the other side: a call's numbers, a bot's meeting. */
  counterpart: Record<string, string>;
  /** Events emitted so far. */
  events: number;
  /** Its latest provider calls (connect, first output and total times), oldest first. */
  providers: ProviderTiming[];
}

/** Metadata keys that name the other side of a session, by surface. */
const COUNTERPART_KEYS = [
  "from",
  "to",
  "direction",
  "callSid",
  "botId",
  "botName",
  "meetingUrl",
  "role",
  "connection",
];

/**
 * The sessions of this worker as summaries: the runtime's sessions plus the
 * last adapter state each reported (`session.updated` with a `state`).
 */
export class LiveSessions {
  readonly #runtime: TalkRuntime;
  readonly #workerId: string;
  readonly #adapterState = new Map<string, string>();
  readonly #activity: RecentActivity | undefined;
  readonly #off: () => void;

  constructor(runtime: TalkRuntime, workerId: string, activity?: RecentActivity) {
    this.#runtime = runtime;
    this.#workerId = workerId;
    this.#activity = activity;
    this.#off = runtime.subscribeAll((event) => this.#observe(event));
  }

  list(): SessionSummary[] {
    return this.#runtime
      .listSessions()
      .filter((s) => s.state !== "closed")
      .map((s) => this.summary(s));
  }

  get(sessionId: string): SessionSummary | undefined {
    const session = this.#runtime.getSession(sessionId);
    return session && session.state !== "closed" ? this.summary(session) : undefined;
  }

  summary(session: TalkSession): SessionSummary {
    const meta = session.metadata;
    const counterpart: Record<string, string> = {};
    for (const key of COUNTERPART_KEYS) {
      const value = meta[key];
      if (value !== undefined) counterpart[key] = value;
    }
    return {
      sessionId: session.id,
      workerId: this.#workerId,
      surface: meta["surface"] ?? "unknown",
      ...(meta["carrier"] !== undefined ? { carrier: meta["carrier"] } : {}),
      ...(meta["platform"] !== undefined ? { platform: meta["platform"] } : {}),
      mode: session.mode,
      transport: session.transport,
      brain: session.brain,
      ...(session.provider !== undefined ? { provider: session.provider } : {}),
      startedAt: session.createdAt,
      state: session.state === "active" ? (this.#adapterState.get(session.id) ?? "active") : session.state,
      activity: session.activeOutput ? "speaking" : session.activeTurn ? "listening" : "idle",
      counterpart,
      events: session.lastSeq,
      providers: this.#activity?.timings(session.id) ?? [],
    };
  }

  close(): void {
    this.#off();
    this.#adapterState.clear();
  }

  #observe(event: TalkEvent): void {
    if (event.type === "session.updated") {
      const state = event.payload["state"];
      if (typeof state === "string") this.#adapterState.set(event.sessionId, state.slice(0, 64));
    } else if (event.type === "session.closed") {
      this.#adapterState.delete(event.sessionId);
    }
  }
}
