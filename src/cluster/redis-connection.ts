import { Redis, type RedisOptions } from "ioredis";
import { TalkError } from "../core/index.js";

/**
 * Turns a redis:// or rediss:// URL into ioredis options. Parsed here rather
 * than passed as a string so BullMQ (which wants an options object) and our
 * own connections are configured from one place.
 */
export function parseRedisUrl(url: string): RedisOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch (err) {
    throw new TalkError("config_invalid", "cluster: redisUrl is not a valid URL.", { cause: err });
  }
  if (parsed.protocol !== "redis:" && parsed.protocol !== "rediss:") {
    throw new TalkError("config_invalid", "cluster: redisUrl must be a redis:// or rediss:// URL.");
  }
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0)
    throw new TalkError("config_invalid", "cluster: redisUrl database must be a number.");
  const options: RedisOptions = {
    host: parsed.hostname || "127.0.0.1",
    port: parsed.port ? Number(parsed.port) : 6379,
    db,
  };
  if (parsed.username) options.username = decodeURIComponent(parsed.username);
  if (parsed.password) options.password = decodeURIComponent(parsed.password);
  if (parsed.protocol === "rediss:") options.tls = {};
  return options;
}

/** Reconnect quickly and forever: a Redis that comes back must be used again without a restart. */
export function reconnectDelay(times: number): number {
  return Math.min(50 * times, 500);
}

export type ConnectionRole = "commands" | "subscriber" | "reader";

/**
 * One connection per role. Commands fail fast while Redis is down (no offline
 * queue, no resend) so a cross-worker operation reports the outage at once
 * instead of hanging; the subscriber re-subscribes by itself on reconnect.
 */
export function createRedisConnection(base: RedisOptions, role: ConnectionRole, name: string): Redis {
  const common: RedisOptions = {
    ...base,
    connectionName: name,
    lazyConnect: true,
    retryStrategy: reconnectDelay,
    enableReadyCheck: true,
  };
  switch (role) {
    case "commands":
      return new Redis({
        ...common,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        commandTimeout: 2000,
      });
    case "reader":
      return new Redis({ ...common, enableOfflineQueue: false, maxRetriesPerRequest: 0 });
    case "subscriber":
      return new Redis({ ...common, autoResubscribe: true, maxRetriesPerRequest: 0 });
  }
}

/** All keys and channels of one deployment, under its prefix (see docs/cluster.md). */
export class RedisKeys {
  readonly prefix: string;
  constructor(prefix: string) {
    if (typeof prefix !== "string" || prefix.length === 0 || prefix.length > 128 || /\s/.test(prefix)) {
      throw new TalkError(
        "config_invalid",
        "cluster: keyPrefix must be 1-128 characters without whitespace.",
      );
    }
    this.prefix = prefix;
  }
  lease(sessionId: string): string {
    return `${this.prefix}lease:${sessionId}`;
  }
  get leases(): string {
    return `${this.prefix}leases`;
  }
  get leaseOwners(): string {
    return `${this.prefix}lease-owners`;
  }
  lost(sessionId: string): string {
    return `${this.prefix}lost:${sessionId}`;
  }
  events(sessionId: string): string {
    return `${this.prefix}events:${sessionId}`;
  }
  get lifecycle(): string {
    return `${this.prefix}lifecycle`;
  }
  worker(workerId: string): string {
    return `${this.prefix}worker:${workerId}`;
  }
  get workers(): string {
    return `${this.prefix}workers`;
  }
  commandChannel(workerId: string): string {
    return `${this.prefix}cmd:${workerId}`;
  }
  replyChannel(workerId: string): string {
    return `${this.prefix}reply:${workerId}`;
  }
  /** A shared setting: hash {revision, value}. */
  setting(name: string): string {
    return `${this.prefix}setting:${name}`;
  }
  /** Pub/sub channel announcing every setting change. */
  get settingsChannel(): string {
    return `${this.prefix}settings`;
  }
  /** BullMQ's prefix (its keys are `<prefix>:<queue>:...`). */
  get bullPrefix(): string {
    return `${this.prefix}bull`;
  }
}
