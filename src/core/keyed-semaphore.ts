import { cancelledError } from "./abortable.js";

interface Slot {
  running: number;
  waiters: { grant: () => void }[];
}

/**
 * At most `limit` holders per key; later acquirers wait in arrival order. A
 * waiter whose signal aborts leaves the queue at once and never gets a slot,
 * which is how queued work is kept from starting after a cancellation.
 */
export class KeyedSemaphore {
  readonly #limit: number;
  readonly #slots = new Map<string, Slot>();

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Resolves with a release function once a slot is free; rejects with `cancelled` if `signal` aborts first. */
  acquire(key: string, signal: AbortSignal): Promise<() => void> {
    if (signal.aborted) return Promise.reject(cancelledError(signal));
    let slot = this.#slots.get(key);
    if (!slot) {
      slot = { running: 0, waiters: [] };
      this.#slots.set(key, slot);
    }
    const s = slot;
    if (s.running < this.#limit) {
      s.running += 1;
      return Promise.resolve(this.#releaser(key, s));
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener("abort", onAbort);
          resolve(this.#releaser(key, s));
        },
      };
      const onAbort = (): void => {
        s.waiters.splice(s.waiters.indexOf(waiter), 1);
        this.#dropIfIdle(key, s);
        reject(cancelledError(signal));
      };
      signal.addEventListener("abort", onAbort, { once: true });
      s.waiters.push(waiter);
    });
  }

  #releaser(key: string, slot: Slot): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = slot.waiters.shift();
      if (next) {
        next.grant(); // the slot passes straight to the next waiter
        return;
      }
      slot.running -= 1;
      this.#dropIfIdle(key, slot);
    };
  }

  #dropIfIdle(key: string, slot: Slot): void {
    if (slot.running === 0 && slot.waiters.length === 0) this.#slots.delete(key);
  }
}
