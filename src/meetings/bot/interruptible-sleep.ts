/**
 * Waits `ms`, or less when `signal` aborts; never rejects (the caller looks at
 * why it woke). Node's timers/promises setTimeout rejects on abort instead.
 */
export function interruptibleSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}
