/**
 * A token bucket: `capacity` requests at once, refilled at `ratePerSecond`.
 * The clock is injectable so behaviour can be tested without waiting.
 */
export class TokenBucket {
  readonly #capacity: number;
  readonly #ratePerMs: number;
  readonly #now: () => number;
  #tokens: number;
  #last: number;

  constructor(options: { capacity: number; ratePerSecond: number; now?: () => number }) {
    this.#capacity = options.capacity;
    this.#ratePerMs = options.ratePerSecond / 1000;
    this.#now = options.now ?? (() => performance.now());
    this.#tokens = options.capacity;
    this.#last = this.#now();
  }

  /** Takes one token; false when the bucket is empty. */
  take(): boolean {
    const now = this.#now();
    this.#tokens = Math.min(this.#capacity, this.#tokens + (now - this.#last) * this.#ratePerMs);
    this.#last = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
