import type { TalkEvent } from "../core/index.js";
import type {
  SessionCommandHandler,
  SessionCommandOf,
  SessionCommandResult,
  SessionCommandVerb,
} from "./session-command.js";
import type { OneTimeClaims } from "./one-time-claims.js";
import type {
  WorkerCommandHandlers,
  WorkerCommandOf,
  WorkerCommandResult,
  WorkerCommandVerb,
} from "./worker-command.js";
import type { SharedSettings } from "./shared-settings.js";

// The command table (verb -> params schema, result type) is session-command.ts; its types are part of this contract.
export type {
  CommandReply,
  JoinReply,
  ParsedSessionCommand,
  ParsedSessionCommandParams,
  SessionCommand,
  SessionCommandHandler,
  SessionCommandHandlers,
  SessionCommandOf,
  SessionCommandParams,
  SessionCommandResult,
  SessionCommandVerb,
} from "./session-command.js";
export type {
  WorkerCommandHandlers,
  WorkerCommandOf,
  WorkerCommandResult,
  WorkerCommandVerb,
} from "./worker-command.js";

/**
 * The Coordinator is how one worker process or many look the same to core and
 * the adapters. Two implementations share these semantics: the embedded
 * in-process one (the default, no Redis) and the Redis one (ioredis). Code
 * above this layer is written once against this interface.
 *
 * Nothing here is on the media path: no method is called per audio frame, and
 * a caller never awaits Redis to keep a call's audio flowing.
 */

/** Lifecycle of the coordinator object itself. */
export type CoordinatorState = "starting" | "ready" | "closing" | "closed";

/** What the worker advertises to placement: `draining` takes no new sessions or jobs. */
export type WorkerState = "ready" | "draining";

/** Roles a worker can run; placement only considers workers with the role a job needs. */
export type WorkerRole = "media" | "bot" | (string & {});

export interface WorkerLoad {
  /** Sessions this worker holds leases for. */
  sessions: number;
  /** Process CPU use over the last heartbeat interval, 0..1 of the machine's cores. */
  cpu: number;
}

export interface WorkerInfo {
  id: string;
  roles: readonly WorkerRole[];
  state: WorkerState;
  load: WorkerLoad;
  /** Sessions the worker accepts before placement treats it as full. */
  maxSessions: number;
  /** Epoch ms of the worker's last heartbeat. */
  heartbeatAt: number;
  startedAt: number;
}

export interface ClaimOptions {
  /** Lease time-to-live in seconds (default: the coordinator's leaseTtlSec). */
  ttlSec?: number;
  signal?: AbortSignal;
}

export interface SessionClaim {
  workerId: string;
  /**
   * False when the directory could not be written right now (Redis is down):
   * the session runs locally and the lease is written as soon as Redis
   * returns. Local media never waits for the directory.
   */
  synced: boolean;
}

export interface SessionLocation {
  workerId: string;
}

export interface SendCommandOptions {
  /** How long to wait for the owner's answer before owner_unreachable, ms (default 2000). */
  timeoutMs?: number;
  /**
   * The caller's signal: when it aborts, the call stops waiting, rejects with
   * `cancelled` and its pending reply entry is released. A command already
   * delivered is not recalled (cancel verbs are idempotent on the owner).
   */
  signal?: AbortSignal;
}

export interface SubscribeEventsOptions {
  signal?: AbortSignal;
}

export type SessionEventListener = (event: TalkEvent) => void;

export interface ReadyReport {
  ok: boolean;
  detail: {
    state: CoordinatorState;
    workerId: string;
    workerState: WorkerState;
    backend: "in-process" | "redis";
    /** Redis connectivity; "n/a" in-process. */
    redis: "ready" | "reconnecting" | "n/a";
    sessions: number;
  };
}

/** A lease this worker held is gone: the session must be closed here (reason owner_lost). */
export interface LeaseLostEvent {
  type: "lease-lost";
  sessionId: string;
  /** Why: swept after it lapsed, or another worker holds it now. */
  reason: "lapsed" | "taken";
  at: number;
}

/** A session's owner stopped renewing its lease; seen by every worker. */
export interface SessionLostEvent {
  type: "session-lost";
  sessionId: string;
  workerId: string;
  at: number;
}

/** The backend connection changed (Redis down or back). */
export interface ConnectionEvent {
  type: "connection";
  status: "ready" | "reconnecting";
  at: number;
}

export interface CoordinatorEvents {
  "lease-lost": LeaseLostEvent;
  "session-lost": SessionLostEvent;
  connection: ConnectionEvent;
}

export interface Coordinator {
  readonly workerId: string;
  readonly roles: readonly WorkerRole[];
  readonly backend: "in-process" | "redis";
  readonly state: CoordinatorState;
  readonly workerState: WorkerState;
  /** Sessions this worker currently owns (claimed and not released or lost). */
  readonly ownedSessions: number;

  /** Resolves once the coordinator is ready (connections up, worker registered). */
  start(signal?: AbortSignal): Promise<void>;

  // --- worker registry -----------------------------------------------------
  /** Marks this worker draining (or ready again): placement skips draining workers. */
  setWorkerState(state: WorkerState): Promise<void>;
  /** Live workers (heartbeat not expired), this one included. */
  listWorkers(signal?: AbortSignal): Promise<WorkerInfo[]>;

  // --- session directory ---------------------------------------------------
  /**
   * Claims a session for this worker with a lease the coordinator renews until
   * release(). Throws shutting_down while draining, invalid_state when another
   * worker holds it. Claiming a session already held here is a no-op.
   */
  claim(sessionId: string, options?: ClaimOptions): Promise<SessionClaim>;
  /** Which worker owns the session, or undefined (never claimed, released, or lapsed). */
  locate(sessionId: string, signal?: AbortSignal): Promise<SessionLocation | undefined>;
  /** Releases a session held here (a no-op otherwise). No session-lost is emitted for it. */
  release(sessionId: string): Promise<void>;
  /** Whether this worker holds the session (local, never touches the backend). */
  owns(sessionId: string): boolean;

  // --- command bus ---------------------------------------------------------
  /**
   * Delivers a command to the session's owner (this worker included) and
   * resolves with the handler's value. Rejects with a TalkError:
   * session_not_found (no owner), owner_unreachable (no answer within
   * timeoutMs, or the backend is down), or the code the handler threw.
   */
  sendCommand<V extends SessionCommandVerb>(
    sessionId: string,
    command: SessionCommandOf<V>,
    options?: SendCommandOptions,
  ): Promise<SessionCommandResult<V>>;
  /**
   * Installs the handler for commands to sessions owned here; it receives
   * commands already parsed against the table (a malformed one is answered
   * invalid_params / invalid_request and never reaches it). One handler;
   * returns its removal.
   */
  onCommand(handler: SessionCommandHandler): () => void;
  /**
   * Delivers a worker command (worker-command.ts: listSessions, drain) to
   * `workerId` (this worker included) and resolves with its answer. Rejects
   * owner_unreachable (not connected, no answer within timeoutMs, backend
   * down), capability_unsupported (no handlers installed there), or the
   * handler's error.
   */
  sendWorkerCommand<V extends WorkerCommandVerb>(
    workerId: string,
    command: WorkerCommandOf<V>,
    options?: SendCommandOptions,
  ): Promise<WorkerCommandResult<V>>;
  /**
   * Installs this worker's handlers for some worker commands (each layer its
   * own verbs; a verb already handled is invalid_state); returns their removal.
   */
  onWorkerCommand(handlers: Partial<WorkerCommandHandlers>): () => void;

  // --- event fan-out -------------------------------------------------------
  /**
   * Publishes an event of a session owned here. Never blocks and never throws
   * for backend trouble: events are batched and, while Redis is down, held
   * (bounded) and sent when it returns. `line`: the event's JSON when the
   * caller has it (the session serialized it once; it is not serialized again).
   */
  publishEvent(event: TalkEvent, line?: string): void;
  /**
   * Delivers the session's events with seq > afterSeq, in order, to the
   * listener, from any worker; after a reconnect it resumes after the last
   * delivered seq (no gap within the retention). Returns the unsubscribe.
   */
  subscribeEvents(
    sessionId: string,
    afterSeq: number,
    listener: SessionEventListener,
    options?: SubscribeEventsOptions,
  ): () => void;

  // --- shared settings -----------------------------------------------------
  /**
   * Small JSON settings every worker agrees on (shared-settings.ts): stored
   * in Redis with the Redis backend, in the hub (and its settings directory)
   * in-process; every worker hears each change once.
   */
  readonly settings: SharedSettings;

  /**
   * Single-use keys and shared secrets every worker agrees on
   * (one-time-claims.ts): Redis keys with the Redis backend, this process's
   * memory in-process.
   */
  readonly claims: OneTimeClaims;

  // --- notifications, health, lifecycle -------------------------------------
  on<K extends keyof CoordinatorEvents>(type: K, listener: (event: CoordinatorEvents[K]) => void): () => void;
  /** For /readyz: ok while ready and not draining. A Redis outage alone does not fail readiness (see docs/cluster.md). */
  ready(): ReadyReport;
  /** Releases owned sessions, deregisters, closes connections. Idempotent: returns the close in progress. */
  close(): Promise<void>;
}
