import { TalkError } from "./errors.js";

/** The `cancelled` error for an aborted signal, keeping a TalkError reason as it is. */
export function cancelledError(signal: AbortSignal): TalkError {
  const reason: unknown = signal.reason;
  if (reason instanceof TalkError && reason.code === "cancelled") return reason;
  return new TalkError("cancelled", undefined, { cause: reason });
}

/** An abort reason that says why, readable by the work that observes it. */
export function cancelReason(reason: string, message?: string): TalkError {
  return new TalkError("cancelled", message ?? `Cancelled: ${reason}.`, { details: { reason } });
}

/**
 * Aborts `child` when `parent` aborts, through one listener on `parent` that is
 * removed as soon as the child aborts or the returned `unlink` is called.
 * For a child that ends long before its parent (a turn of a session): on
 * Node 20, AbortSignal.any([parent, ...]) leaves a WeakRef in the parent's
 * dependants set for as long as the parent lives, even after the combined
 * signal is gone (nodejs/node#55351), so a long call's session signal grew
 * by one entry per turn.
 */
export function abortWith(parent: AbortSignal, child: AbortController): () => void {
  if (parent.aborted) {
    child.abort(parent.reason);
    return () => {};
  }
  const follow = (): void => child.abort(parent.reason);
  const unlink = (): void => parent.removeEventListener("abort", follow);
  parent.addEventListener("abort", follow, { once: true });
  child.signal.addEventListener("abort", unlink, { once: true });
  return unlink;
}

export interface AbortableRun<T> {
  /**
   * Settles with the work's value, or rejects with `cancelled` as soon as the
   * signal aborts, so callers never wait on work that ignores its signal and
   * never see a result that arrived after the abort (a stale final).
   */
  result: Promise<T>;
  /** Resolves when the underlying work has actually settled (for orderly close). */
  settled: Promise<void>;
}

/**
 * Runs `work` under `signal`. Work is never started once the signal has
 * aborted: that is what keeps queued work from starting after a cancellation.
 */
export function runAbortable<T>(
  signal: AbortSignal,
  work: (signal: AbortSignal) => Promise<T>,
): AbortableRun<T> {
  if (signal.aborted) {
    return { result: Promise.reject(cancelledError(signal)), settled: Promise.resolve() };
  }
  let underlying: Promise<T>;
  try {
    underlying = Promise.resolve(work(signal));
  } catch (err) {
    underlying = Promise.reject(err);
  }
  const settled = underlying.then(
    () => undefined,
    () => undefined,
  );
  const result = new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(cancelledError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    underlying
      .then(
        (value) => (signal.aborted ? reject(cancelledError(signal)) : resolve(value)),
        (err: unknown) => reject(signal.aborted ? cancelledError(signal) : err),
      )
      .finally(() => signal.removeEventListener("abort", onAbort));
  });
  return { result, settled };
}

/** Resolves after `ms`, or rejects `cancelled` as soon as `signal` aborts (the timer is cleared). */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(cancelledError(signal));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(cancelledError(signal));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Waits `ms`, or less when `signal` (any of them) aborts; never rejects (the
 * caller looks at why it woke). Node's timers/promises setTimeout rejects on
 * abort instead. Several signals are listened to directly rather than through
 * AbortSignal.any, which would leave a trace on each of them per sleep (a
 * meeting bot sleeps between polls for its whole life: see abortWith).
 */
export function interruptibleSleep(ms: number, signal: AbortSignal | readonly AbortSignal[]): Promise<void> {
  const signals = signalList(signal);
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    if (signals.some((s) => s.aborted)) return done();
    for (const s of signals) s.addEventListener("abort", done, { once: true });
  });
}

function signalList(signal: AbortSignal | readonly AbortSignal[]): readonly AbortSignal[] {
  return signal instanceof AbortSignal ? [signal] : signal;
}

/** A signal for one operation under long-lived ones; `unlink()` when the operation ends. */
export interface LinkedSignal {
  readonly signal: AbortSignal;
  /** Removes its listeners from the parents and its timer. Idempotent. */
  unlink(): void;
}

/**
 * A signal that aborts with the reason of the first of `parents` to abort, or
 * with a `TimeoutError` after `timeoutMs`: AbortSignal.any([...parents,
 * AbortSignal.timeout(ms)]) for one operation (a request, a delivery, a
 * follow) under signals that outlive it (the process's shutdown). Unlike
 * AbortSignal.any it leaves nothing on the parents once unlinked (Node 20
 * keeps a trace of every combined signal on each source for as long as the
 * source lives: see abortWith), and its timer goes with it.
 */
export function linkedSignal(parents: readonly AbortSignal[], timeoutMs?: number): LinkedSignal {
  const controller = new AbortController();
  const unlinks: Array<() => void> = [];
  // An aborted parent aborts it at once; the parents after it are not listened to.
  for (const parent of parents) if (!controller.signal.aborted) unlinks.push(abortWith(parent, controller));
  let timer: NodeJS.Timeout | undefined;
  if (timeoutMs !== undefined && !controller.signal.aborted) {
    timer = setTimeout(
      () => controller.abort(new DOMException("The operation was aborted due to timeout", "TimeoutError")),
      timeoutMs,
    );
    // As AbortSignal.timeout's: a pending request's timer does not keep the process alive.
    timer.unref();
  }
  const unlink = (): void => {
    clearTimeout(timer);
    for (const u of unlinks) u();
  };
  controller.signal.addEventListener("abort", unlink, { once: true });
  return { signal: controller.signal, unlink };
}
