import { randomUUID } from "node:crypto";
import { TalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import type { TalkRuntime } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";
import type { SessionCommandOf, SessionCommandParams, SessionCommandResult } from "../cluster/index.js";
import type { GatewayCluster } from "./gateway-deps.js";
import type { TalkParsedParams } from "./protocol/talk-methods.js";
import { isStandIn, RemoteClients } from "./remote-clients.js";
import type { JoinOutcome, SessionHandle } from "./session-handle.js";
import type { SessionOwnership, SessionPeer } from "./session-owners.js";

export interface RemoteSessionsOptions {
  cluster: GatewayCluster;
  runtime: TalkRuntime;
  sessions: SessionOwnership;
  /** How long a lost session is remembered, to answer session_closed instead of session_not_found. */
  lostRetentionMs: number;
  logger: TalkLogger;
}

/** The caller of a verb on a remote session: its connection here, and its signal (aborted when it closes). */
export interface RemoteCaller extends SessionPeer {
  readonly signal: AbortSignal;
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

const MAX_LOST = 10_000;

/**
 * Gateway sessions across workers.
 *
 * Caller side (this worker does not run the session), here: `handle()` gives
 * the request a SessionHandle whose verbs are cross-worker commands
 * (cluster/session-command.ts) carrying the caller's signal.
 * `talk.session.join` with the join token is checked by the owner, which
 * moves the session's event delivery to this client; this worker then
 * forwards the replay the owner answered with (from its buffer), then live
 * events from the cluster stream, each seq once and in order.
 * cancelTurn / cancelOutput / close from that client are sent to the owner
 * and applied there under the same cancellation contract. Audio does not
 * cross workers (nothing per audio frame touches the cluster): the media
 * verbs answer invalid_state naming the owner, where the client must send them.
 *
 * Owner side: RemoteClients (remote-clients.ts) answers those commands.
 */
export class RemoteSessions {
  readonly #o: RemoteSessionsOptions;
  readonly #views = new Map<string, RemoteView>();
  readonly #lost = new Map<string, number>();
  readonly #owner: RemoteClients;
  readonly #off: (() => void)[] = [];

  constructor(options: RemoteSessionsOptions) {
    this.#o = options;
    this.#owner = new RemoteClients({
      cluster: options.cluster,
      runtime: options.runtime,
      sessions: options.sessions,
      logger: options.logger,
    });
    this.#off.push(options.cluster.onSessionLost((sessionId) => this.#onLost(sessionId)));
    this.#off.push(options.sessions.onRelease((peer) => this.#onPeerGone(peer)));
  }

  /** True when `sessionId` is not run here, so its verbs must go to the owner. */
  isRemote(sessionId: string): boolean {
    return this.#o.runtime.getSession(sessionId) === undefined;
  }

  /** The request's view of a session owned by another worker. */
  handle(sessionId: string, caller: RemoteCaller): SessionHandle {
    return new RemoteSessionHandle(sessionId, caller, this);
  }

  /** talk.session.join for a session owned elsewhere. `start` runs after the response is sent. */
  async join(
    sessionId: string,
    params: { joinToken: string; afterSeq: number },
    caller: RemoteCaller,
  ): Promise<JoinOutcome> {
    this.#assertNotLost(sessionId);
    const { afterSeq } = params;
    const joined = this.#o.cluster.sendCommand(
      sessionId,
      { verb: "join", params: { joinToken: params.joinToken, afterSeq, peer: this.#peerKey(caller) } },
      { signal: caller.signal },
    );
    // The connection closed while the join was in flight (its release already ran): the owner may
    // have moved delivery to its stand-in, so tell it to start the reconnect grace instead.
    const { events, ...result } = await joined.catch((err: unknown) => {
      if (caller.closed || caller.signal.aborted) this.#leave(sessionId, caller);
      throw err;
    });
    if (caller.closed) {
      this.#leave(sessionId, caller);
      throw new TalkError("cancelled", "The connection closed while the session was joined.");
    }
    const peer: SessionPeer = caller;
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

  /**
   * cancelTurn / cancelOutput / close from a client here that joined a session
   * owned elsewhere: checked here, applied by the owner, the caller's signal attached.
   */
  async send<V extends "cancelTurn" | "cancelOutput" | "close">(
    sessionId: string,
    caller: RemoteCaller,
    verb: V,
    params: Omit<SessionCommandParams<V>, "peer">,
  ): Promise<SessionCommandResult<V>> {
    await this.#assertJoined(sessionId, caller);
    const withPeer = { ...params, peer: this.#peerKey(caller) };
    const command = { verb, params: withPeer } as unknown as SessionCommandOf<V>;
    return this.#o.cluster.sendCommand(sessionId, command, { signal: caller.signal });
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

  /** Stops forwarding and answering, forgets stand-ins (server close). Idempotent. */
  close(): void {
    for (const off of this.#off.splice(0)) off();
    this.#owner.close();
    for (const view of this.#views.values()) view.unsubscribe();
    this.#views.clear();
  }

  // --- caller side ---------------------------------------------------------

  #forward(key: string, view: RemoteView, event: TalkEvent): void {
    if (this.#views.get(key) !== view || event.seq <= view.delivered) return;
    view.delivered = event.seq;
    // The notice sent to the client this one displaced (and earlier ones) is not this client's event.
    if (event.type === "session.replaced" && event.seq <= view.joinSeq) return;
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
    if (isStandIn(peer)) return; // a stand-in being released on the owner side
    for (const [k, view] of [...this.#views]) {
      if (view.peer !== peer) continue;
      this.#drop(k, view);
      this.#leave(view.sessionId, peer);
    }
  }

  /** Tells the owner a client here is gone (its sessions start the reconnect grace). Best effort. */
  #leave(sessionId: string, peer: SessionPeer): void {
    void this.#o.cluster
      // No signal: the caller's is aborted by now (its connection closed), and the owner must still hear it.
      .sendCommand(sessionId, { verb: "leave", params: { peer: this.#peerKey(peer) } })
      .catch((err: unknown) => this.#o.logger.debug({ err, sessionId }, "remote leave failed"));
  }

  #peerKey(peer: SessionPeer): string {
    return `${this.#o.cluster.workerId}/${peer.id}`;
  }
}

/** A session run by another worker, as one request of a client here sees it. */
class RemoteSessionHandle implements SessionHandle {
  readonly sessionId: string;
  readonly #caller: RemoteCaller;
  readonly #remote: RemoteSessions;

  constructor(sessionId: string, caller: RemoteCaller, remote: RemoteSessions) {
    this.sessionId = sessionId;
    this.#caller = caller;
    this.#remote = remote;
  }

  join(params: TalkParsedParams<"talk.session.join">): Promise<JoinOutcome> {
    return this.#remote.join(this.sessionId, params, this.#caller);
  }

  cancelTurn(params: TalkParsedParams<"talk.session.cancelTurn">) {
    const { turnId, reason } = params;
    return this.#remote.send(this.sessionId, this.#caller, "cancelTurn", { turnId, reason });
  }

  cancelOutput(params: TalkParsedParams<"talk.session.cancelOutput">) {
    const { turnId, reason } = params;
    return this.#remote.send(this.sessionId, this.#caller, "cancelOutput", { turnId, reason });
  }

  close(params: TalkParsedParams<"talk.session.close">) {
    return this.#remote.send(this.sessionId, this.#caller, "close", { reason: params.reason });
  }

  // Media verbs are not relayed: they answer where the media lives.
  appendAudio(): Promise<never> {
    return this.#remote.mediaElsewhere(this.sessionId, this.#caller);
  }

  startTurn(): Promise<never> {
    return this.#remote.mediaElsewhere(this.sessionId, this.#caller);
  }

  endTurn(): Promise<never> {
    return this.#remote.mediaElsewhere(this.sessionId, this.#caller);
  }

  submitToolResult(): Promise<never> {
    return this.#remote.mediaElsewhere(this.sessionId, this.#caller);
  }

  // A direct tool call answers a turn of the media's worker, so it goes there too.
  callTool(): Promise<never> {
    return this.#remote.mediaElsewhere(this.sessionId, this.#caller);
  }
}

function viewKey(sessionId: string, peer: SessionPeer): string {
  return `${sessionId}\u0000${peer.id}`;
}
