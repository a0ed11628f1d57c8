import type { Logger } from "pino";
import type {
  SessionCommand,
  SessionCommandHandler,
  SessionCommandOf,
  SessionCommandResult,
  SessionCommandVerb,
} from "../cluster/index.js";
import type { TalkSessionController } from "../voice/index.js";
import type { AudioChunk, ClientSessionGrant } from "../core/index.js";
import type { SessionProviders, TalkRuntime, TalkSession } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";
import type { ToolCallOutcome } from "../core/index.js";
import type { AudioFormat, TalkBrain, TalkMode, TalkTransport } from "../core/index.js";
import type { RealtimeReplyPath, RealtimeToolDefinition } from "../core/index.js";

/**
 * What the Gateway needs from the rest of the process. The composition root
 * (src/app.ts) fills it; every member is a narrow function so the Gateway
 * never reaches into provider registries, config files or tool tables.
 */
export interface GatewayDeps {
  /** The Talk runtime that owns session records, events and replay. */
  runtime: TalkRuntime;

  /**
   * `talk.realtime.mode` / `.transport` / `.brain`: what `talk.session.create`
   * and `talk.client.create` use for a field the request leaves out, where
   * the method can create that shape (session-shape.ts). Unset: built-ins.
   */
  sessionDefaults?: { mode?: TalkMode; transport?: TalkTransport; brain?: TalkBrain };

  /** `talk.catalog`: capabilities built from provider declarations (core's catalog builder). */
  catalog(): unknown | Promise<unknown>;

  /**
   * `talk.config`: the effective Talk config. Redaction is the config module's
   * job; the Gateway only says whether the caller holds the `admin` scope.
   */
  effectiveConfig(options: { admin: boolean }): unknown | Promise<unknown>;

  /**
   * `talk.speak`: one-shot TTS through the resolved TTS provider. Aborting
   * `signal` (caller disconnected, server closing) must stop synthesis.
   */
  speak(request: SpeakRequest, signal: AbortSignal): AsyncIterable<AudioChunk>;

  /**
   * `talk.session.create`: builds the controller that drives a Gateway-owned
   * session (pipelines' createSessionController with resolved providers).
   * The Gateway sets the audio sink and closes the controller.
   */
  createController(session: TalkSession, options: ControllerRequest): Promise<TalkSessionController>;

  /**
   * `talk.session.create`, before the session exists: refuses (`invalid_params`
   * naming the field) a `provider` no provider of the mode's kinds has, and a
   * `voice` or `model` no provider of the session would take. Optional: without
   * it the request is not checked beyond its schema.
   */
  checkSession?(request: SessionCheckRequest): void;

  /**
   * `talk.session.create`, after the check: the provider id per kind a session
   * of this shape runs on (the named one, else the defaults), told in the
   * create response and `session.created`. Optional: without it nothing is told.
   */
  sessionProviders?(request: SessionProvidersRequest): SessionProviders;

  /**
   * `talk.client.create`: resolves the realtime provider that declares
   * `clientSessions` and mints a short-lived grant with instructions and tools
   * built from trusted config (never from request params).
   */
  createClientSession(request: ClientSessionMintRequest): Promise<ClientSessionMint>;

  /** `talk.client.toolCall`: runs one provider tool call under Gateway tool policy. */
  tools: GatewayToolDispatcher;

  /** `GET /readyz`: providers and coordinator. Must not throw. */
  readiness(): Promise<ReadinessReport>;

  /** Structured logger; Fastify logs through it too. Default: silent. */
  logger?: Logger;

  /**
   * The cluster, when sessions can live on other workers. Unset: one
   * process, every session is local. The composition root fills it from
   * the coordinator; the Gateway never sees the backend.
   */
  cluster?: GatewayCluster;
}

/**
 * The cross-worker commands, from the one table in cluster/session-command.ts
 * (verb -> params schema, result type): the Gateway sends them and, on the
 * owner, answers them with its session handles.
 */
export type GatewayClusterVerb = SessionCommandVerb;
export type GatewayClusterCommand = SessionCommand;

/**
 * The narrow view of the cluster coordinator the Gateway needs: route a verb
 * to a session's owner, answer verbs for sessions owned here, read a remote
 * session's events from a seq, learn that a session's owner was lost.
 */
export interface GatewayCluster {
  readonly workerId: string;
  /** Settles when the new session's directory claim does (rejects e.g. shutting_down). */
  claimed(sessionId: string): Promise<void>;
  /**
   * Resolves with the owner's answer, typed by the verb; rejects
   * session_not_found, owner_unreachable, the owner's error, or cancelled
   * when `signal` (the caller's) aborts first: the wait and its pending entry end there.
   */
  sendCommand<V extends SessionCommandVerb>(
    sessionId: string,
    command: SessionCommandOf<V>,
    options?: { signal?: AbortSignal },
  ): Promise<SessionCommandResult<V>>;
  /** Installs the handler for verbs addressed to sessions owned here (commands arrive parsed); returns its removal. */
  onCommand(handler: SessionCommandHandler): () => void;
  /** Events of any worker's session with seq > afterSeq, in order, with replay; returns the unsubscribe. */
  subscribeEvents(sessionId: string, afterSeq: number, listener: (event: TalkEvent) => void): () => void;
  /** The worker owning a session, if any. */
  locate(sessionId: string): Promise<{ workerId: string } | undefined>;
  /** A session's owner stopped renewing its lease (it died): every worker hears it. */
  onSessionLost(listener: (sessionId: string) => void): () => void;
  /** Ids of live workers (registry); rejects while the backend is unreachable. */
  liveWorkers(): Promise<string[]>;
  /**
   * How often an owner checks that the workers of remote clients that joined
   * its sessions are alive, ms (default 5000). A worker missing from three
   * checks in a row counts as gone: its clients' sessions start the
   * reconnect grace, as after a local disconnect.
   */
  remoteCheckMs?: number;
}

export interface SpeakRequest {
  text: string;
  voice?: string;
  speed?: number;
  format?: AudioFormat;
}

export interface SessionProvidersRequest {
  mode: TalkMode;
  brain: TalkBrain;
  provider?: string;
}

export interface SessionCheckRequest {
  mode: TalkMode;
  provider?: string;
  voice?: string;
  model?: string;
  /** Realtime: the reply path asked for (seed 003). */
  replyPath?: RealtimeReplyPath;
}

export interface ControllerRequest {
  /** Client-completed tools (checked), offered to the provider beside the server's. */
  clientTools?: RealtimeToolDefinition[];
  model?: string;
  voice?: string;
  inputFormat?: AudioFormat;
  outputFormat?: AudioFormat;
  /** Realtime: the reply path, latched for the session; default agent.realtime.replyPath. */
  replyPath?: RealtimeReplyPath;
}

export interface ClientSessionMintRequest {
  mode: TalkMode;
  transport: TalkTransport;
  brain: TalkBrain;
  provider?: string;
  model?: string;
  voice?: string;
  /** Aborted when the caller disconnects or the server closes. */
  signal: AbortSignal;
}

export interface ClientSessionMint {
  /** Id of the provider that minted the grant. */
  provider: string;
  grant: ClientSessionGrant;
  /** Names of the tools declared to the provider. */
  tools: string[];
}

/** A provider tool call as the Gateway hands it to core's tool dispatcher. */
export interface GatewayToolCall {
  name: string;
  argumentsJson: string;
  callId: string;
  /** The turn the call runs under (the Gateway ensures one for client-owned sessions). */
  turnId: string;
  /** Aborts this call alone (the requesting connection's signal). */
  signal?: AbortSignal;
  /** Runs beside the session's other calls, bounded per session (`rate_limited` beyond). */
  parallel?: boolean;
}

/**
 * Core's ToolDispatcher satisfies this: it checks policy (including
 * brain "none"), emits tool.call and exactly one terminal tool event, and
 * runs the tool under the turn's signal, so closing the session aborts it.
 */
export interface GatewayToolDispatcher {
  dispatch(session: TalkSession, request: GatewayToolCall): Promise<ToolCallOutcome>;
  /** Aborts one open call of a session (`tool.cancelled` with `reason`); false when none is open. */
  cancelCall(sessionId: string, callId: string, reason?: string): boolean;
  /** Checks a session's declared client-completed tools (`invalid_params` naming the field). */
  checkClientTools(session: TalkSession, value: unknown): RealtimeToolDefinition[];
}

export interface ReadinessReport {
  ok: boolean;
  checks: Record<string, { ok: boolean; detail?: string }>;
}
