import type { TalkLogger } from "../core/index.js";
import { renewIntervalMs } from "./coordinator-options.js";

export interface HeldLease {
  sessionId: string;
  ttlSec: number;
}

export interface LostLease {
  sessionId: string;
  reason: "lapsed" | "taken";
}

/** The narrow context a LeaseKeeper works through: one batched renewal and a loss report. */
export interface LeaseKeeperContext {
  /** Renews (or re-writes, after a backend restart) every lease; returns those this worker no longer holds. */
  renew(leases: HeldLease[]): Promise<LostLease[]>;
  onLost(lost: LostLease): void;
  logger: TalkLogger;
}

/**
 * Keeps the leases of the sessions this worker owns alive: one batched
 * renewal every third of the shortest TTL, so a lease survives two failed
 * renewals. The set of owned sessions is local state, which is what lets the
 * coordinator restore every lease after a Redis restart.
 */
export class LeaseKeeper {
  readonly #ctx: LeaseKeeperContext;
  readonly #held = new Map<string, number>();
  #timer: NodeJS.Timeout | undefined;
  #intervalMs: number;
  #inFlight: Promise<void> | undefined;
  #closed = false;

  constructor(ctx: LeaseKeeperContext, defaultTtlSec: number) {
    this.#ctx = ctx;
    this.#intervalMs = renewIntervalMs(defaultTtlSec);
  }

  get size(): number {
    return this.#held.size;
  }

  has(sessionId: string): boolean {
    return this.#held.has(sessionId);
  }

  ttlOf(sessionId: string): number | undefined {
    return this.#held.get(sessionId);
  }

  leases(): HeldLease[] {
    return [...this.#held].map(([sessionId, ttlSec]) => ({ sessionId, ttlSec }));
  }

  add(sessionId: string, ttlSec: number): void {
    if (this.#closed) return;
    this.#held.set(sessionId, ttlSec);
    const interval = renewIntervalMs(ttlSec);
    if (interval < this.#intervalMs) {
      this.#intervalMs = interval;
      this.#clearTimer();
    }
    this.#schedule();
  }

  remove(sessionId: string): boolean {
    const had = this.#held.delete(sessionId);
    if (this.#held.size === 0) this.#clearTimer();
    return had;
  }

  /** Renews every lease now (after a reconnect); concurrent calls share one renewal. */
  renewNow(): Promise<void> {
    if (this.#inFlight) return this.#inFlight;
    if (this.#closed || this.#held.size === 0) return Promise.resolve();
    const run = async (): Promise<void> => {
      try {
        const lost = await this.#ctx.renew(this.leases());
        for (const entry of lost) {
          // Only report leases still held: a release racing the renewal is not a loss.
          if (this.#held.delete(entry.sessionId)) this.#ctx.onLost(entry);
        }
      } catch (err) {
        // Backend down: the leases are still held locally and are re-written on the next tick.
        this.#ctx.logger.debug({ err }, "lease renewal failed; retrying next tick");
      } finally {
        this.#inFlight = undefined;
      }
    };
    this.#inFlight = run();
    return this.#inFlight;
  }

  /** Stops renewing without touching the backend (close releases separately; a crash simply stops). */
  close(): void {
    this.#closed = true;
    this.#clearTimer();
  }

  #schedule(): void {
    if (this.#timer || this.#closed || this.#held.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.renewNow().finally(() => this.#schedule());
    }, this.#intervalMs);
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
