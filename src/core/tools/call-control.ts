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
  /** Plays DTMF digits (0-9, *, #, w for a pause) into the call. */
  sendDtmf(digits: string, signal: AbortSignal): Promise<void>;
  /** Transfers the call to a destination the adapter's configuration allows. */
  transfer(destination: string, signal: AbortSignal): Promise<void>;
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
