import { randomUUID } from "node:crypto";
import { TalkError } from "../core/errors.js";
import type { TalkLogger } from "../core/logger.js";
import type { TalkRuntime } from "../core/session-types.js";
import type { TalkEvent, TerminalReason } from "../core/talk-events.js";
import type { GatewayCluster, GatewayClusterCommand } from "./gateway-deps.js";
import type { SessionOwnership, SessionPeer } from "./session-owners.js";

export interface RemoteSessionsOptions {
  cluster: GatewayCluster;
  runtime: TalkRuntime;
  sessions: SessionOwnership;
  /** How long a lost session is remembered, to answer session_closed instead of session_not_found. */
  lostRetentionMs: number;
  logger: TalkLogger;
}

/** A client here that joined a session owned by another worker. */
interface RemoteView {
  readonly sessionId: string;
  readonly peer: SessionPeer;
  /** The owner's seq right after the join: a later session.replaced means this client was displaced. */
  readonly joinSeq: number;
  readonly envelope: Pick<TalkEvent, "mode" | "transport" | "brain" | "provider">;
  delivered: number;
  unsubscribe: () => void;
}

export interface RemoteJoinResult {
  sessionId: string;
  mode: TalkEvent["mode"];
  transport: TalkEvent["transport"];
  brain: TalkEvent["brain"];
  provider?: string;
  seq: number;
  replayed: number;
  complete: boolean;
}

/**
 * The owner's answer to a join: the replay comes from its own buffer (the
 * authority, and intact even if Redis restarted empty), live events after
 * it from the cluster stream.
 */
interface OwnerJoinReply extends RemoteJoinResult {
  events: TalkEvent[];
}

const MAX_LOST = 10_000;

/**
 * Gateway sessions across workers, both sides of it.
 *
 * Caller side (this worker does not run the session): `talk.session.join`
 * with the join token is checked by the owner, which moves the session's
 * event delivery to this client; this worker then forwards the replay the
 * owner answered with (from its buffer), then live events from the cluster
 * stream, each seq once and in order.
 * cancelTurn / cancelOutput / close from that client are sent to the owner
 * and applied there under the same cancellation contract. Audio does not
 * cross workers (nothing per audio frame touches the cluster): the media
 * verbs answer invalid_state naming the owner, where the client must send them.
 *
 * Owner side: the command handler runs those verbs on the session's
 * controller, and holds a stand-in peer for each remote client that joined.
 */
export class RemoteSessions {
  readonly #o: RemoteSessionsOptions;
  readonly #views = new Map<string, RemoteView>();
  readonly #lost = new Map<string, number>();
  /** Owner side: stand-ins for remote clients, by `<workerId>/<connectionId>`. */
  readonly #stubs = new Map<string, SessionPeer & { closed: boolean }>();
  readonly #off: (() => void)[] = [];
  /** Owner side: consecutive checks each remote worker was missing from the registry. */
  readonly #missing = new Map<string, number>();
  readonly #checkTimer: NodeJS.Timeout;
  #checking = false;

  constructor(options: RemoteSessionsOptions) {
    this.#o = options;
    this.#checkTimer = setInterval(
      () => void this.#checkRemoteWorkers(),
      options.cluster.remoteCheckMs ?? 5000,
    );
    this.#checkTimer.unref();
    this.#off.push(options.cluster.onCommand((sessionId, command) => this.#apply(sessionId, command)));
    this.#off.push(options.cluster.onSessionLost((sessionId) => this.#onLost(sessionId)));
    this.#off.push(options.sessions.onRelease((peer) => this.#onPeerGone(peer)));
  }

  /** True when `sessionId` is not run here, so its verbs must go to the owner. */
  isRemote(sessionId: string): boolean {
    return this.#o.runtime.getSession(sessionId) === undefined;
  }

  /** talk.session.join for a session owned elsewhere. `start` runs after the response is sent. */
  async join(
    sessionId: string,
    joinToken: string,
    afterSeq: number,
    peer: SessionPeer,
  ): Promise<{ result: RemoteJoinResult; start: () => void }> {
    this.#assertNotLost(sessionId);
    const { events, ...result } = (await this.#o.cluster.sendCommand(sessionId, {
      verb: "join",
      params: { joinToken, afterSeq: String(afterSeq), peer: this.#peerKey(peer) },
    })) as OwnerJoinReply;
    const key = viewKey(sessionId, peer);
    this.#views.get(key)?.unsubscribe();
    const view: RemoteView = {
      sessionId,
      peer,
      joinSeq: result.seq,
      envelope: {
        mode: result.mode,
        transport: result.transport,
        brain: result.brain,
        ...(result.provider !== undefined ? { provider: result.provider } : {}),
      },
      delivered: afterSeq,
      unsubscribe: () => {},
    };
    this.#views.set(key, view);
    const start = (): void => {
      if (this.#views.get(key) !== view || peer.closed) return;
      for (const event of events) this.#forward(key, view, event);
      if (this.#views.get(key) !== view) return;
      view.unsubscribe = this.#o.cluster.subscribeEvents(sessionId, view.delivered, (event) =>
        this.#forward(key, view, event),
      );
    };
    return { result, start };
  }

  /** cancelTurn / cancelOutput / close from a client here for a session owned elsewhere. */
  async command(
    sessionId: string,
    peer: SessionPeer,
    verb: "cancelTurn" | "cancelOutput" | "close",
    params: { turnId?: string; reason?: string },
  ): Promise<unknown> {
    await this.#assertJoined(sessionId, peer);
    return this.#o.cluster.sendCommand(sessionId, {
      verb,
      params: {
        ...(params.turnId !== undefined ? { turnId: params.turnId } : {}),
        ...(params.reason !== undefined ? { reason: params.reason } : {}),
        peer: this.#peerKey(peer),
      },
    });
  }

  /** For media verbs on a remote session: the error that tells the client where the media lives. */
  async mediaElsewhere(sessionId: string, peer: SessionPeer): Promise<never> {
    await this.#assertJoined(sessionId, peer);
    const owner = await this.#o.cluster.locate(sessionId).catch(() => undefined);
    throw new TalkError(
      "invalid_state",
      "This session's media runs on another worker: send audio and turn verbs to the connection on that worker.",
      { details: { sessionId, ...(owner ? { workerId: owner.workerId } : {}) } },
    );
  }

  /** Stops forwarding and forgets stand-ins (server close). Idempotent. */
  close(): void {
    clearInterval(this.#checkTimer);
    for (const off of this.#off.splice(0)) off();
    for (const view of this.#views.values()) view.unsubscribe();
    this.#views.clear();
    this.#stubs.clear();
  }

  // --- caller side ---------------------------------------------------------

  #forward(key: string, view: RemoteView, event: TalkEvent): void {
    if (this.#views.get(key) !== view || event.seq <= view.delivered) return;
    view.delivered = event.seq;
    view.peer.sendEvent("talk.event", event, event.seq);
    // A later replacement (another client joined) or the end: nothing more for this client.
    if (event.type === "session.closed" || (event.type === "session.replaced" && event.seq > view.joinSeq)) {
      this.#drop(key, view);
    }
  }

  #drop(key: string, view: RemoteView): void {
    view.unsubscribe();
    if (this.#views.get(key) === view) this.#views.delete(key);
  }

  async #assertJoined(sessionId: string, peer: SessionPeer): Promise<void> {
    this.#assertNotLost(sessionId);
    if (this.#views.has(viewKey(sessionId, peer))) return;
    const owner = await this.#o.cluster.locate(sessionId);
    if (!owner) throw new TalkError("session_not_found", undefined, { details: { sessionId } });
    throw new TalkError(
      "not_session_owner",
      "Join the session (talk.session.join) before driving it from this worker.",
      {
        details: { sessionId },
      },
    );
  }

  #assertNotLost(sessionId: string): void {
    const until = this.#lost.get(sessionId);
    if (until !== undefined && until > Date.now()) {
      throw new TalkError("session_closed", "The session's worker was lost.", {
        details: { sessionId, reason: "owner_lost" },
      });
    }
  }

  /** The owner died: every client here that joined it gets one session.closed (owner_lost); its join state is gone. */
  #onLost(sessionId: string): void {
    if (this.#lost.size >= MAX_LOST) {
      const now = Date.now();
      for (const [id, until] of this.#lost)
        if (until <= now || this.#lost.size >= MAX_LOST) this.#lost.delete(id);
    }
    this.#lost.set(sessionId, Date.now() + this.#o.lostRetentionMs);
    for (const [key, view] of [...this.#views]) {
      if (view.sessionId !== sessionId) continue;
      this.#drop(key, view);
      const closed: TalkEvent = {
        id: randomUUID(),
        type: "session.closed",
        sessionId,
        seq: view.delivered + 1,
        timestamp: new Date().toISOString(),
        ...view.envelope,
        source: "cluster",
        payload: { reason: "owner_lost", message: "The worker running the session was lost." },
      };
      view.peer.sendEvent("talk.event", closed, closed.seq);
    }
  }

  /** A connection here closed: owners of the sessions it joined start their reconnect grace. */
  #onPeerGone(peer: SessionPeer): void {
    const key = this.#stubKeyOf(peer);
    if (key !== undefined) return; // a stand-in being released on the owner side
    for (const [k, view] of [...this.#views]) {
      if (view.peer !== peer) continue;
      this.#drop(k, view);
      void this.#o.cluster
        .sendCommand(view.sessionId, { verb: "leave", params: { peer: this.#peerKey(peer) } })
        .catch((err: unknown) =>
          this.#o.logger.debug({ err, sessionId: view.sessionId }, "remote leave failed"),
        );
    }
  }

  #peerKey(peer: SessionPeer): string {
    return `${this.#o.cluster.workerId}/${peer.id}`;
  }

  // --- owner side ----------------------------------------------------------

  async #apply(sessionId: string, command: GatewayClusterCommand): Promise<unknown> {
    const params = command.params ?? {};
    const reason = (params.reason ?? "client_request") as TerminalReason;
    const owned = this.#o.sessions.get(sessionId);
    switch (command.verb) {
      case "join": {
        if (params.peer === undefined || params.joinToken === undefined)
          throw new TalkError("invalid_params", "join needs peer and joinToken.");
        const afterSeq = Number(params.afterSeq ?? "0");
        const stub = this.#stub(params.peer);
        const entry = this.#o.sessions.join(sessionId, params.joinToken, stub);
        const { events, complete } = entry.session.replay(afterSeq);
        this.#o.sessions.goLive(entry, stub, afterSeq);
        const session = entry.session;
        const seq = session.lastSeq;
        if (session.state === "active")
          session.emit({ type: "session.ready", payload: { reason: "joined" }, source: "gateway" });
        return {
          sessionId,
          mode: session.mode,
          transport: session.transport,
          brain: session.brain,
          ...(session.provider !== undefined ? { provider: session.provider } : {}),
          seq,
          replayed: events.length,
          complete,
          events,
        } satisfies OwnerJoinReply;
      }
      case "leave": {
        // The remote connection is gone: every session it joined waits for a join (grace).
        const stub = params.peer === undefined ? undefined : this.#stubs.get(params.peer);
        if (stub) {
          stub.closed = true;
          this.#stubs.delete(params.peer as string);
          this.#o.sessions.release(stub);
        }
        return { left: true };
      }
      case "cancelTurn":
      case "cancelOutput":
      case "close": {
        if (
          params.peer !== undefined &&
          (!owned || this.#o.sessions.ownerOf(sessionId) !== this.#stubs.get(params.peer))
        ) {
          const session = this.#o.runtime.getSession(sessionId);
          if (session && session.state !== "active")
            throw new TalkError("session_closed", undefined, { details: { sessionId } });
          throw new TalkError("not_session_owner", undefined, { details: { sessionId } });
        }
        if (command.verb === "close") {
          if (owned) await this.#o.sessions.close(owned, reason);
          else await this.#o.runtime.requireSession(sessionId).close(reason, params.message);
          return { sessionId, closed: true };
        }
        if (owned && owned.session.state !== "active")
          throw new TalkError("session_closed", undefined, { details: { sessionId } });
        const target = owned?.controller ?? this.#o.runtime.requireSession(sessionId);
        const cancelled =
          command.verb === "cancelTurn"
            ? target.cancelTurn(params.turnId, reason)
            : target.cancelOutput(params.turnId, reason);
        return { sessionId, cancelled };
      }
      default:
        throw new TalkError(
          "invalid_params",
          `Unknown session command ${String((command as { verb: unknown }).verb)}.`,
        );
    }
  }

  /**
   * A remote client's worker that died never sends `leave`. Three misses in
   * a row, not one: after a Redis restart workers re-register within a
   * second, and a single empty read must not start anyone's grace timer.
   * While Redis is unreachable nothing is decided.
   */
  async #checkRemoteWorkers(): Promise<void> {
    if (this.#stubs.size === 0 || this.#checking) return;
    this.#checking = true;
    try {
      const live = new Set(await this.#o.cluster.liveWorkers());
      for (const [key, stub] of [...this.#stubs]) {
        const workerId = key.slice(0, key.lastIndexOf("/"));
        if (live.has(workerId)) {
          this.#missing.delete(workerId);
          continue;
        }
        const misses = (this.#missing.get(workerId) ?? 0) + 1;
        this.#missing.set(workerId, misses);
        if (misses < 3) continue;
        this.#o.logger.warn({ workerId }, "worker of a remote client is gone; its sessions wait for a join");
        stub.closed = true;
        this.#stubs.delete(key);
        this.#o.sessions.release(stub);
      }
      for (const workerId of [...this.#missing.keys()]) {
        if (![...this.#stubs.keys()].some((k) => k.startsWith(`${workerId}/`)))
          this.#missing.delete(workerId);
      }
    } catch (err) {
      this.#o.logger.debug({ err }, "remote worker check skipped");
    } finally {
      this.#checking = false;
    }
  }

  #stub(key: string): SessionPeer & { closed: boolean } {
    let stub = this.#stubs.get(key);
    if (!stub) {
      // Events reach the remote client through the cluster stream, so this peer sends nothing itself.
      stub = { id: `remote:${key}`, closed: false, sendEvent: () => {} };
      this.#stubs.set(key, stub);
    }
    return stub;
  }

  #stubKeyOf(peer: SessionPeer): string | undefined {
    return peer.id.startsWith("remote:") ? peer.id.slice("remote:".length) : undefined;
  }
}

function viewKey(sessionId: string, peer: SessionPeer): string {
  return `${sessionId}\u0000${peer.id}`;
}
