/**
 * What tools like end_call, send_dtmf and transfer_call need from the surface
 * that owns a session's media. Core's tools call this contract; a telephony
 * adapter implements it for its sessions and registers it, so core never
 * knows which carrier (or meeting platform) is behind a session.
 */
export interface CallControl {
  /**
   * Ends the call. With `afterPlayback`, waits until the audio already
   * queued for the caller has been heard (e.g. a farewell) before hanging up.
   */
  hangUp(options: { afterPlayback: boolean; reason?: string; signal: AbortSignal }): Promise<void>;
  /** Plays DTMF digits (0-9, *, #, w for a pause) into the call; resolves once they were played. */
  sendDtmf(digits: string, signal: AbortSignal): Promise<void>;
  /**
   * Transfers the call to a destination the adapter's configuration allows.
   * `briefing` is spoken to the person who picks up before the caller is
   * connected, where the surface can do that.
   */
  transfer(destination: string, signal: AbortSignal, options?: { briefing?: string }): Promise<void>;
  /**
   * Waits for keypad digits from the caller. Resolves with what was typed
   * and why collection ended; digits typed while collecting are events of
   * the session, not text to the agent.
   */
  collectDigits(request: CollectDigitsRequest, signal: AbortSignal): Promise<CollectedDigits>;
}

export interface CollectDigitsRequest {
  /** Stop after this many digits. */
  count?: number;
  /** Stop at this key (not included in the digits). */
  terminator?: "#" | "*";
  /** Give up this long after the start or the last digit, ms. */
  timeoutMs: number;
  /** Caller speech ends the collection (`reason: "speech"`). */
  cancelOnSpeech: boolean;
  /** The turn the request belongs to (the digits' events carry it). */
  turnId: string;
}

export interface CollectedDigits {
  digits: string;
  reason: "count" | "terminator" | "timeout" | "speech";
}

/** Per-session registry of call controls; a session without one cannot use call tools. */
export class CallControlRegistry {
  readonly #controls = new Map<string, CallControl>();

  /** Registers the control of a session; returns the unregister function. */
  set(sessionId: string, control: CallControl): () => void {
    this.#controls.set(sessionId, control);
    return () => {
      if (this.#controls.get(sessionId) === control) this.#controls.delete(sessionId);
    };
  }

  get(sessionId: string): CallControl | undefined {
    return this.#controls.get(sessionId);
  }

  get size(): number {
    return this.#controls.size;
  }
}
