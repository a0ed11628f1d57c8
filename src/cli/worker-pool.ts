/**
 * `talkgate serve --workers N`: N server processes on one machine sharing the
 * port through node:cluster (the primary accepts and hands connections out in
 * turn), each a full worker of the cluster layer. A call's webhook, its media
 * stream and Talk API clients may land on any of them: they meet through
 * Redis (the session directory, stream-token claims, jobs): `redis.url`, or
 * else a private Redis the primary runs for the pool (cli/local-redis.ts).
 *
 * The primary runs no app. It forks the workers, restarts one that dies
 * (with backoff; a worker that dies before it listens stops the pool: that
 * is a configuration or environment fault, not a crash to retry), turns
 * SIGTERM/SIGINT into a drain of every worker and exits when they have, and
 * answers `/metrics` for the whole machine: a worker asked for metrics asks
 * the primary, which gathers every worker's registry (prom-client's own
 * cluster aggregation) so a scrape never sees one worker's counters only.
 *
 * Workers ignore signals themselves (a terminal's Ctrl-C reaches the whole
 * process group; a worker must not count the primary's forwarded signal as
 * a second one) and take orders from the primary over IPC.
 */
import cluster, { type Worker } from "node:cluster";
import { AggregatorRegistry, type Registry } from "prom-client";

/** Messages between the primary and its workers (besides prom-client's own). */
export type PoolMessage =
  | { type: "talkgate:listening" }
  | { type: "talkgate:stop"; now: boolean }
  | { type: "talkgate:metrics-request"; id: number }
  | { type: "talkgate:metrics-response"; id: number; text?: string; error?: string };

export interface PoolLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WorkerPoolOptions {
  workers: number;
  logger: PoolLogger;
  /** Environment of worker `index` (0-based) over the primary's own, e.g. a distinct worker id. */
  env?: (index: number) => Record<string, string>;
  /** First restart delay of a worker that died, ms; doubles per quick death up to 30 s. Default 1000. */
  restartDelayMs?: number;
  /** Aborted: drain every worker as on a first signal, and resolve 1 once they have stopped. */
  stop?: AbortSignal;
}

const MAX_RESTART_DELAY_MS = 30_000;
/** A worker that stayed up this long has its restart delay reset. */
const STABLE_AFTER_MS = 60_000;

function isPoolMessage(message: unknown): message is PoolMessage {
  return (
    typeof message === "object" &&
    message !== null &&
    typeof (message as { type?: unknown }).type === "string" &&
    (message as { type: string }).type.startsWith("talkgate:")
  );
}

/**
 * Runs the primary until every worker has stopped after a signal (resolves
 * 0), the pool failed to start, or `stop` stopped it (resolves 1). Call only when
 * `cluster.isPrimary`.
 */
export function runWorkerPool(options: WorkerPoolOptions): Promise<number> {
  const { logger } = options;
  const baseDelay = options.restartDelayMs ?? 1000;
  const aggregator = new AggregatorRegistry();
  const slots = new Map<Worker, { index: number; startedAt: number; listening: boolean }>();
  const delays = new Map<number, number>();
  let stopping = false;
  let failed = false;
  let settle!: (code: number) => void;
  const done = new Promise<number>((resolve) => (settle = resolve));

  const fork = (index: number): void => {
    const worker = cluster.fork({ ...options.env?.(index), TALKGATE_POOL_INDEX: String(index) });
    slots.set(worker, { index, startedAt: Date.now(), listening: false });
    worker.on("message", (message: unknown) => {
      if (!isPoolMessage(message)) return;
      if (message.type === "talkgate:listening") {
        const slot = slots.get(worker);
        if (slot) slot.listening = true;
        if ([...slots.values()].every((s) => s.listening) && slots.size === options.workers)
          logger.info({ workers: options.workers }, "every worker is listening");
      } else if (message.type === "talkgate:metrics-request") {
        aggregator.clusterMetrics().then(
          (text) => send(worker, { type: "talkgate:metrics-response", id: message.id, text }),
          (err: unknown) =>
            send(worker, {
              type: "talkgate:metrics-response",
              id: message.id,
              error: err instanceof Error ? err.message : String(err),
            }),
        );
      }
    });
  };

  cluster.on("exit", (worker, code, signal) => {
    const slot = slots.get(worker);
    if (!slot) return;
    slots.delete(worker);
    if (stopping || failed) {
      if (slots.size === 0) settle(failed ? 1 : 0);
      return;
    }
    if (!slot.listening) {
      // It never served: the same fault would kill every restart (port taken, a provider refused at start).
      failed = true;
      logger.error({ worker: slot.index, code, signal }, "a worker died before listening: stopping the pool");
      for (const other of slots.keys()) send(other, { type: "talkgate:stop", now: true });
      if (slots.size === 0) settle(1);
      return;
    }
    const uptime = Date.now() - slot.startedAt;
    const delay = uptime > STABLE_AFTER_MS ? baseDelay : (delays.get(slot.index) ?? baseDelay);
    delays.set(slot.index, Math.min(delay * 2, MAX_RESTART_DELAY_MS));
    logger.warn({ worker: slot.index, code, signal, restartInMs: delay }, "worker died; restarting it");
    setTimeout(() => {
      if (!stopping && !failed) fork(slot.index);
    }, delay).unref();
  });

  let signals = 0;
  const stop = (signal: NodeJS.Signals | "abort"): void => {
    signals += 1;
    stopping = true;
    // Stopped from within (the pool's own fault, e.g. its private Redis gone): the pool did not end well.
    if (signal === "abort") failed = true;
    const now = signals > 1;
    logger.info(
      { signal, workers: slots.size },
      now ? "second signal: workers exit now" : "draining every worker",
    );
    for (const worker of slots.keys()) send(worker, { type: "talkgate:stop", now });
    if (slots.size === 0) settle(failed ? 1 : 0);
  };
  const onAbort = (): void => stop("abort");
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  options.stop?.addEventListener("abort", onAbort, { once: true });

  for (let i = 0; i < options.workers; i++) fork(i);
  if (options.stop?.aborted) onAbort();
  return done.finally(() => {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    options.stop?.removeEventListener("abort", onAbort);
  });
}

function send(worker: Worker, message: PoolMessage): void {
  if (worker.isConnected()) worker.send(message);
}

/** The worker side: what the pool's primary asks of the server running here. */
export interface PoolMember {
  /** The registry the primary's metrics gathering reads here. */
  gather(registry: Registry): void;
  /** Tells the primary this worker serves. */
  listening(): void;
  /** The whole machine's metrics text (the primary aggregates every worker's registry). */
  machineMetrics(): Promise<string>;
}

const METRICS_TIMEOUT_MS = 7000;

/**
 * Joins the pool from a worker, first thing: answers the primary's metrics
 * gathering (from the registry given to gather()), runs `stop(now)` when the primary says so or goes away, and
 * keeps OS signals from killing this process directly.
 */
export function joinWorkerPool(stop: (now: boolean) => void): PoolMember {
  // Until gather() names this worker's registry, the primary's gathering gets prom-client's empty global one.
  AggregatorRegistry.setRegistries([]);
  // Constructing one adds prom-client's worker listener (it answers the primary's gathering).
  new AggregatorRegistry();
  const pending = new Map<number, (m: { text?: string; error?: string }) => void>();
  let nextId = 0;
  process.on("message", (message: unknown) => {
    if (!isPoolMessage(message)) return;
    if (message.type === "talkgate:stop") stop(message.now);
    else if (message.type === "talkgate:metrics-response") {
      pending.get(message.id)?.(message);
      pending.delete(message.id);
    }
  });
  // The primary is gone (killed): nobody will forward a signal, so drain on our own.
  process.on("disconnect", () => stop(false));
  const ignore = (): void => {};
  process.on("SIGINT", ignore);
  process.on("SIGTERM", ignore);
  return {
    gather: (registry) => AggregatorRegistry.setRegistries([registry]),
    listening: () => process.send?.({ type: "talkgate:listening" } satisfies PoolMessage),
    machineMetrics: () =>
      new Promise<string>((resolve, reject) => {
        const id = nextId++;
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error("the pool's primary did not answer the metrics request"));
        }, METRICS_TIMEOUT_MS);
        pending.set(id, (m) => {
          clearTimeout(timer);
          if (m.text !== undefined) resolve(m.text);
          else reject(new Error(m.error ?? "metrics gathering failed"));
        });
        if (!process.connected) {
          clearTimeout(timer);
          pending.delete(id);
          reject(new Error("the pool's primary is gone"));
          return;
        }
        process.send?.({ type: "talkgate:metrics-request", id } satisfies PoolMessage);
      }),
  };
}
