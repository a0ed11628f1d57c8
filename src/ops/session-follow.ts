import { ConnectionFollows } from "../gateway/index.js";
import { TalkError } from "../core/index.js";
import type { TalkEvent, TalkLogger } from "../core/index.js";
import type { OpsCluster } from "./ops-cluster.js";

/** A connection that follows sessions: its signal aborts when it closes. */
export interface FollowCaller {
  readonly signal: AbortSignal;
  sendEvent(event: string, payload: unknown): void;
}

/** Sessions one connection follows at once. */
export const MAX_SESSION_FOLLOWS = 8;

/**
 * Events a follower is not sent: per-frame audio metadata (`output.audio.delta`
 * carries only byte counts, many per answer) and input appends.
 */
const SKIPPED = new Set(["output.audio.delta", "input.audio.appended"]);

/**
 * Read-only follows of any live session from any worker, for operators
 * (`admin.session.follow`): the session's events from the cluster's event
 * fan-out (`subscribeEvents`, the stream every surface's sessions are
 * published to, which a cross-worker `talk.session.join` also reads), each
 * seq once and in order, relayed to the connection as
 * `admin.session.event {sessionId, event}`, then `admin.follow.ended
 * {sessionId, reason}` after `session.closed` or when its worker is lost.
 * A follower owns nothing: no join token, no `session.replaced`, any number
 * of them. The per-connection rules (limit, replacement, the connection's
 * close) are the ones `meetings.bots.follow` uses (ConnectionFollows); that
 * one streams a bot's transcript lines, this one any surface's raw events.
 */
export class SessionFollows {
  readonly #cluster: Pick<OpsCluster, "locate" | "subscribeEvents" | "onSessionLost">;
  readonly #logger: TalkLogger;
  readonly #follows = new ConnectionFollows(MAX_SESSION_FOLLOWS, "sessions");
  /** Every running follow by session: how a lost worker's followers are told. */
  readonly #bySession = new Map<string, Set<(reason: string) => void>>();
  readonly #stops = new Set<AbortController>();
  readonly #off: () => void;

  constructor(cluster: Pick<OpsCluster, "locate" | "subscribeEvents" | "onSessionLost">, logger: TalkLogger) {
    this.#cluster = cluster;
    this.#logger = logger;
    this.#off = cluster.onSessionLost((sessionId) => {
      for (const end of [...(this.#bySession.get(sessionId) ?? [])]) end("owner_lost");
    });
  }

  /**
   * Checks the session is live somewhere and returns where; `start` (run
   * after the response is sent) begins the relay of its events after `afterSeq`.
   */
  async follow(
    sessionId: string,
    afterSeq: number,
    caller: FollowCaller,
  ): Promise<{ result: { sessionId: string; workerId: string; afterSeq: number }; start: () => void }> {
    this.#follows.check(caller, sessionId);
    const owner = await this.#cluster.locate(sessionId, caller.signal);
    if (!owner)
      throw new TalkError("session_not_found", `No live session ${sessionId}.`, { details: { sessionId } });
    // Following the same session again replaces the previous follow (a console re-selecting it).
    const follow = this.#follows.begin(caller, sessionId);
    const start = (): void => {
      if (follow.signal.aborted) return;
      let delivered = afterSeq;
      let unsubscribe = (): void => {};
      const closer = new AbortController();
      this.#stops.add(closer);
      const signal = AbortSignal.any([follow.signal, closer.signal]);
      const cleanup = (): void => {
        unsubscribe();
        follow.done();
        this.#stops.delete(closer);
        const set = this.#bySession.get(sessionId);
        set?.delete(end);
        if (set?.size === 0) this.#bySession.delete(sessionId);
      };
      const end = (reason: string): void => {
        if (signal.aborted) return;
        closer.abort();
        if (!caller.signal.aborted) caller.sendEvent("admin.follow.ended", { sessionId, reason });
      };
      signal.addEventListener("abort", cleanup, { once: true });
      let set = this.#bySession.get(sessionId);
      if (!set) {
        set = new Set();
        this.#bySession.set(sessionId, set);
      }
      set.add(end);
      try {
        unsubscribe = this.#cluster.subscribeEvents(sessionId, afterSeq, (event: TalkEvent) => {
          if (signal.aborted || event.seq <= delivered) return;
          delivered = event.seq;
          if (!SKIPPED.has(event.type)) caller.sendEvent("admin.session.event", { sessionId, event });
          if (event.type === "session.closed") end(String(event.payload.reason));
        });
      } catch (err) {
        this.#logger.warn({ err, sessionId }, "admin: a session follow could not start");
        end("unavailable");
      }
    };
    return { result: { sessionId, workerId: owner.workerId, afterSeq }, start };
  }

  /** Stops this connection's follow of the session; says whether there was one. */
  unfollow(sessionId: string, caller: FollowCaller): boolean {
    return this.#follows.stop(caller, sessionId);
  }

  /** Stops every follow (server close). Idempotent. */
  close(): void {
    this.#off();
    for (const stop of [...this.#stops]) stop.abort();
    this.#bySession.clear();
  }
}
