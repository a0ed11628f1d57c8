import type { TalkModeState } from "./protocol/talk-methods.js";

/**
 * The foreground node mode (`talk.mode`): whether Talk is in the foreground
 * and an optional phase marker. Not session state; a setter broadcasts the
 * new state to every connection.
 */
export class TalkModeStore {
  #state: TalkModeState = { enabled: false, updatedAt: new Date().toISOString() };
  readonly #listeners = new Set<(state: TalkModeState) => void>();

  get state(): TalkModeState {
    return { ...this.#state };
  }

  set(enabled: boolean, phase: string | undefined): TalkModeState {
    this.#state = { enabled, ...(phase !== undefined ? { phase } : {}), updatedAt: new Date().toISOString() };
    const snapshot = this.state;
    for (const listener of this.#listeners) {
      try {
        listener(snapshot);
      } catch {
        // A broken listener must not stop the broadcast to the others.
      }
    }
    return snapshot;
  }

  onChange(listener: (state: TalkModeState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
