import { createHash, randomBytes } from "node:crypto";
import { TalkError } from "../core/index.js";

/**
 * What the validated voice webhook learned about a call; handed to the stream
 * WebSocket that presents the token, so the stream is tied to a request whose
 * signature we checked.
 */
export interface StreamCallMetadata {
  readonly callId: string;
  readonly accountId?: string;
  readonly from?: string;
  readonly to?: string;
  readonly direction?: string;
  /** Call mode asked for by the webhook URL (`?mode=stt-tts`), when it names one. */
  readonly mode?: string;
}

/** Options of the one-time stream token store. */
export interface StreamTokenStoreOptions {
  /**
   * How long a token stays valid after the webhook answered, ms. the carrier opens
   * the stream right after fetching the TwiML, so this is short. Default 30 000.
   */
  ttlMs?: number;
  /**
   * Outstanding tokens kept. When full, expired tokens are dropped first, then
   * the oldest (the one closest to expiry). Default 10 000.
   */
  maxTokens?: number;
  /** Clock in ms, injectable for tests. Default Date.now. */
  now?: () => number;
}

export type StreamTokenRejection = "unknown" | "expired" | "call_mismatch";

export type StreamTokenResult =
  | { readonly ok: true; readonly call: StreamCallMetadata }
  | { readonly ok: false; readonly reason: StreamTokenRejection };

interface Entry {
  readonly call: StreamCallMetadata;
  readonly expiresAt: number;
}

const DEFAULTS = Object.freeze({ ttlMs: 30_000, maxTokens: 10_000, now: Date.now });

/** Plaintext tokens are 32 random bytes in base64url: 43 characters. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("base64url");
}

/**
 * One-time stream tokens. Only SHA-256 hashes are held (a heap dump does not
 * leak live tokens); a token is looked up by its hash, so lookup time says
 * nothing about other tokens. Consuming a token removes it whatever the
 * outcome: a token presented for the wrong call is burned, not left to retry.
 */
export class StreamTokenStore {
  readonly #ttlMs: number;
  readonly #maxTokens: number;
  readonly #now: () => number;
  /** Insertion order is issue order, hence expiry order (one TTL for all). */
  readonly #entries = new Map<string, Entry>();

  constructor(options: StreamTokenStoreOptions = {}) {
    const ttlMs = options.ttlMs ?? DEFAULTS.ttlMs;
    const maxTokens = options.maxTokens ?? DEFAULTS.maxTokens;
    if (!Number.isFinite(ttlMs) || ttlMs <= 0) {
      throw new TalkError("config_invalid", `ttlMs must be a positive number, got ${String(ttlMs)}`);
    }
    if (!Number.isInteger(maxTokens) || maxTokens < 1) {
      throw new TalkError("config_invalid", `maxTokens must be a positive integer, got ${String(maxTokens)}`);
    }
    this.#ttlMs = ttlMs;
    this.#maxTokens = maxTokens;
    this.#now = options.now ?? DEFAULTS.now;
  }

  /** Outstanding tokens (expired ones included until the next purge). */
  get size(): number {
    return this.#entries.size;
  }

  /** Issues a token for `call`; the plaintext exists only in this return value. */
  issue(call: StreamCallMetadata): string {
    if (typeof call.callId !== "string" || call.callId.length === 0) {
      throw new TalkError("invalid_params", "A stream token needs the call's id.");
    }
    const now = this.#now();
    if (this.#entries.size >= this.#maxTokens) this.purgeExpired();
    while (this.#entries.size >= this.#maxTokens) {
      const oldest = this.#entries.keys().next().value as string;
      this.#entries.delete(oldest);
    }
    const token = randomBytes(32).toString("base64url");
    this.#entries.set(hashToken(token), { call: Object.freeze({ ...call }), expiresAt: now + this.#ttlMs });
    return token;
  }

  /**
   * Redeems a token once. When `expectedCallId` is given (the stream's
   * start's call id), the token must have been issued for that call.
   */
  consume(token: unknown, expectedCallId?: string): StreamTokenResult {
    if (typeof token !== "string" || !TOKEN_PATTERN.test(token)) return { ok: false, reason: "unknown" };
    const key = hashToken(token);
    const entry = this.#entries.get(key);
    if (entry === undefined) return { ok: false, reason: "unknown" };
    this.#entries.delete(key);
    if (this.#now() >= entry.expiresAt) return { ok: false, reason: "expired" };
    if (expectedCallId !== undefined && expectedCallId !== entry.call.callId) {
      return { ok: false, reason: "call_mismatch" };
    }
    return { ok: true, call: entry.call };
  }

  /** Drops expired tokens; returns how many. */
  purgeExpired(): number {
    const now = this.#now();
    let dropped = 0;
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt > now) break; // later entries expire later
      this.#entries.delete(key);
      dropped++;
    }
    return dropped;
  }

  /** Forgets every token (shutdown). */
  clear(): void {
    this.#entries.clear();
  }
}
