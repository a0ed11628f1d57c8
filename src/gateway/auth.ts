import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { GatewayOptions, GatewayScope } from "./gateway-options.js";

/** Who is calling, resolved once when the WebSocket is accepted. */
export interface Principal {
  /** Token name from config, or "anonymous" when auth is disabled. */
  readonly name: string;
  /** Effective scopes, with implications expanded (admin ⊇ write ⊇ read). */
  readonly scopes: ReadonlySet<GatewayScope>;
}

/** Browsers cannot set headers on a WebSocket: they offer ["talkgate", "bearer.<token>"] as subprotocols. */
export const TALK_SUBPROTOCOL = "talkgate";
const BEARER_SUBPROTOCOL_PREFIX = "bearer.";

const IMPLIED: Record<GatewayScope, GatewayScope[]> = {
  read: ["read"],
  write: ["write", "read"],
  admin: ["admin", "write", "read"],
};

export function expandScopes(scopes: readonly GatewayScope[]): ReadonlySet<GatewayScope> {
  return new Set(scopes.flatMap((s) => IMPLIED[s]));
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

/**
 * Bearer-token authentication. Tokens are compared as SHA-256 digests with a
 * constant-time comparison, so neither the length nor a prefix of a token
 * leaks through timing.
 */
export class GatewayAuth {
  readonly #tokens: { name: string; digest: Buffer; scopes: ReadonlySet<GatewayScope> }[];
  readonly #anonymous: Principal;

  constructor(options: GatewayOptions["auth"]) {
    this.#tokens = options.tokens.map((t) => ({
      name: t.name,
      digest: digest(t.token),
      scopes: expandScopes(t.scopes),
    }));
    this.#anonymous = Object.freeze({ name: "anonymous", scopes: expandScopes(options.anonymousScopes) });
  }

  get enabled(): boolean {
    return this.#tokens.length > 0;
  }

  /** The caller's principal, or undefined when a token is required and missing or wrong. */
  authenticate(headers: IncomingHttpHeaders): Principal | undefined {
    if (!this.enabled) return this.#anonymous;
    const presented = bearerFrom(headers);
    if (presented === undefined) return undefined;
    const d = digest(presented);
    let match: Principal | undefined;
    // Compare against every token so the time taken does not reveal which one matched.
    for (const t of this.#tokens) {
      if (timingSafeEqual(d, t.digest) && match === undefined) match = { name: t.name, scopes: t.scopes };
    }
    return match;
  }
}

function bearerFrom(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  if (typeof auth === "string") {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
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
