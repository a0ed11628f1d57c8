import { audioBytes, TalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import type { TalkAudioSink, TalkSessionController } from "../voice/index.js";
import type { TalkRuntime, TalkSession } from "../core/index.js";
import type { TalkEvent, TerminalReason } from "../core/index.js";
import type { GatewayEventName } from "./protocol/frames.js";
import type { TalkAudioPayload } from "./protocol/talk-methods.js";
import { SessionLatency } from "./session-latency.js";
import { ClientPlayback, playedOut } from "./client-playback.js";
import type { PlaybackPosition } from "./protocol/talk-methods.js";

/** The narrow view of a connection that session ownership needs. */
export interface SessionPeer {
  readonly id: string;
  /** True once the connection is gone; a closed peer never becomes an owner. */
  readonly closed: boolean;
  sendEvent(event: GatewayEventName, payload: unknown, seq?: number): void;
}

/** A session this Gateway created for a connection, with whoever owns it now. */
export interface OwnedSession {
  readonly session: TalkSession;
  /** Drives a Gateway-owned session; undefined for client-owned sessions (talk.client.create). */
  readonly controller: TalkSessionController | undefined;
  /** Tool calls of a client-owned session in flight or already answered (stale on repeat). */
  readonly toolCalls: Set<string>;
}

interface Entry extends OwnedSession {
  owner: SessionPeer | undefined;
  /** Events reach the owner only once it is live, i.e. after its create/join response. */
  live: boolean;
  /** Highest seq sent to the current owner, so replay and live delivery never overlap. */
  deliveredSeq: number;
  graceTimer: NodeJS.Timeout | undefined;
  unsubscribe: () => void;
  /** Gateway-owned sessions: the latency.metrics of each answered turn. */
  latency: SessionLatency | undefined;
  /** What the owner's client played of the assistant audio (its `playback` reports). */
  playback: ClientPlayback;
}

export interface SessionOwnershipOptions {
  runtime: TalkRuntime;
  reconnectGraceMs: number;
  maxSessionsPerConnection: number;
  logger: TalkLogger;
}

/**
 * Who owns which Gateway session. The owner receives the session's
 * `talk.event` frames and its assistant audio; a join moves both to the
 * joiner. An owner that disconnects leaves its Gateway-owned sessions open
 * for the reconnect grace, then they close with reason "owner_lost".
 */
export class SessionOwnership {
  readonly #options: SessionOwnershipOptions;
  readonly #entries = new Map<string, Entry>();
  readonly #releaseListeners = new Set<(peer: SessionPeer) => void>();
  #accepting = true;

  constructor(options: SessionOwnershipOptions) {
    this.#options = options;
  }

  /** Drain: new sessions are refused with shutting_down; existing ones (and joins) continue. */
  stopAccepting(): void {
    this.#accepting = false;
  }

  assertAccepting(): void {
    if (!this.#accepting) {
      throw new TalkError("shutting_down", "This worker is draining and takes no new sessions.", {
        retryable: true,
      });
    }
  }

  /** The session held here, if any (no ownership check: for the cluster's command handler). */
  get(sessionId: string): OwnedSession | undefined {
    return this.#entries.get(sessionId);
  }

  /** Who receives the session's events now (undefined while it waits for a join). */
  ownerOf(sessionId: string): SessionPeer | undefined {
    return this.#entries.get(sessionId)?.owner;
  }

  /** Called with every peer whose connection is gone (remote joins follow it). */
  onRelease(listener: (peer: SessionPeer) => void): () => void {
    this.#releaseListeners.add(listener);
    return () => {
      this.#releaseListeners.delete(listener);
    };
  }

  get size(): number {
    return this.#entries.size;
  }

  countOwnedBy(peer: SessionPeer): number {
    let n = 0;
    for (const e of this.#entries.values()) if (e.owner === peer) n += 1;
    return n;
  }

  /** Throws session_limit when `peer` already owns as many sessions as allowed. */
  assertCapacity(peer: SessionPeer): void {
    const max = this.#options.maxSessionsPerConnection;
    if (this.countOwnedBy(peer) >= max) {
      throw new TalkError("session_limit", `A connection may own at most ${max} sessions.`, {
        details: { max },
      });
    }
  }

  /**
   * Records a new session owned by `peer`. Delivery starts with goLive(),
   * called after the create response so events never precede it.
   */
  adopt(
    session: TalkSession,
    controller: TalkSessionController | undefined,
    peer: SessionPeer,
    options: { playbackReports?: boolean } = {},
  ): OwnedSession {
    const entry: Entry = {
      session,
      controller,
      toolCalls: new Set(),
      owner: peer,
      live: false,
      deliveredSeq: 0,
      graceTimer: undefined,
      unsubscribe: () => {},
      latency: controller ? new SessionLatency(session) : undefined,
      playback: new ClientPlayback({ reporting: options.playbackReports ?? false }),
    };
    entry.unsubscribe = session.subscribe((event) => this.#onEvent(entry, event));
    this.#entries.set(session.id, entry);
    controller?.setAudioSink(this.#audioSink(entry));
    if (session.state === "closed") this.#forget(entry);
    return entry;
  }

  /**
   * The owner's client reports what it played (`playback` on a verb): read by
   * the session's sink (heardMs, drained) and the leg's echo reference before the verb runs.
   */
  reportPlayback(owned: OwnedSession, position: PlaybackPosition | undefined): void {
    if (position === undefined) return;
    const entry = this.#entries.get(owned.session.id);
    if (!entry) return;
    entry.playback.report(position);
    // The leg aligns its echo reference by the same report.
    entry.controller?.playbackReported?.(position);
  }

  /**
   * Sends `peer` the events after `afterSeq` still held for replay, then
   * delivers live. `joined`: `peer` took the session over (a join), so the
   * replay is a joiner's (joinerReplay); the creator's is every event.
   */
  goLive(owned: OwnedSession, peer: SessionPeer, afterSeq: number, joined = true): void {
    const entry = this.#entries.get(owned.session.id);
    if (!entry || entry.owner !== peer || peer.closed) return;
    entry.deliveredSeq = afterSeq;
    const { events } = entry.session.replay(afterSeq);
    for (const event of joined ? joinerReplay(events) : events) this.#deliver(entry, event);
    entry.live = true;
  }

  /**
   * The session `sessionId` if `peer` owns it. Throws session_not_found,
   * session_closed or not_session_owner; `kind` narrows to Gateway- or client-owned.
   */
  require(sessionId: string, peer: SessionPeer, kind: "gateway" | "client" | "any" = "any"): OwnedSession {
    const entry = this.#entries.get(sessionId);
    if (!entry) {
      const session = this.#options.runtime.getSession(sessionId);
      if (session?.state === "closed" || session?.state === "closing") {
        throw new TalkError("session_closed", undefined, { details: { sessionId } });
      }
      throw new TalkError("session_not_found", undefined, { details: { sessionId } });
    }
    if (entry.session.state !== "active")
      throw new TalkError("session_closed", undefined, { details: { sessionId } });
    if (entry.owner !== peer) throw new TalkError("not_session_owner", undefined, { details: { sessionId } });
    if (kind === "gateway" && !entry.controller) {
      throw new TalkError(
        "use_talk_client_create",
        "This session is client-owned; its media does not pass through the Gateway.",
        {
          details: { sessionId },
        },
      );
    }
    if (kind === "client" && entry.controller) {
      throw new TalkError(
        "use_talk_session_create",
        "This session is Gateway-owned; use the talk.session.* verbs.",
        {
          details: { sessionId },
        },
      );
    }
    return entry;
  }

  /**
   * Moves a Gateway-owned session to `peer` after checking its join token.
   * The displaced owner gets `session.replaced`; the caller then runs
   * goLive() and `session.ready` once its response is out.
   */
  join(sessionId: string, joinToken: string, peer: SessionPeer): OwnedSession {
    const session = this.#options.runtime.getSession(sessionId);
    if (!session) throw new TalkError("session_not_found", undefined, { details: { sessionId } });
    if (session.state !== "active")
      throw new TalkError("session_closed", undefined, { details: { sessionId } });
    if (!session.verifyJoinToken(joinToken))
      throw new TalkError("invalid_join_token", undefined, { details: { sessionId } });
    const entry = this.#entries.get(sessionId);
    if (!entry || !entry.controller) {
      // A valid token for a session this Gateway does not drive (another surface's): nothing to hand over.
      throw new TalkError("invalid_state", "This session cannot be joined through the Gateway.", {
        details: { sessionId },
      });
    }
    if (entry.owner !== peer) this.assertCapacity(peer);
    clearTimeout(entry.graceTimer);
    entry.graceTimer = undefined;
    const displaced = entry.owner;
    if (displaced && displaced !== peer) {
      // Emitted while the displaced owner is still live, so it is the last event that connection sees.
      session.emit({ type: "session.replaced", payload: { reason: "replaced" }, source: "gateway" });
    }
    entry.owner = peer;
    entry.live = false;
    return entry;
  }

  /** The connection is gone: its sessions wait for a join, then close with "owner_lost". */
  release(peer: SessionPeer): void {
    for (const listener of [...this.#releaseListeners]) {
      try {
        listener(peer);
      } catch (err) {
        this.#options.logger.error({ err }, "release listener threw");
      }
    }
    for (const entry of [...this.#entries.values()]) {
      if (entry.owner !== peer) continue;
      entry.owner = undefined;
      entry.live = false;
      // Client-owned sessions cannot be joined; only their tool calls pass through us.
      const grace = entry.controller ? this.#options.reconnectGraceMs : 0;
      if (grace === 0) {
        void this.#close(entry, "owner_lost");
        continue;
      }
      entry.graceTimer = setTimeout(() => void this.#close(entry, "owner_lost"), grace);
      entry.graceTimer.unref?.();
    }
  }

  /** Closes one session through its controller (Gateway-owned) or directly (client-owned). */
  close(owned: OwnedSession, reason: TerminalReason): Promise<void> {
    const entry = this.#entries.get(owned.session.id);
    return entry ? this.#close(entry, reason) : Promise.resolve();
  }

  /** Closes every session this Gateway holds (server shutdown). Failures are logged, never thrown. */
  async closeAll(reason: TerminalReason): Promise<void> {
    await Promise.allSettled([...this.#entries.values()].map((e) => this.#close(e, reason)));
  }

  async #close(entry: Entry, reason: TerminalReason): Promise<void> {
    clearTimeout(entry.graceTimer);
    entry.graceTimer = undefined;
    try {
      if (entry.controller) await entry.controller.close(reason);
      else await entry.session.close(reason);
    } catch (err) {
      this.#options.logger.error({ err, sessionId: entry.session.id }, "session close failed");
    } finally {
      this.#forget(entry);
    }
  }

  #forget(entry: Entry): void {
    if (this.#entries.get(entry.session.id) !== entry) return;
    clearTimeout(entry.graceTimer);
    entry.unsubscribe();
    this.#entries.delete(entry.session.id);
  }

  #onEvent(entry: Entry, event: TalkEvent): void {
    if (entry.live) this.#deliver(entry, event);
    entry.latency?.observe(event);
    if (event.type === "session.closed") this.#forget(entry);
  }

  #deliver(entry: Entry, event: TalkEvent): void {
    if (!entry.owner || event.seq <= entry.deliveredSeq) return;
    entry.deliveredSeq = event.seq;
    entry.owner.sendEvent("talk.event", event, event.seq);
  }

  /** One sink per session that follows the current owner, so a join needs no sink swap. */
  #audioSink(entry: Entry): TalkAudioSink {
    return {
      write: (chunk, meta) => {
        if (!entry.live || !entry.owner) return;
        // talk.audio carries the wire bytes of either kind (PCM16 little-endian, or encoded as they are) with their format.
        const bytes = audioBytes(chunk);
        const payload: TalkAudioPayload = {
          sessionId: entry.session.id,
          turnId: meta.turnId,
          itemId: meta.itemId,
          format: chunk.format,
          audioBase64: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64"),
        };
        entry.owner.sendEvent("talk.audio", payload);
        entry.playback.written(meta.itemId, chunk.format, bytes.byteLength);
        entry.latency?.audioSent(meta.turnId);
      },
      // Audio already handed to the socket cannot be recalled; the client stops
      // playback on the `output.audio.cancelled` / `turn.cancelled` event, so
      // nothing of it plays past this point.
      clear: (meta) => entry.playback.cleared(meta.itemId),
      heardMs: (itemId) => entry.playback.heardMs(itemId),
      playingOut: () => entry.playback.playing,
      drained: (itemId, signal) => playedOut(entry.playback, itemId, signal),
    };
  }
}

/**
 * The replay a joining owner receives: the session's events, without the
 * notices addressed to earlier owners: `session.replaced` (the connections it
 * displaced; the joiner would otherwise read its own join as being replaced)
 * and `session.ready` (each owner's own, after its create or join; the
 * joiner's follows the replay). Their seqs are skipped, so the joiner sees
 * gaps there and nowhere else.
 */
export function joinerReplay(events: readonly TalkEvent[]): TalkEvent[] {
  return events.filter((e) => e.type !== "session.replaced" && e.type !== "session.ready");
}
