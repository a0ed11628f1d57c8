import { abortWith, TalkError } from "../core/index.js";

/** What a follow needs of the connection that asked for it: its signal, aborted when it closes. */
export interface FollowingConnection {
  readonly signal: AbortSignal;
}

/** One follow, as its stream sees it. */
export interface FollowHandle {
  /** Aborted on unfollow, on a follow of the same key that replaces it, or when the connection closes. */
  readonly signal: AbortSignal;
  /** The stream ended by itself (its last event sent): forget it. Idempotent. */
  done(): void;
}

/**
 * The read-only follows of each connection, for surface methods that stream
 * after their response (`meetings.bots.follow`, `admin.session.follow`): at
 * most `max` per connection (`session_limit`), a follow of a key the
 * connection already follows replaces it (a client resuming), `stop` ends
 * one, and the connection's close ends them all. Keyed by the connection's
 * signal, so nothing outlives it.
 */
export class ConnectionFollows {
  readonly #max: number;
  readonly #what: string;
  readonly #byConnection = new WeakMap<AbortSignal, Map<string, AbortController>>();

  /** `what` names the followed things in the limit's message ("bots", "sessions"). */
  constructor(max: number, what: string) {
    this.#max = max;
    this.#what = what;
  }

  /** Throws session_limit when the connection already follows `max` others. */
  check(connection: FollowingConnection, key: string): void {
    const mine = this.#byConnection.get(connection.signal);
    if (mine && !mine.has(key) && mine.size >= this.#max)
      throw new TalkError("session_limit", `A connection follows at most ${this.#max} ${this.#what}.`);
  }

  /** Starts the follow of `key` (after `check`), replacing the connection's previous one. */
  begin(connection: FollowingConnection, key: string): FollowHandle {
    this.check(connection, key);
    let mine = this.#byConnection.get(connection.signal);
    if (!mine) {
      mine = new Map();
      this.#byConnection.set(connection.signal, mine);
    }
    mine.get(key)?.abort();
    const stop = new AbortController();
    mine.set(key, stop);
    const table = mine;
    const forget = (): void => {
      if (table.get(key) === stop) table.delete(key);
    };
    stop.signal.addEventListener("abort", forget, { once: true });
    // One removable listener on the connection's signal, not AbortSignal.any (Node 20 keeps a trace of
    // every such signal on the connection's for as long as it lives).
    const unlink = abortWith(connection.signal, stop);
    return {
      signal: stop.signal,
      done: () => {
        forget();
        unlink();
      },
    };
  }

  /** Ends the connection's follow of `key`; says whether there was one. */
  stop(connection: FollowingConnection, key: string): boolean {
    const stop = this.#byConnection.get(connection.signal)?.get(key);
    stop?.abort();
    return stop !== undefined;
  }
}
