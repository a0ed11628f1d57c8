/**
 * Stream credentials any worker can verify: the answer document (inbound) or
 * the dial (outbound) hands the carrier a token naming the call, which the
 * carrier presents when it opens the media stream, possibly to another
 * worker behind the same front door. The token is signed (HMAC-SHA256 with a
 * secret every worker shares: `coordinator.claims.sharedSecret`, so a
 * cluster needs no setting for it) and short-lived, so it is verified
 * without state; it is made single-use by a one-time claim on its nonce
 * (cluster-wide through Redis when clustered, in memory otherwise). The
 * call's metadata travels inside it, so the worker that takes the stream
 * creates the call's session.
 *
 * Wire form: `t1` + hex(JSON claims) + hex(first 16 bytes of the MAC):
 * letters and digits only, because some carriers (Plivo's extraHeaders)
 * accept nothing else.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { OneTimeClaims } from "../cluster/index.js";
import { TalkError } from "../core/index.js";

/** What a stream token says about its call. */
export interface StreamCallMetadata {
  /** The carrier's call id (inbound), or our dial id (outbound: the carrier's id is not known when dialling). */
  readonly callId: string;
  readonly accountId?: string;
  readonly from?: string;
  readonly to?: string;
  readonly direction?: string;
  /** Call mode asked for by the webhook URL (`?mode=stt-tts`), when it names one. */
  readonly mode?: string;
}

export interface StreamClaims extends StreamCallMetadata {
  /** Issued by the voice webhook (inbound) or a dial of ours (outbound). */
  readonly kind: "inbound" | "outbound";
  /** The carrier the token was issued for (`twilio`): another carrier's stream cannot use it. */
  readonly carrier: string;
}

export type StreamTokenRejection =
  /** No token at all. */
  | "missing"
  /** Not a token of ours: malformed or its signature does not verify. */
  | "unknown"
  | "expired"
  /** Issued for another call or carrier (burned: a token is tried once). */
  | "call_mismatch"
  /** Already redeemed (by this worker or another). */
  | "reused"
  /** The single-use check could not be made (Redis unreachable): refused, the carrier may retry. */
  | "unavailable";

export type StreamTokenResult =
  | { readonly ok: true; readonly claims: StreamClaims; readonly resumeKey: string }
  | { readonly ok: false; readonly reason: StreamTokenRejection };

export interface StreamTokensOptions {
  claims: OneTimeClaims;
  /** Clock in ms, injectable for tests. Default Date.now. */
  now?: () => number;
}

const SECRET_NAME = "telephony-stream-token";
const MAC_BYTES = 16;
const PREFIX = "t1";
const MAX_TOKEN_CHARS = 2048;
const TOKEN_PATTERN = /^t1(?:[0-9a-f]{2})+$/;

/** The hash of a token: the key a detached call is resumed by (the carrier presents the same token again). */
export function resumeKeyOf(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("base64url");
}

interface Payload {
  k: "i" | "o";
  c: string;
  i: string;
  a?: string;
  f?: string;
  t?: string;
  d?: string;
  m?: string;
  /** Expiry, epoch ms. */
  e: number;
  /** Nonce (single-use key). */
  n: string;
}

export class StreamTokens {
  readonly #claims: OneTimeClaims;
  readonly #now: () => number;
  #secret: Promise<Buffer> | undefined;

  constructor(options: StreamTokensOptions) {
    this.#claims = options.claims;
    this.#now = options.now ?? Date.now;
  }

  /** Issues a token for `claims`, valid for `ttlMs`. Rejects owner_unreachable when the shared secret cannot be read. */
  async issue(claims: StreamClaims, ttlMs: number): Promise<string> {
    if (typeof claims.callId !== "string" || claims.callId.length === 0)
      throw new TalkError("invalid_params", "A stream token needs the call's id.");
    if (!Number.isInteger(ttlMs) || ttlMs < 1000 || ttlMs > 3_600_000)
      throw new TalkError("invalid_params", `A stream token's ttlMs is 1000..3600000, got ${String(ttlMs)}.`);
    const payload: Payload = {
      k: claims.kind === "inbound" ? "i" : "o",
      c: claims.carrier,
      i: claims.callId,
      ...(claims.accountId !== undefined ? { a: claims.accountId } : {}),
      ...(claims.from !== undefined ? { f: claims.from } : {}),
      ...(claims.to !== undefined ? { t: claims.to } : {}),
      ...(claims.direction !== undefined ? { d: claims.direction } : {}),
      ...(claims.mode !== undefined ? { m: claims.mode } : {}),
      e: this.#now() + ttlMs,
      n: randomBytes(12).toString("hex"),
    };
    const body = Buffer.from(JSON.stringify(payload), "utf8").toString("hex");
    const mac = await this.#mac(body);
    return `${PREFIX}${body}${mac.toString("hex")}`;
  }

  /**
   * Verifies a token (signature, expiry, carrier and, when given, the call)
   * without spending it. Used to decide whether this worker can serve the
   * stream before the single-use claim is made.
   */
  async verify(token: unknown, expect: { carrier: string; callId?: string }): Promise<StreamTokenResult> {
    if (token === undefined || token === "") return { ok: false, reason: "missing" };
    if (typeof token !== "string" || token.length > MAX_TOKEN_CHARS || !TOKEN_PATTERN.test(token))
      return { ok: false, reason: "unknown" };
    const macHex = token.slice(-MAC_BYTES * 2);
    const body = token.slice(PREFIX.length, -MAC_BYTES * 2);
    let expected: Buffer;
    try {
      expected = await this.#mac(body);
    } catch {
      return { ok: false, reason: "unavailable" };
    }
    const given = Buffer.from(macHex, "hex");
    if (given.length !== expected.length || !timingSafeEqual(given, expected))
      return { ok: false, reason: "unknown" };
    const payload = parsePayload(body);
    if (!payload) return { ok: false, reason: "unknown" };
    if (this.#now() >= payload.e) return { ok: false, reason: "expired" };
    const claims = claimsOf(payload);
    if (claims.carrier !== expect.carrier) return { ok: false, reason: "call_mismatch" };
    if (expect.callId !== undefined && claims.kind === "inbound" && claims.callId !== expect.callId)
      return { ok: false, reason: "call_mismatch" };
    return { ok: true, claims, resumeKey: resumeKeyOf(token) };
  }

  /** Verifies, then spends the token: the first redemption anywhere wins, later ones are `reused`. */
  async redeem(token: unknown, expect: { carrier: string; callId?: string }): Promise<StreamTokenResult> {
    const verified = await this.verify(token, expect);
    if (!verified.ok) return verified;
    const payload = parsePayload((token as string).slice(PREFIX.length, -MAC_BYTES * 2))!;
    try {
      const ttlMs = Math.max(1, Math.ceil(payload.e - this.#now()));
      const first = await this.#claims.claim(`stream-token:${payload.n}`, ttlMs);
      return first ? verified : { ok: false, reason: "reused" };
    } catch {
      return { ok: false, reason: "unavailable" };
    }
  }

  async #mac(body: string): Promise<Buffer> {
    this.#secret ??= this.#claims.sharedSecret(SECRET_NAME);
    // A failed read (Redis down at the first call) is retried by the next caller.
    const secret = await this.#secret.catch((err: unknown) => {
      this.#secret = undefined;
      throw err;
    });
    return createHmac("sha256", secret).update(body, "utf8").digest().subarray(0, MAC_BYTES);
  }
}

function parsePayload(hex: string): Payload | undefined {
  try {
    const value = JSON.parse(Buffer.from(hex, "hex").toString("utf8")) as unknown;
    if (typeof value !== "object" || value === null) return undefined;
    const p = value as Record<string, unknown>;
    if ((p["k"] !== "i" && p["k"] !== "o") || typeof p["c"] !== "string" || typeof p["i"] !== "string")
      return undefined;
    if (typeof p["e"] !== "number" || typeof p["n"] !== "string") return undefined;
    for (const key of ["a", "f", "t", "d", "m"])
      if (p[key] !== undefined && typeof p[key] !== "string") return undefined;
    return p as unknown as Payload;
  } catch {
    return undefined;
  }
}

function claimsOf(p: Payload): StreamClaims {
  return Object.freeze({
    kind: p.k === "i" ? "inbound" : "outbound",
    carrier: p.c,
    callId: p.i,
    ...(p.a !== undefined ? { accountId: p.a } : {}),
    ...(p.f !== undefined ? { from: p.f } : {}),
    ...(p.t !== undefined ? { to: p.t } : {}),
    ...(p.d !== undefined ? { direction: p.d } : {}),
    ...(p.m !== undefined ? { mode: p.m } : {}),
  });
}
