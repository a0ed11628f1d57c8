/**
 * Waiting for a call to go quiet: no output in flight and every mark the
 * carrier was sent acknowledged (a farewell or an announcement heard), or
 * the caller's signal, or the call's hang-up timeout, or the call closed.
 * Re-checked on every session event, when the line goes idle, and every
 * 50 ms (an output ends without an event of its own).
 */
import type { TalkSession } from "../core/index.js";
import type { CallPlayout } from "./playout/call-playout.js";

export interface CallQuietOptions {
  session: Pick<TalkSession, "activeOutput">;
  playout: Pick<CallPlayout, "playing" | "whenIdle">;
  /** The longest wait (the call's hangUpTimeoutMs). */
  timeoutMs: number;
}

export class CallQuiet {
  readonly #o: CallQuietOptions;
  #checks: Array<() => void> = [];
  #closed = false;

  constructor(options: CallQuietOptions) {
    this.#o = options;
  }

  /** Until nothing plays or is being produced, or `signal`, or the timeout, or `close()`. Never rejects. */
  quiet(signal: AbortSignal): Promise<void> {
    const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.#o.timeoutMs)]);
    const { session, playout } = this.#o;
    return this.#until(() => !session.activeOutput && !playout.playing, deadline);
  }

  /**
   * A session event: every wait re-checks after the emitter's own bookkeeping: endOutput follows
   * output.audio.done once the pipeline's promise chain has settled, which can take several microtasks.
   */
  onSessionEvent(): void {
    for (const check of [...this.#checks]) setImmediate(check);
  }

  /** The call closed: every wait ends. Idempotent. */
  close(): void {
    this.#closed = true;
    for (const check of [...this.#checks]) check();
  }

  #until(done: () => boolean, signal: AbortSignal): Promise<void> {
    const playout = this.#o.playout;
    return new Promise((resolve) => {
      let waitingIdle = false;
      const poll = setInterval(() => check(), 50);
      const check = (): void => {
        if (done() || signal.aborted || this.#closed) {
          clearInterval(poll);
          this.#checks = this.#checks.filter((c) => c !== check);
          signal.removeEventListener("abort", check);
          resolve();
          return;
        }
        if (playout.playing && !waitingIdle) {
          waitingIdle = true;
          void playout.whenIdle(signal).then(() => {
            waitingIdle = false;
            check();
          });
        }
      };
      this.#checks.push(check);
      signal.addEventListener("abort", check, { once: true });
      check();
    });
  }
}
