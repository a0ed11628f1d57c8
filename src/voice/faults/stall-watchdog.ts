/** Which wait ran out. */
export type StallKind = "first_byte" | "inter_chunk";

export interface StallWatchdogOptions {
  /** 0: not timed. */
  firstByteTimeoutMs: number;
  /** 0: not timed. */
  interChunkTimeoutMs: number;
  /** Called once per arming when a wait runs out (then the watchdog is stopped). */
  onStall(kind: StallKind, waitedMs: number): void;
}

/**
 * Notices a provider that stops sending with its connection still open:
 * `expect()` starts the wait for a first chunk (firstByteTimeoutMs), every
 * `progress()` restarts the wait for the next one (interChunkTimeoutMs),
 * `stop()` ends the watch (the stream finished or was cancelled). One timer
 * at a time; nothing runs while stopped.
 */
export class StallWatchdog {
  readonly #o: StallWatchdogOptions;
  #timer: NodeJS.Timeout | undefined;
  #started = false;

  constructor(options: StallWatchdogOptions) {
    this.#o = options;
  }

  get watching(): boolean {
    return this.#timer !== undefined;
  }

  /** A stream is due: wait for its first chunk, unless one is already being watched. */
  expect(): void {
    if (this.#timer) return;
    this.#started = false;
    this.#arm("first_byte", this.#o.firstByteTimeoutMs);
  }

  /** A chunk arrived: wait for the next one. */
  progress(): void {
    if (!this.#timer && !this.#started) return;
    this.#started = true;
    this.#arm("inter_chunk", this.#o.interChunkTimeoutMs);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#started = false;
  }

  #arm(kind: StallKind, ms: number): void {
    clearTimeout(this.#timer);
    if (ms <= 0) {
      // 0: this wait is not timed (the stream is still followed, so progress() keeps working).
      this.#timer = undefined;
      return;
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#started = false;
      this.#o.onStall(kind, ms);
    }, ms);
    this.#timer.unref?.();
  }
}
