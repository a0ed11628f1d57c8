import { runAbortable } from "./abortable.js";
import type { TalkWorkKind } from "./session-types.js";

interface PendingWork {
  kind: TalkWorkKind;
  turnId: string | undefined;
  settled: Promise<void>;
}

/**
 * The work a session has in flight, by turn: what cancellation reports as
 * aborted, what decides whether a superseded turn still needs cancelling, and
 * what close waits for.
 */
export class WorkRegistry {
  readonly #pending = new Set<PendingWork>();

  get size(): number {
    return this.#pending.size;
  }

  /** Runs `work` under `signal` (see runAbortable) and tracks it until it settles. */
  run<T>(
    kind: TalkWorkKind,
    turnId: string | undefined,
    signal: AbortSignal,
    work: (signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    const run = runAbortable(signal, work);
    const entry: PendingWork = { kind, turnId, settled: run.settled };
    this.#pending.add(entry);
    void run.settled.then(() => this.#pending.delete(entry));
    return run.result;
  }

  kindsFor(turnId: string): string[] {
    const kinds = new Set<string>();
    for (const p of this.#pending) if (p.turnId === turnId) kinds.add(p.kind);
    return [...kinds];
  }

  hasWorkFor(turnId: string): boolean {
    for (const p of this.#pending) if (p.turnId === turnId) return true;
    return false;
  }

  /**
   * Waits until everything settles or `graceMs` passes. Returns the kinds
   * still running, i.e. work that ignored its abort signal.
   */
  async settle(graceMs: number): Promise<string[]> {
    if (this.#pending.size === 0) return [];
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
      timer.unref();
    });
    try {
      await Promise.race([Promise.all([...this.#pending].map((p) => p.settled)), grace]);
    } finally {
      clearTimeout(timer);
    }
    return [...this.#pending].map((p) => p.kind);
  }
}
