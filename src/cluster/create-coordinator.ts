import type { Coordinator } from "./coordinator.js";
import type { CoordinatorOptions } from "./coordinator-options.js";
import { InProcessCoordinator } from "./in-process-coordinator.js";
import type { InProcessHub } from "./in-process-hub.js";

export interface CreateCoordinatorOptions extends CoordinatorOptions {
  /** redis:// URL; unset means the embedded in-process coordinator (config `redis.url`, env REDIS_URL). */
  redisUrl?: string;
  /** Prefix of every Redis key and channel (config `redis.keyPrefix`, default "talkgate:"). */
  keyPrefix?: string;
  /** In-process only: share state with other in-process coordinators (tests). */
  hub?: InProcessHub;
  /** In-process only: persist shared settings in this directory (e.g. `<dataDir>/settings`); Redis holds them otherwise. */
  settingsDir?: string;
  signal?: AbortSignal;
}

/**
 * Builds and starts the coordinator the configuration asks for: Redis when a
 * URL is given, in-process otherwise. Callers get the Coordinator interface
 * either way, so nothing above this layer branches on the backend.
 */
export async function createCoordinator(options: CreateCoordinatorOptions = {}): Promise<Coordinator> {
  const { redisUrl, keyPrefix = "talkgate:", hub, settingsDir, signal, ...common } = options;
  const coordinator: Coordinator =
    redisUrl === undefined || redisUrl === ""
      ? new InProcessCoordinator({
          ...common,
          ...(hub ? { hub } : {}),
          ...(settingsDir !== undefined ? { settingsDir } : {}),
        })
      : // ioredis is loaded only for a Redis URL (see job-scheduler.ts).
        new (await import("./redis-coordinator.js")).RedisCoordinator({ ...common, redisUrl, keyPrefix });
  await coordinator.start(signal);
  return coordinator;
}
