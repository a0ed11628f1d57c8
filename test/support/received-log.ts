/**
 * What a stand-in received, in order, with a wait for an entry: the
 * stand-ins' `received` list and `waitFor()`. Test-only.
 */
export class ReceivedLog<T> {
  readonly items: T[] = [];
  #waiters: Array<() => void> = [];

  push(item: T): void {
    this.items.push(item);
    for (const w of [...this.#waiters]) w();
  }

  /** Resolves with the first entry satisfying `predicate` (checked now and on every new entry). */
  waitFor(predicate: (item: T) => boolean): Promise<T> {
    return new Promise((resolve) => {
      const check = (): boolean => {
        const hit = this.items.find(predicate);
        if (hit !== undefined) resolve(hit);
        return hit !== undefined;
      };
      if (check()) return;
      const waiter = (): void => {
        if (check()) this.#waiters = this.#waiters.filter((w) => w !== waiter);
      };
      this.#waiters.push(waiter);
    });
  }
}
