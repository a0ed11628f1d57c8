import type { TalkLogger } from "../core/index.js";

/**
 * A typed emitter for coordinator notifications. A listener that throws is
 * logged and skipped: one bad subscriber cannot stop a session-lost from
 * reaching the others.
 */
export class EventHub<TEvents extends object> {
  readonly #listeners = new Map<keyof TEvents, Set<(event: never) => void>>();
  readonly #logger: TalkLogger;

  constructor(logger: TalkLogger) {
    this.#logger = logger;
  }

  on<K extends keyof TEvents>(type: K, listener: (event: TEvents[K]) => void): () => void {
    let set = this.#listeners.get(type);
    if (!set) {
      set = new Set();
      this.#listeners.set(type, set);
    }
    const entry = listener as (event: never) => void;
    set.add(entry);
    return () => {
      set.delete(entry);
    };
  }

  emit<K extends keyof TEvents>(type: K, event: TEvents[K]): void {
    const set = this.#listeners.get(type);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        (listener as (event: TEvents[K]) => void)(event);
      } catch (err) {
        this.#logger.error({ err, type: String(type) }, "cluster listener threw");
      }
    }
  }

  clear(): void {
    this.#listeners.clear();
  }
}
