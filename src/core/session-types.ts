import type { TalkLogger } from "./logger.js";
import type {
  TalkEvent,
  TalkEventInitOf,
  TalkEventOf,
  TalkEventType,
  TerminalReason,
} from "./talk-events.js";
import type { AudioFormat, TalkBrain, TalkMode, TalkSessionOwner, TalkTransport } from "./talk-types.js";

/**
 * The contract between the Talk runtime (src/core) and everything above it
 * (gateway handlers, telephony and meeting adapters). Implemented by
 * session-runtime.ts. Adapters drive sessions only through these verbs.
 */

export type TalkSessionState = "active" | "closing" | "closed";

/** What a piece of work registered under a turn is, for diagnostics and the terminal event. */
export type TalkWorkKind =
  "provider-response" | "stt" | "agent-consult" | "tool" | "tts" | "output-stream" | (string & {});

/** A provider id per provider kind (stt, tts, agent, realtime). */
export type SessionProviders = Readonly<Partial<Record<"stt" | "tts" | "agent" | "realtime", string>>>;

export interface CreateSessionOptions {
  mode: TalkMode;
  transport: TalkTransport;
  brain: TalkBrain;
  owner: TalkSessionOwner;
  provider?: string;
  /**
   * The provider id per kind the session runs on (e.g. `{stt, tts, agent}`),
   * named or the defaults, as the creator resolved them: told in
   * `session.created` so a client that named none knows what it got.
   */
  providers?: SessionProviders;
  /** Input audio format the session expects from appendAudio. */
  inputFormat?: AudioFormat;
  /** Output audio format the session produces. */
  outputFormat?: AudioFormat;
  /**
   * Opaque adapter metadata (call sid, meeting id, surface name) stored for
   * diagnostics only: core never branches on it.
   */
  metadata?: Record<string, string>;
  /** Source tag stamped on events this session emits by default (e.g. "gateway"). */
  source?: string;
}

export interface TalkTurn {
  readonly id: string;
  readonly sessionId: string;
  /** Aborted when the turn is cancelled or ended with cancellation, or the session closes. */
  readonly signal: AbortSignal;
  readonly startedAt: number;
  readonly state: "active" | "ending" | "ended" | "cancelled";
}

export interface TalkCapture {
  readonly id: string;
  readonly turnId: string;
  readonly startedAt: number;
}

export interface TalkOutput {
  readonly turnId: string;
  /** Correlates provider responses / TTS jobs (envelope itemId). */
  readonly itemId: string;
  readonly startedAt: number;
  /** Aborted when output is cancelled (barge-in, cancelOutput) or the turn is cancelled. */
  readonly signal: AbortSignal;
}

/**
 * Receives every event; narrow by `event.type` to read its payload. A listener that throws is logged, never
 * breaks the emitter. `line` is the event's JSON as the session serialized it (for a listener that stores or
 * forwards it: no second JSON.stringify); absent where an emitter has none.
 */
export type TalkEventListener = (event: TalkEvent, line?: string) => void;

export interface StartTurnOptions {
  source?: string;
  /**
   * Starting a turn supersedes the previous one once it has ended. If that
   * turn still has work or output in flight it is cancelled with this reason
   * (default "superseded"), e.g. "barge_in" when speech interrupts an answer.
   */
  reason?: TerminalReason;
}

export interface TalkSessionStats {
  /** Events emitted (the same as lastSeq). */
  events: number;
  /** Output events dropped because their turn or output item was stale. */
  droppedStale: number;
  /** Events dropped because the session was already closed. */
  droppedClosed: number;
  /** Work registered through runWork that has not settled yet. */
  pendingWork: number;
}

export interface TalkSession {
  readonly id: string;
  readonly mode: TalkMode;
  readonly transport: TalkTransport;
  readonly brain: TalkBrain;
  readonly owner: TalkSessionOwner;
  readonly provider: string | undefined;
  /** CreateSessionOptions.providers (absent when the creator resolved none). */
  readonly providers?: SessionProviders;
  readonly metadata: Readonly<Record<string, string>>;
  readonly createdAt: number;
  readonly state: TalkSessionState;
  /** Aborted when the session closes; every turn signal derives from it. */
  readonly signal: AbortSignal;

  readonly activeTurn: TalkTurn | undefined;
  readonly activeCapture: TalkCapture | undefined;
  readonly activeOutput: TalkOutput | undefined;
  /** Highest seq emitted so far (0 before the first event). */
  readonly lastSeq: number;
  readonly stats: TalkSessionStats;

  /**
   * Emits an event through the sequencer; `payload` must be the type's payload
   * (TalkEventPayloads). Returns undefined when it was dropped as stale.
   */
  emit<T extends TalkEventType>(init: TalkEventInitOf<T>): TalkEventOf<T> | undefined;

  /** Starts a turn. Throws turn_already_active while a turn is still `active` (not yet ended). */
  startTurn(options?: StartTurnOptions): TalkTurn;
  /** Returns the active turn, starting one if there is none (e.g. before early speech cancellation). */
  ensureTurn(options?: StartTurnOptions): TalkTurn;
  /** Ends the turn normally. Throws stale_turn (before touching any state) when turnId is not active. */
  endTurn(turnId: string): void;
  /**
   * Cancels the turn: aborts every piece of work registered under it, drains
   * output, resets capture, emits exactly one `turn.cancelled`. Idempotent:
   * returns false when there was nothing to cancel. Throws stale_turn for a
   * turnId that is neither active nor already cancelled.
   */
  cancelTurn(turnId: string | undefined, reason: TerminalReason): boolean;
  /**
   * Stops assistant output without ending the user turn: aborts output work,
   * emits exactly one `output.audio.cancelled`. Returns false when no output was active.
   */
  cancelOutput(turnId: string | undefined, reason: TerminalReason): boolean;
  /**
   * An interruption (barge-in) stops the active output with exactly one
   * terminal event: when the output's turn still has work of its own running
   * (a tool call, an agent), the whole turn is cancelled (`turn.cancelled`,
   * the output among what it aborted), since that turn is over too; else only
   * the output (`output.audio.cancelled`) and the turn, with nothing left of
   * it, ends quietly when the next one starts. False when no output was active.
   */
  interruptOutput(reason: TerminalReason): boolean;

  startCapture(turnId?: string): TalkCapture;
  stopCapture(): void;

  /** Marks assistant output as started for the active turn. */
  beginOutput(options?: { itemId?: string; turnId?: string }): TalkOutput;
  /** Marks assistant output as finished (normally). */
  endOutput(itemId?: string): void;

  /**
   * Runs `work` under the turn's signal (or the output's, for kind "tts" and
   * "output-stream" when `scope` is "output"). Work registered after the turn
   * was cancelled never starts (rejects with `cancelled`). Pending work is
   * aborted when the turn is cancelled.
   */
  runWork<T>(
    kind: TalkWorkKind,
    work: (signal: AbortSignal) => Promise<T>,
    options?: { turnId?: string; scope?: "turn" | "output" },
  ): Promise<T>;

  /** Events with seq > afterSeq still held in the replay buffer, in order. */
  replay(afterSeq: number): { events: TalkEvent[]; complete: boolean };
  subscribe(listener: TalkEventListener): () => void;

  /** Mints a join token (plaintext returned once; only a hash is kept). */
  issueJoinToken(): string;
  verifyJoinToken(token: string): boolean;
  revokeJoinTokens(): void;

  /** Closes the session: one `session.closed`, all work aborted. Idempotent; returns the close in progress. */
  close(reason: TerminalReason, message?: string): Promise<void>;
}

export interface TalkRuntimeOptions {
  /** Events kept per session for replay (default 1000). */
  replayLimit?: number;
  /** Serialized bytes of events kept per session for replay, besides replayLimit (default 1 MiB). */
  replayMaxBytes?: number;
  /** Events older than this leave the replay ring (its newest 100 always stay), ms; 0: no age bound (default 120 000). */
  replayMaxAgeMs?: number;
  /** How long a closed session stays readable for replay/debug, ms (default 60 000). */
  closedRetentionMs?: number;
  /** Maximum concurrent sessions (default 10 000). */
  maxSessions?: number;
  /**
   * Where each session's events are kept beyond the replay ring (the composition root's JSONL files,
   * `<dataDir>/sessions/<id>.jsonl`); undefined keeps none. The model does no file I/O itself.
   */
  sessionLogs?: SessionLogStore;
  /** How long close() waits for aborted work to settle before emitting session.closed, ms (default 2000). */
  closeGraceMs?: number;
  /** Narrow structured logger (pino fits); default silent. */
  logger?: TalkLogger;
}

/** One session's durable event log: every event, as the session serialized it, then closed once. */
export interface SessionLogWriter {
  append(event: TalkEvent, line?: string): void;
  /** After session.closed: what waits is written and the log is closed. A failure is logged, never thrown. */
  close(): void;
}

/** Opens a session's durable event log (a port: the voice engine's recording/session-log.ts writes files). */
export interface SessionLogStore {
  open(sessionId: string): SessionLogWriter;
}

export interface TalkRuntime {
  createSession(options: CreateSessionOptions): TalkSession;
  getSession(sessionId: string): TalkSession | undefined;
  /** Like getSession but throws session_not_found / session_closed. */
  requireSession(sessionId: string): TalkSession;
  listSessions(): TalkSession[];
  /** Receives every event of every session (metrics, logs, cluster fan-out). */
  subscribeAll(listener: TalkEventListener): () => void;
  readonly sessionCount: number;
  close(): Promise<void>;
}
