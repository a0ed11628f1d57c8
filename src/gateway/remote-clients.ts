import { sessionCommandHandler } from "../cluster/index.js";
import { TalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import type { TalkRuntime } from "../core/index.js";
import type { GatewayCluster } from "./gateway-deps.js";
import { LocalSessionHandle } from "./session-handle.js";
import type { SessionOwnership, SessionPeer } from "./session-owners.js";

export interface RemoteClientsOptions {
  cluster: GatewayCluster;
  runtime: TalkRuntime;
  sessions: SessionOwnership;
  logger: TalkLogger;
}

/** The id prefix of a stand-in peer: a client connected to another worker. */
const STAND_IN = "remote:";

/** Whether `peer` is the stand-in of a client on another worker (not a connection here). */
export function isStandIn(peer: SessionPeer): boolean {
  return peer.id.startsWith(STAND_IN);
}

/**
 * The owner's side of sessions driven from other workers. It answers the
 * cluster's session commands (the table in cluster/session-command.ts, parsed
 * on receipt) with the same LocalSessionHandle verbs a connection here uses,
 * on behalf of a stand-in peer per remote client (`<workerId>/<connectionId>`).
 * A remote client's worker that dies never sends `leave`: a periodic check of
 * the worker registry releases its stand-ins, which starts the reconnect grace.
 */
export class RemoteClients {
  readonly #o: RemoteClientsOptions;
  readonly #standIns = new Map<string, SessionPeer & { closed: boolean }>();
  /** Consecutive checks each remote worker was missing from the registry. */
  readonly #missing = new Map<string, number>();
  readonly #checkTimer: NodeJS.Timeout;
  readonly #off: () => void;
  #checking = false;

  constructor(options: RemoteClientsOptions) {
    this.#o = options;
    this.#checkTimer = setInterval(
      () => void this.#checkRemoteWorkers(),
      options.cluster.remoteCheckMs ?? 5000,
    );
    this.#checkTimer.unref();
    this.#off = options.cluster.onCommand(
      sessionCommandHandler({
        join: async (sessionId, { joinToken, afterSeq, peer }) => {
          const { result, events, start } = await this.#handle(sessionId, this.#standIn(peer)).join({
            joinToken,
            afterSeq,
          });
          // Events reach the remote client through the cluster stream from `result.seq`; its replay is `events`.
          start();
          return { ...result, events };
        },
        leave: (_sessionId, { peer }) => {
          // The remote connection is gone: every session it joined waits for a join (grace).
          this.#releaseStandIn(peer);
          return { left: true };
        },
        cancelTurn: (sessionId, params) =>
          params.peer === undefined
            ? this.#internal(sessionId, params, "cancelTurn")
            : this.#handle(sessionId, this.#known(params.peer)).cancelTurn(params),
        cancelOutput: (sessionId, params) =>
          params.peer === undefined
            ? this.#internal(sessionId, params, "cancelOutput")
            : this.#handle(sessionId, this.#known(params.peer)).cancelOutput(params),
        close: async (sessionId, params) => {
          if (params.peer !== undefined)
            return this.#handle(sessionId, this.#known(params.peer)).close(params);
          const owned = this.#o.sessions.get(sessionId);
          const reason = params.reason ?? "client_request";
          if (owned) await this.#o.sessions.close(owned, reason);
          else await this.#o.runtime.requireSession(sessionId).close(reason);
          return { sessionId, closed: true };
        },
      }),
    );
  }

  /** Stops answering and forgets stand-ins (server close). Idempotent. */
  close(): void {
    clearInterval(this.#checkTimer);
    this.#off();
    this.#standIns.clear();
  }

  /** A server-internal cancel (no client to check): the session's controller, or the core session. */
  #internal(
    sessionId: string,
    params: { turnId?: string; reason?: string },
    verb: "cancelTurn" | "cancelOutput",
  ): { sessionId: string; cancelled: boolean } {
    const owned = this.#o.sessions.get(sessionId);
    if (owned && owned.session.state !== "active")
      throw new TalkError("session_closed", undefined, { details: { sessionId } });
    const target = owned?.controller ?? this.#o.runtime.requireSession(sessionId);
    const reason = params.reason ?? "client_request";
    const cancelled =
      verb === "cancelTurn"
        ? target.cancelTurn(params.turnId, reason)
        : target.cancelOutput(params.turnId, reason);
    return { sessionId, cancelled };
  }

  #handle(sessionId: string, peer: SessionPeer): LocalSessionHandle {
    // Media verbs are never relayed (no audio crosses workers), so the frame limit does not apply here.
    return new LocalSessionHandle(sessionId, this.#o.sessions, peer, 0);
  }

  #standIn(key: string): SessionPeer & { closed: boolean } {
    let standIn = this.#standIns.get(key);
    if (!standIn) {
      // Events reach the remote client through the cluster stream, so this peer sends nothing itself.
      standIn = { id: `${STAND_IN}${key}`, closed: false, sendEvent: () => {} };
      this.#standIns.set(key, standIn);
    }
    return standIn;
  }

  /** The stand-in of a client that joined; an unknown one owns nothing (not_session_owner). */
  #known(key: string): SessionPeer {
    return this.#standIns.get(key) ?? { id: `${STAND_IN}${key}`, closed: true, sendEvent: () => {} };
  }

  #releaseStandIn(key: string): void {
    const standIn = this.#standIns.get(key);
    if (!standIn) return;
    standIn.closed = true;
    this.#standIns.delete(key);
    this.#o.sessions.release(standIn);
  }

  /**
   * Three misses in a row, not one: after a Redis restart workers re-register
   * within a second, and a single empty read must not start anyone's grace
   * timer. While Redis is unreachable nothing is decided.
   */
  async #checkRemoteWorkers(): Promise<void> {
    if (this.#standIns.size === 0 || this.#checking) return;
    this.#checking = true;
    try {
      const live = new Set(await this.#o.cluster.liveWorkers());
      for (const key of [...this.#standIns.keys()]) {
        const workerId = key.slice(0, key.lastIndexOf("/"));
        if (live.has(workerId)) {
          this.#missing.delete(workerId);
          continue;
        }
        const misses = (this.#missing.get(workerId) ?? 0) + 1;
        this.#missing.set(workerId, misses);
        if (misses < 3) continue;
        this.#o.logger.warn({ workerId }, "worker of a remote client is gone; its sessions wait for a join");
        this.#releaseStandIn(key);
      }
      for (const workerId of [...this.#missing.keys()]) {
        if (![...this.#standIns.keys()].some((k) => k.startsWith(`${workerId}/`)))
          this.#missing.delete(workerId);
      }
    } catch (err) {
      this.#o.logger.debug({ err }, "remote worker check skipped");
    } finally {
      this.#checking = false;
    }
  }
}
