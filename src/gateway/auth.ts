/**
 * The one bearer-token authorizer of the process: the Talk API, the meetings
 * routes and telephony's call routes all ask it the same question ("does this
 * request hold scope X?") and get the same answer.
 *
 * The rule (docs/api.md, "Authentication"):
 * - Tokens configured (auth.tokens): the request must present one, as
 *   `Authorization: Bearer <token>` (or, on a WebSocket upgrade, the
 *   `bearer.<token>` subprotocol). A missing, malformed or unknown token is
 *   `unauthorized`; a known token without the scope is `forbidden`.
 *   `admin` implies `direct-tools`, which implies `write`, which implies `read`.
 * - No tokens configured: authentication is off, so the server binds
 *   loopback only (resolveGatewayOptions refuses any other host). A peer
 *   that is not on loopback is `unauthorized` all the same (a second fence);
 *   a loopback peer is the anonymous principal with `anonymousScopes`
 *   (default `read` + `write`, never `admin` unless configured).
 *
 * Tokens are compared as SHA-256 digests with a constant-time comparison,
 * against every configured token whichever matches, so neither a token's
 * length, a prefix, nor which token matched leaks through timing.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { GatewayScope } from "./gateway-options.js";
import type { AccessDecision, AuthorizedRequest, RequestAuthorizer } from "./request-authorizer.js";

/** Who is calling, resolved once per request (or once when the WebSocket is accepted). */
export interface Principal {
  /** Token name from config, or "anonymous" when auth is disabled. */
  readonly name: string;
  /** Effective scopes, with implications expanded (admin ⊇ direct-tools ⊇ write ⊇ read). */
  readonly scopes: ReadonlySet<GatewayScope>;
  /** True for the caller of a server with no tokens configured (authentication off). */
  readonly anonymous?: true;
}

/** Browsers cannot set headers on a WebSocket: they offer ["talkgate", "bearer.<token>"] as subprotocols. */
export const TALK_SUBPROTOCOL = "talkgate";
const BEARER_SUBPROTOCOL_PREFIX = "bearer.";

const IMPLIED: Record<GatewayScope, GatewayScope[]> = {
  read: ["read"],
  write: ["write", "read"],
  "direct-tools": ["direct-tools", "write", "read"],
  admin: ["admin", "direct-tools", "write", "read"],
};

export function expandScopes(scopes: readonly GatewayScope[]): ReadonlySet<GatewayScope> {
  return new Set(scopes.flatMap((s) => IMPLIED[s]));
}

/** A configured bearer token, as `auth.tokens` holds it. */
export interface BearerToken {
  /** Who the token belongs to, for logs. Default "token-<index>". */
  name?: string;
  token: string;
  scopes: readonly GatewayScope[];
}

export interface TokenAuthorizerOptions {
  /** The configured tokens (auth.tokens). None: authentication is off (loopback peers are anonymous). */
  tokens: readonly BearerToken[];
  /** Scopes of the anonymous principal when no tokens are configured. Default ["read", "write"]. */
  anonymousScopes?: readonly GatewayScope[];
  /** Compares two equal-length digests. Default crypto.timingSafeEqual; tests inject a counting one. */
  compare?: (a: Buffer, b: Buffer) => boolean;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

/** True for a peer address only this machine can have (127.0.0.0/8, ::1, and their IPv4-mapped forms). */
export function isLoopbackPeer(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.toLowerCase().startsWith("::ffff:") ? address.slice(7) : address;
  return v4 === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** The one authorizer: see the rule at the top of this file. */
export class TokenAuthorizer implements RequestAuthorizer {
  readonly #tokens: { name: string; digest: Buffer; scopes: ReadonlySet<GatewayScope> }[];
  readonly #anonymous: Principal;
  readonly #compare: (a: Buffer, b: Buffer) => boolean;

  constructor(options: TokenAuthorizerOptions) {
    this.#tokens = options.tokens.map((t, i) => ({
      name: t.name ?? `token-${i}`,
      digest: digest(t.token),
      scopes: expandScopes(t.scopes),
    }));
    this.#anonymous = Object.freeze({
      name: "anonymous",
      scopes: expandScopes(options.anonymousScopes ?? ["read", "write"]),
      anonymous: true,
    });
    this.#compare = options.compare ?? timingSafeEqual;
  }

  /** True when tokens are configured (authentication is on). */
  get enabled(): boolean {
    return this.#tokens.length > 0;
  }

  /** The caller's principal, or undefined when the request is not authenticated (401). */
  authenticate(request: AuthorizedRequest): Principal | undefined {
    if (!this.enabled) return isLoopbackPeer(request.remoteAddress) ? this.#anonymous : undefined;
    const presented = bearerFrom(request.headers);
    if (presented === undefined) return undefined;
    const d = digest(presented);
    let match: Principal | undefined;
    // Every token is compared, whichever matches: the time taken does not tell which one did.
    for (const t of this.#tokens) {
      const equal = this.#compare(d, t.digest);
      if (equal && match === undefined) match = { name: t.name, scopes: t.scopes };
    }
    return match;
  }

  check(request: AuthorizedRequest, scope: GatewayScope): AccessDecision {
    const principal = this.authenticate(request);
    if (!principal) return "unauthorized";
    return principal.scopes.has(scope) ? "ok" : "forbidden";
  }
}

/**
 * The presented bearer token: `Authorization: Bearer <token>` (one token,
 * nothing after it), else a `bearer.<token>` WebSocket subprotocol. A present
 * but malformed Authorization header yields none (no fallback).
 */
export function bearerFrom(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  if (typeof auth === "string") {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(auth);
    return m?.[1];
  }
  const protocols = headers["sec-websocket-protocol"];
  if (typeof protocols === "string") {
    for (const p of protocols.split(",").map((s) => s.trim())) {
      if (p.startsWith(BEARER_SUBPROTOCOL_PREFIX) && p.length > BEARER_SUBPROTOCOL_PREFIX.length) {
        return p.slice(BEARER_SUBPROTOCOL_PREFIX.length);
      }
    }
  }
  return undefined;
}
