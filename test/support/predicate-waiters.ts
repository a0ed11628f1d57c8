/**
 * Predicates a test stand-in waits on, re-checked whenever the stand-in says
 * something changed (a message arrived, the socket closed). Shared by the
 * carriers' stream clients. Test-only.
 */
export class PredicateWaiters {
  #waiters: Array<() => void> = [];

  /** Resolves when `predicate` holds, now or after a later `notify()`. */
  wait(predicate: () => boolean): Promise<void> {
    return new Promise((resolve) => {
      if (predicate()) return resolve();
      const waiter = (): void => {
        if (!predicate()) return;
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve();
      };
      this.#waiters.push(waiter);
    });
  }

  /** Something changed: every pending predicate is checked again. */
  notify(): void {
    for (const w of [...this.#waiters]) w();
  }
}
