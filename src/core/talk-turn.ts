import { setMaxListeners } from "node:events";
import { abortWith } from "./abortable.js";
import type { TalkOutput, TalkTurn } from "./session-types.js";

/**
 * Internal turn state of a session. A turn is `active` while the user's input
 * runs, `ending` once endTurn was called and its response (STT final, agent,
 * TTS) is still allowed to flow, `ended` when a later turn superseded it or
 * the session closed with nothing pending, `cancelled` after cancellation.
 */
export class TurnRecord implements TalkTurn {
  readonly id: string;
  readonly sessionId: string;
  readonly startedAt: number;
  readonly controller = new AbortController();
  /** Aborts when the turn is cancelled or, while the turn is linked, when the session closes. */
  readonly signal: AbortSignal;
  state: TalkTurn["state"] = "active";
  /** The turn's most recent output was cancelled: output-scoped work must not start. */
  lastOutputCancelled = false;
  readonly #unlink: () => void;

  constructor(id: string, sessionId: string, sessionSignal: AbortSignal, startedAt: number) {
    this.id = id;
    this.sessionId = sessionId;
    this.startedAt = startedAt;
    // Not AbortSignal.any: see abortWith (the session's signal must not keep a trace of every turn).
    this.signal = this.controller.signal;
    // Each output of the turn follows it with one listener until the output or the turn ends: a turn with
    // more than ten outputs alive is no leak, and Node's warning at eleven would say it is.
    setMaxListeners(0, this.signal);
    this.#unlink = abortWith(sessionSignal, this.controller);
  }

  /** The turn was left behind with nothing of it running: it stops following the session's abort. */
  unlink(): void {
    this.#unlink();
  }

  toJSON(): Omit<TalkTurn, "signal"> {
    return { id: this.id, sessionId: this.sessionId, startedAt: this.startedAt, state: this.state };
  }
}

export class OutputRecord implements TalkOutput {
  readonly turnId: string;
  readonly itemId: string;
  readonly startedAt: number;
  readonly controller = new AbortController();
  readonly signal: AbortSignal;

  constructor(turn: TurnRecord, itemId: string, startedAt: number) {
    this.turnId = turn.id;
    this.itemId = itemId;
    this.startedAt = startedAt;
    // Not AbortSignal.any: on Node 20 it keeps about 3 KB per output (a signal, WeakRefs, a finalization
    // record) that outlives the young generation, several outputs a call a minute (docs/performance.md).
    // The output's own controller follows the turn: a cancelled turn aborts the output, and a cancelled
    // output removes its listener from the turn.
    this.signal = this.controller.signal;
    abortWith(turn.signal, this.controller);
  }

  toJSON(): Omit<TalkOutput, "signal"> {
    return { turnId: this.turnId, itemId: this.itemId, startedAt: this.startedAt };
  }
}

/** Remembers recent ids (cancelled turns, cancelled output items) without growing forever. */
export class RecentIds {
  readonly #max: number;
  readonly #ids = new Set<string>();

  constructor(max: number) {
    this.#max = max;
  }

  add(id: string): void {
    this.#ids.delete(id);
    this.#ids.add(id);
    if (this.#ids.size > this.#max) {
      const oldest = this.#ids.values().next().value;
      if (oldest !== undefined) this.#ids.delete(oldest);
    }
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }
}
