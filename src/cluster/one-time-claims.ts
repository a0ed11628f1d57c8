/**
 * One-time claims every worker agrees on: the first `claim(key)` within its
 * time-to-live wins, every later one (on any worker) loses. Used for
 * single-use credentials that any worker may be handed (a carrier's stream
 * token is verified statelessly by its signature; this makes it single-use
 * cluster-wide). Plus one shared random secret per name, created by the first
 * worker that asks, so workers can sign and verify each other's tokens
 * without an operator setting.
 *
 * - in-process: a map in this process (expired entries swept on use);
 * - Redis: `SET <prefix>once:<key> 1 PX <ttl> NX`, and
 *   `SET <prefix>secret:<name> <hex> NX` then `GET` for the secret.
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { TalkError } from "../core/index.js";
import { directoryUnavailable } from "./directory-errors.js";

export interface OneTimeClaims {
  /**
   * True the first time `key` is claimed within `ttlMs` (cluster-wide with
   * Redis), false after. Rejects invalid_params for a bad key or ttl,
   * owner_unreachable while Redis is unreachable.
   */
  claim(key: string, ttlMs: number): Promise<boolean>;
  /** 32 random bytes shared by every worker under `name` (created by the first to ask). */
  sharedSecret(name: string): Promise<Buffer>;
}

const KEY = /^[A-Za-z0-9:._-]{1,200}$/;

function checkClaim(key: string, ttlMs: number): void {
  if (typeof key !== "string" || !KEY.test(key))
    throw new TalkError("invalid_params", "A claim key is 1-200 of A-Z, a-z, 0-9 and ':._-'.");
  if (!Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > 86_400_000)
    throw new TalkError(
      "invalid_params",
      `A claim's ttlMs is an integer in 1..86400000, got ${String(ttlMs)}.`,
    );
}

/** The embedded backend: claims and secrets live in this process. */
export class InProcessOneTimeClaims implements OneTimeClaims {
  /** key -> expiry (ms); insertion order is not expiry order (ttls differ), so sweeps scan. */
  readonly #claims = new Map<string, number>();
  readonly #secrets = new Map<string, Buffer>();
  readonly #now: () => number;
  readonly #maxEntries: number;

  constructor(options: { now?: () => number; maxEntries?: number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#maxEntries = options.maxEntries ?? 100_000;
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    checkClaim(key, ttlMs);
    const now = this.#now();
    const expiry = this.#claims.get(key);
    if (expiry !== undefined && expiry > now) return false;
    if (this.#claims.size >= this.#maxEntries) this.#sweep(now);
    this.#claims.set(key, now + ttlMs);
    return true;
  }

  async sharedSecret(name: string): Promise<Buffer> {
    checkClaim(name, 1);
    let secret = this.#secrets.get(name);
    if (!secret) {
      secret = randomBytes(32);
      this.#secrets.set(name, secret);
    }
    return secret;
  }

  #sweep(now: number): void {
    for (const [key, expiry] of this.#claims) if (expiry <= now) this.#claims.delete(key);
    // Still full of live claims: the oldest go (a claim that is forgotten early can be claimed again,
    // which only matters for credentials far older than any of their ttls).
    while (this.#claims.size >= this.#maxEntries) {
      const oldest = this.#claims.keys().next().value as string;
      this.#claims.delete(oldest);
    }
  }
}

/** The Redis backend: one key per claim, expiring with it. */
export class RedisOneTimeClaims implements OneTimeClaims {
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #secrets = new Map<string, Promise<Buffer>>();

  constructor(redis: Redis, prefix: string) {
    this.#redis = redis;
    this.#prefix = prefix;
  }

  async claim(key: string, ttlMs: number): Promise<boolean> {
    checkClaim(key, ttlMs);
    try {
      const set = await this.#redis.set(`${this.#prefix}once:${key}`, "1", "PX", ttlMs, "NX");
      return set === "OK";
    } catch (err) {
      throw unreachable("claim a one-time key", err);
    }
  }

  sharedSecret(name: string): Promise<Buffer> {
    checkClaim(name, 1);
    let secret = this.#secrets.get(name);
    if (!secret) {
      secret = this.#readOrCreate(name);
      // A failed read is not cached: the next caller tries Redis again.
      secret.catch(() => this.#secrets.delete(name));
      this.#secrets.set(name, secret);
    }
    return secret;
  }

  async #readOrCreate(name: string): Promise<Buffer> {
    const key = `${this.#prefix}secret:${name}`;
    try {
      await this.#redis.set(key, randomBytes(32).toString("hex"), "NX");
      const hex = await this.#redis.get(key);
      if (hex === null || !/^[0-9a-f]{64}$/.test(hex))
        throw new TalkError("internal", `The shared secret ${name} in Redis is malformed.`);
      return Buffer.from(hex, "hex");
    } catch (err) {
      if (err instanceof TalkError) throw err;
      throw unreachable("read a shared secret", err);
    }
  }
}

function unreachable(what: string, err: unknown): TalkError {
  return directoryUnavailable(what, err);
}
