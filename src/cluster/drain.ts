import { TalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import { NOOP_LOGGER } from "../core/index.js";

/** The narrow view of "work in progress" a drain waits on (sessions, running jobs). */
export interface ActiveWork {
  /** How many sessions/jobs are still running. */
  count(): number;
  /** Calls back whenever the count may have changed; returns the removal. */
  onChange(listener: () => void): () => void;
}

/** What a drain needs from the process, and nothing more. */
export interface DrainInputs {
  /** Refuse new sessions and jobs (gateway answers shutting_down, job queue pauses). */
  stopAccepting(): Promise<void> | void;
  /** Advertise `draining` in the worker registry (coordinator.setWorkerState("draining")). */
  markDraining(): Promise<void> | void;
  work: ActiveWork;
}

export interface DrainOptions {
  /** Longest wait for active work to end, ms (default 30 000; keep below terminationGracePeriodSeconds). */
  limitMs?: number;
  logger?: TalkLogger;
}

export interface DrainResult {
  /** True when all work ended before the limit. */
  drained: boolean;
  /** Work still running when the drain gave up (0 when drained). */
  remaining: number;
  waitedMs: number;
}

/**
 * SIGTERM handling as data: stop taking work, say so in the registry, wait for
 * what runs to end (up to a limit), then resolve so the caller closes and
 * exits 0. drain() is idempotent: a second SIGTERM gets the drain in progress.
 */
export class Drainer {
  readonly #inputs: DrainInputs;
  readonly #limitMs: number;
  readonly #logger: TalkLogger;
  #draining: Promise<DrainResult> | undefined;

  constructor(inputs: DrainInputs, options: DrainOptions = {}) {
    const limitMs = options.limitMs ?? 30_000;
    if (!Number.isInteger(limitMs) || limitMs < 0)
      throw new TalkError("config_invalid", "drain: limitMs must be a non-negative integer.");
    this.#inputs = inputs;
    this.#limitMs = limitMs;
    this.#logger = options.logger ?? NOOP_LOGGER;
  }

  get draining(): boolean {
    return this.#draining !== undefined;
  }

  drain(signal?: AbortSignal): Promise<DrainResult> {
    this.#draining ??= this.#drain(signal);
    return this.#draining;
  }

  async #drain(signal?: AbortSignal): Promise<DrainResult> {
    const started = performance.now();
    // Each step is contained: a registry write failing (Redis down) must not stop the drain.
    for (const [name, step] of [
      ["stopAccepting", () => this.#inputs.stopAccepting()],
      ["markDraining", () => this.#inputs.markDraining()],
    ] as const) {
      try {
        await step();
      } catch (err) {
        this.#logger.warn({ err, step: name }, "drain step failed; continuing");
      }
    }
    this.#logger.info({ active: this.#inputs.work.count(), limitMs: this.#limitMs }, "draining");
    const drained = await waitForIdle(this.#inputs.work, this.#limitMs, signal);
    const result = {
      drained,
      remaining: this.#inputs.work.count(),
      waitedMs: Math.round(performance.now() - started),
    };
    this.#logger.info(result, drained ? "drained" : "drain limit reached");
    return result;
  }
}

/** Resolves true when the count reaches 0, false at the limit or on abort. */
function waitForIdle(work: ActiveWork, limitMs: number, signal?: AbortSignal): Promise<boolean> {
  if (work.count() === 0) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    let off = (): void => {};
    const finish = (idle: boolean): void => {
      clearTimeout(timer);
      off();
      signal?.removeEventListener("abort", onAbort);
      resolve(idle);
    };
    const onAbort = (): void => finish(false);
    const timer = setTimeout(() => finish(false), limitMs);
    off = work.onChange(() => {
      if (work.count() === 0) finish(true);
    });
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted || work.count() === 0) finish(work.count() === 0);
  });
}

/**
 * A counter of active work, for inputs that do not keep one already. Each
 * begin() returns its own idempotent end().
 */
export class ActiveCounter implements ActiveWork {
  #count = 0;
  readonly #listeners = new Set<() => void>();

  begin(): () => void {
    this.#count++;
    this.#notify();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.#count--;
      this.#notify();
    };
  }

  count(): number {
    return this.#count;
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) listener();
  }
}

/**
 * Wires SIGTERM (and SIGINT) to a drain, then `onDrained` (close the server,
 * exit 0). Returns the removal of the signal handlers.
 */
export function drainOnSignals(
  drainer: Drainer,
  onDrained: (result: DrainResult) => Promise<void> | void,
  signals: readonly NodeJS.Signals[] = ["SIGTERM", "SIGINT"],
): () => void {
  const handler = (): void => {
    void drainer.drain().then(onDrained);
  };
  for (const s of signals) process.on(s, handler);
  return () => {
    for (const s of signals) process.off(s, handler);
  };
}
