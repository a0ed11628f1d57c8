/** Waits with a bound, for tests: a hang fails with the step's name instead of the test's timeout. */

/** Rejects when `promise` does not settle within `ms` (a bounded wait, not a latency assertion). */
export async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Retries `attempt` until it resolves (bounded), for state that converges (Redis back, registry updated). */
export async function eventually<T>(ms: number, attempt: () => Promise<T>, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      return await attempt();
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${what}: did not succeed within ${ms} ms (last error: ${String(last)})`);
}
