import { TalkError } from "./errors.js";

/** Options of WindowedLogLimiter. */
export interface WindowedLogLimiterOptions {
  /** Lines logged per reason per window. Default 10. */
  perWindow?: number;
  /** Window length, ms. Default 60 000. */
  windowMs?: number;
  /** Reasons tracked at once; the oldest is forgotten beyond this. Default 256. */
  maxReasons?: number;
  /** Clock, ms (tests inject one). Default Date.now. */
  now?: () => number;
}

/** What to do with one occurrence: log it (saying how many of its reason the last window suppressed) or not. */
export type LogDecision = { log: true; suppressed: number } | { log: false };

interface ReasonWindow {
  startedAt: number;
  logged: number;
  suppressed: number;
}

/**
 * Rate limit of a log line per reason per time window (not per process
 * lifetime, so a later flood is seen too): the first `perWindow` occurrences
 * of a reason in a window are logged, the rest counted; the first line of the
 * next window carries that count as `suppressed`.
 */
export class WindowedLogLimiter {
  readonly #perWindow: number;
  readonly #windowMs: number;
  readonly #maxReasons: number;
  readonly #now: () => number;
  readonly #windows = new Map<string, ReasonWindow>();

  constructor(options: WindowedLogLimiterOptions = {}) {
    this.#perWindow = options.perWindow ?? 10;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxReasons = options.maxReasons ?? 256;
    this.#now = options.now ?? Date.now;
    for (const [name, value] of [
      ["perWindow", this.#perWindow],
      ["windowMs", this.#windowMs],
      ["maxReasons", this.#maxReasons],
    ] as const) {
      if (!Number.isInteger(value) || value < 1)
        throw new TalkError("config_invalid", `WindowedLogLimiter: ${name} must be a positive integer.`);
    }
  }

  /** One occurrence of `reason`: whether to log it. */
  take(reason: string): LogDecision {
    const now = this.#now();
    let w = this.#windows.get(reason);
    let carried = 0;
    if (w && now - w.startedAt >= this.#windowMs) {
      carried = w.suppressed;
      w = undefined;
    }
    if (!w) {
      w = { startedAt: now, logged: 0, suppressed: 0 };
      this.#windows.delete(reason);
      this.#windows.set(reason, w);
      if (this.#windows.size > this.#maxReasons) {
        const oldest = this.#windows.keys().next().value;
        if (oldest !== undefined) this.#windows.delete(oldest);
      }
    }
    if (w.logged < this.#perWindow) {
      w.logged += 1;
      return { log: true, suppressed: carried };
    }
    w.suppressed += 1;
    return { log: false };
  }
}
