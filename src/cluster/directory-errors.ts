import { TalkError } from "../core/index.js";

// Apart from redis-connection.ts so the in-process backends that share this error do not load ioredis.
/** The error for a cross-worker operation attempted while Redis is unreachable. */
export function directoryUnavailable(what: string, cause?: unknown): TalkError {
  return new TalkError("owner_unreachable", `Cannot ${what}: the cluster directory (Redis) is unreachable.`, {
    cause,
    details: { backend: "redis", redis: "unreachable" },
  });
}
