import { TalkError } from "./errors.js";
import type { TalkLogger } from "./logger.js";

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
  /**
   * Told what a window suppressed once it has ended (a timer at its end,
   * unref'd; `close()` tells the open ones at once), so a flood that stops is
   * still counted; its count is then not carried to the next window's first
   * line. Default none: the count waits for that line.
   */
  report?(reason: string, suppressed: number): void;
}

/** What to do with one occurrence: log it (saying how many of its reason the last window suppressed) or not. */
export type LogDecision = { log: true; suppressed: number } | { log: false };

interface ReasonWindow {
  startedAt: number;
  logged: number;
  suppressed: number;
  /** The report at the window's end, armed by its first suppressed occurrence. */
  timer: NodeJS.Timeout | undefined;
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
  readonly #report: ((reason: string, suppressed: number) => void) | undefined;
  readonly #windows = new Map<string, ReasonWindow>();

  constructor(options: WindowedLogLimiterOptions = {}) {
    this.#perWindow = options.perWindow ?? 10;
    this.#windowMs = options.windowMs ?? 60_000;
    this.#maxReasons = options.maxReasons ?? 256;
    this.#now = options.now ?? Date.now;
    this.#report = options.report;
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
      clearTimeout(w.timer);
      carried = w.suppressed;
      w = undefined;
    }
    if (!w) {
      w = { startedAt: now, logged: 0, suppressed: 0, timer: undefined };
      this.#windows.delete(reason);
      this.#windows.set(reason, w);
      if (this.#windows.size > this.#maxReasons) {
        const oldest = this.#windows.keys().next().value;
        if (oldest !== undefined) this.#end(oldest);
      }
    }
    if (w.logged < this.#perWindow) {
      w.logged += 1;
      return { log: true, suppressed: carried };
    }
    w.suppressed += 1;
    if (this.#report && !w.timer) {
      const window = w;
      window.timer = setTimeout(
        () => {
          window.timer = undefined;
          if (this.#windows.get(reason) === window) this.#end(reason);
        },
        Math.max(0, window.startedAt + this.#windowMs - now),
      );
      window.timer.unref?.();
    }
    return { log: false };
  }

  /** Reports what every open window suppressed and forgets them (a server closing). Idempotent. */
  close(): void {
    for (const reason of [...this.#windows.keys()]) this.#end(reason);
  }

  /** Forgets a reason's window, reporting what it suppressed. */
  #end(reason: string): void {
    const w = this.#windows.get(reason);
    if (!w) return;
    this.#windows.delete(reason);
    clearTimeout(w.timer);
    if (w.suppressed > 0) this.#report?.(reason, w.suppressed);
  }
}

/**
 * Warning lines of one kind of flood (refused sockets, rejected frames,
 * forged webhooks) through a WindowedLogLimiter: the first lines of a key in
 * a window are written, with what the previous window suppressed; once a
 * window that suppressed lines ends (or the log is closed), one more line
 * says how many (`suppressed`, `windowEnded: true`, the fields of the first
 * line it stands for). Keys should come from a closed set (a route and a
 * refusal reason), never from what a peer sent.
 */
export class LimitedLog {
  readonly #logger: TalkLogger;
  readonly #limiter: WindowedLogLimiter;
  /** The first suppressed line of each key's window: what the window's count is written as. */
  readonly #held = new Map<string, { fields: Record<string, unknown>; message: string }>();

  constructor(logger: TalkLogger, options: Omit<WindowedLogLimiterOptions, "report"> = {}) {
    this.#logger = logger;
    this.#limiter = new WindowedLogLimiter({
      ...options,
      report: (key, suppressed) => {
        const line = this.#held.get(key);
        this.#held.delete(key);
        this.#logger.warn(
          { ...line?.fields, suppressed, windowEnded: true },
          `${line?.message ?? key} (${suppressed} more not logged)`,
        );
      },
    });
  }

  /** A warning, unless this key's window has had its lines (then it is counted). */
  warn(key: string, fields: Record<string, unknown>, message: string): void {
    const decision = this.#limiter.take(key);
    if (!decision.log) {
      if (!this.#held.has(key)) this.#held.set(key, { fields, message });
      return;
    }
    if (decision.suppressed === 0) return void this.#logger.warn(fields, message);
    // The previous window's count rides on this line (its end came before its report could).
    this.#held.delete(key);
    this.#logger.warn({ ...fields, suppressed: decision.suppressed }, message);
  }

  /** Writes what the open windows suppressed. Idempotent. */
  close(): void {
    this.#limiter.close();
    this.#held.clear();
  }
}
