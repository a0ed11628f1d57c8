import { randomUUID } from "node:crypto";
import { TalkError } from "./errors.js";
import { NOOP_LOGGER } from "./logger.js";
import type { TalkLogger } from "./logger.js";
import type {
  CreateSessionOptions,
  SessionLogStore,
  TalkEventListener,
  TalkRuntime,
  TalkRuntimeOptions,
  TalkSession,
} from "./session-types.js";
import { LiveTalkSession } from "./talk-session.js";
import { TALK_BRAINS, TALK_MODES, TALK_TRANSPORTS, findCombination } from "./talk-types.js";

const DEFAULTS = Object.freeze({
  replayLimit: 1000,
  replayMaxBytes: 1024 * 1024,
  // The config's default (runtime.replayMaxAgeMs): why 30 s is in config-schema.ts.
  replayMaxAgeMs: 30_000,
  closedRetentionMs: 60_000,
  maxSessions: 10_000,
  closeGraceMs: 2000,
});

interface ResolvedOptions {
  replayLimit: number;
  replayMaxBytes: number;
  replayMaxAgeMs: number;
  closedRetentionMs: number;
  maxSessions: number;
  closeGraceMs: number;
  sessionLogs: SessionLogStore | undefined;
  logger: TalkLogger;
}

function resolveOptions(options: TalkRuntimeOptions): ResolvedOptions {
  const merged: ResolvedOptions = {
    replayLimit: options.replayLimit ?? DEFAULTS.replayLimit,
    replayMaxBytes: options.replayMaxBytes ?? DEFAULTS.replayMaxBytes,
    replayMaxAgeMs: options.replayMaxAgeMs ?? DEFAULTS.replayMaxAgeMs,
    closedRetentionMs: options.closedRetentionMs ?? DEFAULTS.closedRetentionMs,
    maxSessions: options.maxSessions ?? DEFAULTS.maxSessions,
    closeGraceMs: options.closeGraceMs ?? DEFAULTS.closeGraceMs,
    sessionLogs: options.sessionLogs,
    logger: options.logger ?? NOOP_LOGGER,
  };
  const positive = ["replayLimit", "replayMaxBytes", "maxSessions"] as const;
  for (const key of positive) {
    if (!Number.isInteger(merged[key]) || merged[key] < 1) {
      throw new TalkError("config_invalid", `TalkRuntimeOptions.${key} must be a positive integer.`);
    }
  }
  for (const key of ["replayMaxAgeMs", "closedRetentionMs", "closeGraceMs"] as const) {
    if (!Number.isFinite(merged[key]) || merged[key] < 0) {
      throw new TalkError("config_invalid", `TalkRuntimeOptions.${key} must be a non-negative number.`);
    }
  }
  return merged;
}

function validateCreate(options: CreateSessionOptions): void {
  if (!TALK_MODES.includes(options.mode))
    throw new TalkError("invalid_params", `Unknown mode "${String(options.mode)}".`);
  if (!TALK_TRANSPORTS.includes(options.transport)) {
    throw new TalkError("invalid_params", `Unknown transport "${String(options.transport)}".`);
  }
  if (!TALK_BRAINS.includes(options.brain))
    throw new TalkError("invalid_params", `Unknown brain "${String(options.brain)}".`);
  const combination = findCombination(options.mode, options.transport, options.brain);
  const details = { mode: options.mode, transport: options.transport, brain: options.brain };
  if (!combination) throw new TalkError("unsupported_combination", undefined, { details });
  if (combination.owner !== options.owner) {
    // The error names the method that owns this transport, so clients can fix the call.
    throw new TalkError(
      combination.owner === "client" ? "use_talk_client_create" : "use_talk_session_create",
      undefined,
      {
        details,
      },
    );
  }
}

/**
 * The in-process Talk runtime: a map of live sessions, the per-session event
 * log, runtime-wide subscribers, and closed sessions kept readable for a
 * retention window so late reconnects can still replay.
 */
class InProcessTalkRuntime implements TalkRuntime {
  readonly #options: ResolvedOptions;
  readonly #sessions = new Map<string, LiveTalkSession>();
  readonly #retained = new Map<string, { session: LiveTalkSession; timer: NodeJS.Timeout }>();
  readonly #listeners = new Set<TalkEventListener>();
  #closePromise: Promise<void> | undefined;

  constructor(options: TalkRuntimeOptions) {
    this.#options = resolveOptions(options);
  }

  get sessionCount(): number {
    return this.#sessions.size;
  }

  createSession(options: CreateSessionOptions): TalkSession {
    if (this.#closePromise) throw new TalkError("shutting_down");
    validateCreate(options);
    if (this.#sessions.size >= this.#options.maxSessions) {
      throw new TalkError("session_limit", undefined, {
        details: { maxSessions: this.#options.maxSessions },
      });
    }
    const id = randomUUID();
    const o = this.#options;
    const log = o.sessionLogs?.open(id);
    const session: LiveTalkSession = new LiveTalkSession({
      ...options,
      id,
      replayLimit: o.replayLimit,
      replayMaxBytes: o.replayMaxBytes,
      replayMaxAgeMs: o.replayMaxAgeMs,
      closeGraceMs: o.closeGraceMs,
      logger: o.logger,
      hooks: {
        ...(log ? { log } : {}),
        onEvent: (event, line) => this.#fanOut(event, line),
        onClosed: () => this.#retire(session),
      },
    });
    this.#sessions.set(id, session);
    return session;
  }

  getSession(sessionId: string): TalkSession | undefined {
    return this.#sessions.get(sessionId) ?? this.#retained.get(sessionId)?.session;
  }

  requireSession(sessionId: string): TalkSession {
    const session = this.getSession(sessionId);
    if (!session) throw new TalkError("session_not_found", undefined, { details: { sessionId } });
    if (session.state !== "active")
      throw new TalkError("session_closed", undefined, { details: { sessionId } });
    return session;
  }

  listSessions(): TalkSession[] {
    return [...this.#sessions.values()];
  }

  subscribeAll(listener: TalkEventListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  close(): Promise<void> {
    this.#closePromise ??= this.#close();
    return this.#closePromise;
  }

  async #close(): Promise<void> {
    const closes = [...this.#sessions.values()].map((s) =>
      s
        .close("shutdown")
        .catch((err: unknown) =>
          this.#options.logger.error({ err, sessionId: s.id }, "session close failed"),
        ),
    );
    await Promise.all(closes);
    for (const { timer } of this.#retained.values()) clearTimeout(timer);
    this.#retained.clear();
    this.#listeners.clear();
  }

  #fanOut(event: Parameters<TalkEventListener>[0], line: string): void {
    for (const listener of this.#listeners) {
      try {
        listener(event, line);
      } catch (err) {
        this.#options.logger.error(
          { err, sessionId: event.sessionId, type: event.type },
          "runtime listener threw",
        );
      }
    }
  }

  #retire(session: LiveTalkSession): void {
    this.#sessions.delete(session.id);
    if (this.#options.closedRetentionMs === 0 || this.#closePromise) return;
    const timer = setTimeout(() => this.#retained.delete(session.id), this.#options.closedRetentionMs);
    timer.unref();
    this.#retained.set(session.id, { session, timer });
  }
}

/**
 * Creates the Talk runtime. Options are validated here (config_invalid); session logs, when kept, go
 * to the store the caller gives (a directory checked for writing when that store was made).
 */
export function createTalkRuntime(options: TalkRuntimeOptions = {}): TalkRuntime {
  return new InProcessTalkRuntime(options);
}
