import type { Redis } from "ioredis";
import type { HeldLease, LostLease } from "./lease-keeper.js";
import type { RedisKeys } from "./redis-connection.js";

// Every script reads the clock with TIME, so lease deadlines are in Redis's
// time and workers on hosts with skewed clocks agree on when a lease lapsed.
const NOW =
  "local t = redis.call('TIME'); local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)";

/** KEYS: lease, leases, owners, lost, events. ARGV: sessionId, workerId, ttlMs. Returns the owner. */
const CLAIM = `${NOW}
local cur = redis.call('GET', KEYS[1])
if cur and cur ~= ARGV[2] then return cur end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[3]), ARGV[1])
redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
redis.call('DEL', KEYS[4])
redis.call('PERSIST', KEYS[5])
return ARGV[2]`;

/**
 * KEYS: leases, owners. ARGV: prefix, workerId, retentionMs, then (sessionId, ttlMs) pairs.
 * Renews each lease, or writes it again when it vanished without being
 * declared lost (Redis restarted without data). Returns lost (sessionId, reason) pairs.
 */
const RENEW = `${NOW}
local out = {}
for i = 4, #ARGV, 2 do
  local sid = ARGV[i]
  local ttl = tonumber(ARGV[i + 1])
  local lk = ARGV[1] .. 'lease:' .. sid
  local cur = redis.call('GET', lk)
  if cur and cur ~= ARGV[2] then
    table.insert(out, sid); table.insert(out, 'taken')
  elseif (not cur) and redis.call('EXISTS', ARGV[1] .. 'lost:' .. sid) == 1 then
    table.insert(out, sid); table.insert(out, 'lapsed')
  else
    redis.call('SET', lk, ARGV[2], 'PX', ttl)
    redis.call('ZADD', KEYS[1], now + ttl, sid)
    redis.call('HSET', KEYS[2], sid, ARGV[2])
    redis.call('PEXPIRE', ARGV[1] .. 'events:' .. sid, ttl + tonumber(ARGV[3]))
  end
end
return out`;

/** KEYS: lease, leases, owners, events. ARGV: sessionId, workerId, retentionMs. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[2] then redis.call('DEL', KEYS[1]) end
if redis.call('HGET', KEYS[3], ARGV[1]) == ARGV[2] then
  redis.call('HDEL', KEYS[3], ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
end
redis.call('PEXPIRE', KEYS[4], ARGV[3])
return 1`;

/**
 * KEYS: leases, owners, lifecycle. ARGV: prefix, lifecycleMaxLen, tombstoneMs, retentionMs, limit.
 * Declares each lapsed lease lost exactly once (whichever worker's sweep runs
 * first wins the ZREM): a tombstone for the late owner, and a lifecycle entry
 * every worker reads.
 */
const SWEEP = `${NOW}
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[5]))
local n = 0
for _, sid in ipairs(due) do
  local lk = ARGV[1] .. 'lease:' .. sid
  local pttl = redis.call('PTTL', lk)
  if pttl > 0 then
    redis.call('ZADD', KEYS[1], now + pttl, sid)
  else
    local owner = redis.call('HGET', KEYS[2], sid) or ''
    redis.call('DEL', lk)
    redis.call('ZREM', KEYS[1], sid)
    redis.call('HDEL', KEYS[2], sid)
    redis.call('SET', ARGV[1] .. 'lost:' .. sid, owner, 'PX', ARGV[3])
    redis.call('PEXPIRE', ARGV[1] .. 'events:' .. sid, ARGV[4])
    redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[2], '*', 'sid', sid, 'owner', owner, 'at', tostring(now))
    n = n + 1
  end
end
return n`;

const TOMBSTONE_MS = 600_000;
const LIFECYCLE_MAXLEN = 10_000;
const SWEEP_LIMIT = 500;

type ScriptRedis = Redis & {
  talkgateClaim(
    lease: string,
    leases: string,
    owners: string,
    lost: string,
    events: string,
    ...argv: string[]
  ): Promise<string>;
  talkgateRenew(leases: string, owners: string, ...argv: string[]): Promise<string[]>;
  talkgateRelease(
    lease: string,
    leases: string,
    owners: string,
    events: string,
    ...argv: string[]
  ): Promise<number>;
  talkgateSweep(leases: string, owners: string, lifecycle: string, ...argv: string[]): Promise<number>;
};

/**
 * The session directory in Redis: lease keys with a TTL (what locate reads), a
 * deadline index the sweeper scans, and owner names for the loss notice. Each
 * transition is one Lua script, so no two workers ever see half of one.
 */
export class RedisDirectory {
  readonly #redis: ScriptRedis;
  readonly #keys: RedisKeys;
  readonly #workerId: string;
  readonly #retentionMs: number;

  constructor(redis: Redis, keys: RedisKeys, workerId: string, retentionMs: number) {
    redis.defineCommand("talkgateClaim", { numberOfKeys: 5, lua: CLAIM });
    redis.defineCommand("talkgateRenew", { numberOfKeys: 2, lua: RENEW });
    redis.defineCommand("talkgateRelease", { numberOfKeys: 4, lua: RELEASE });
    redis.defineCommand("talkgateSweep", { numberOfKeys: 3, lua: SWEEP });
    this.#redis = redis as ScriptRedis;
    this.#keys = keys;
    this.#workerId = workerId;
    this.#retentionMs = retentionMs;
  }

  /** Returns the owner after the claim: this worker, or the one that already holds it. */
  claim(sessionId: string, ttlSec: number): Promise<string> {
    const k = this.#keys;
    return this.#redis.talkgateClaim(
      k.lease(sessionId),
      k.leases,
      k.leaseOwners,
      k.lost(sessionId),
      k.events(sessionId),
      sessionId,
      this.#workerId,
      String(ttlSec * 1000),
    );
  }

  async renew(leases: HeldLease[]): Promise<LostLease[]> {
    if (leases.length === 0) return [];
    const argv = [this.#keys.prefix, this.#workerId, String(this.#retentionMs)];
    for (const { sessionId, ttlSec } of leases) argv.push(sessionId, String(ttlSec * 1000));
    const flat = await this.#redis.talkgateRenew(this.#keys.leases, this.#keys.leaseOwners, ...argv);
    const lost: LostLease[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      lost.push({ sessionId: flat[i] as string, reason: flat[i + 1] === "taken" ? "taken" : "lapsed" });
    }
    return lost;
  }

  async release(sessionId: string): Promise<void> {
    const k = this.#keys;
    await this.#redis.talkgateRelease(
      k.lease(sessionId),
      k.leases,
      k.leaseOwners,
      k.events(sessionId),
      sessionId,
      this.#workerId,
      String(this.#retentionMs),
    );
  }

  async locate(sessionId: string): Promise<string | undefined> {
    return (await this.#redis.get(this.#keys.lease(sessionId))) ?? undefined;
  }

  /** Returns how many lapsed leases this sweep declared lost. */
  sweep(): Promise<number> {
    const k = this.#keys;
    return this.#redis.talkgateSweep(
      k.leases,
      k.leaseOwners,
      k.lifecycle,
      k.prefix,
      String(LIFECYCLE_MAXLEN),
      String(TOMBSTONE_MS),
      String(this.#retentionMs),
      String(SWEEP_LIMIT),
    );
  }
}
