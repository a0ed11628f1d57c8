/**
 * How a running agent_consult tells the session that asked for it about its
 * progress, so a realtime pipeline can speak the answer while the consult
 * continues (seed 002, progressive pattern). The tool and the pipeline meet
 * here by (sessionId, callId); neither holds the other.
 */
export interface ConsultProgressListener {
  /** The consult has been quiet for progressCueMs: say something like "One moment...". */
  cue(text: string): void;
  /** A complete, speakable chunk of the answer, in order. */
  chunk(text: string): void;
}

export class ConsultProgressChannel {
  readonly #listeners = new Map<string, ConsultProgressListener>();

  /** Listens for the call's progress; returns the unlisten function (call it in a finally). */
  listen(sessionId: string, callId: string, listener: ConsultProgressListener): () => void {
    const key = keyOf(sessionId, callId);
    this.#listeners.set(key, listener);
    return () => {
      if (this.#listeners.get(key) === listener) this.#listeners.delete(key);
    };
  }

  /** The listener of a call, if its session speaks progress. */
  get(sessionId: string, callId: string): ConsultProgressListener | undefined {
    return this.#listeners.get(keyOf(sessionId, callId));
  }

  get size(): number {
    return this.#listeners.size;
  }
}

const keyOf = (sessionId: string, callId: string): string => `${sessionId}\u0000${callId}`;
