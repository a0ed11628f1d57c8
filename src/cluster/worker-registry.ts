import type { Redis } from "ioredis";
import type { WorkerInfo, WorkerRole, WorkerState } from "./coordinator.js";
import type { RedisKeys } from "./redis-connection.js";

/** How many heartbeats a worker may miss before it is no longer listed. */
const MISSED_BEATS = 3;

/**
 * Each worker's advertisement: a hash with its roles, state and load, expiring
 * after three missed heartbeats, and an index by last heartbeat so listing is
 * one range read. A worker that dies simply drops out.
 */
export class WorkerRegistry {
  readonly #redis: Redis;
  readonly #keys: RedisKeys;
  readonly #heartbeatMs: number;

  constructor(redis: Redis, keys: RedisKeys, heartbeatMs: number) {
    this.#redis = redis;
    this.#keys = keys;
    this.#heartbeatMs = heartbeatMs;
  }

  async publish(info: WorkerInfo): Promise<void> {
    const expiry = this.#heartbeatMs * MISSED_BEATS;
    const key = this.#keys.worker(info.id);
    await this.#redis
      .multi()
      .hset(key, {
        id: info.id,
        roles: JSON.stringify(info.roles),
        state: info.state,
        sessions: String(info.load.sessions),
        cpu: String(info.load.cpu),
        maxSessions: String(info.maxSessions),
        heartbeatAt: String(info.heartbeatAt),
        startedAt: String(info.startedAt),
      })
      .pexpire(key, expiry)
      .zadd(this.#keys.workers, info.heartbeatAt, info.id)
      .zremrangebyscore(this.#keys.workers, "-inf", info.heartbeatAt - expiry)
      .exec();
  }

  async list(): Promise<WorkerInfo[]> {
    const since = Date.now() - this.#heartbeatMs * MISSED_BEATS;
    const ids = await this.#redis.zrangebyscore(this.#keys.workers, since, "+inf");
    if (ids.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.#keys.worker(id));
    const rows = (await pipeline.exec()) ?? [];
    const workers: WorkerInfo[] = [];
    for (const [err, row] of rows) {
      const info = err ? undefined : parseWorker(row as Record<string, string>);
      if (info) workers.push(info);
    }
    return workers;
  }

  async remove(workerId: string): Promise<void> {
    await this.#redis.multi().del(this.#keys.worker(workerId)).zrem(this.#keys.workers, workerId).exec();
  }
}

function parseWorker(row: Record<string, string>): WorkerInfo | undefined {
  if (!row.id) return undefined;
  let roles: WorkerRole[] = [];
  try {
    const parsed: unknown = JSON.parse(row.roles ?? "[]");
    if (Array.isArray(parsed)) roles = parsed.filter((r): r is string => typeof r === "string");
  } catch {
    // A malformed row from another version: list it without roles rather than fail the listing.
  }
  return {
    id: row.id,
    roles,
    state: (row.state === "draining" ? "draining" : "ready") satisfies WorkerState,
    load: { sessions: Number(row.sessions ?? 0), cpu: Number(row.cpu ?? 0) },
    maxSessions: Number(row.maxSessions ?? 0),
    heartbeatAt: Number(row.heartbeatAt ?? 0),
    startedAt: Number(row.startedAt ?? 0),
  };
}
