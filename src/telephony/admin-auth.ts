/**
 * Who may place and watch calls: a bearer token from auth.tokens with the
 * scope a route needs (admin implies write implies read). With no tokens
 * configured the server is loopback-only (the gateway refuses other hosts),
 * and loopback peers are admitted, as the Talk API admits them.
 *
 * `tokenAuthorizer` is telephony's own RequestAuthorizer, used by
 * `registerTelephony` until the composition root hands every surface the one
 * authorizer of the surface context; routes only see `AdminCheck`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyRequest } from "fastify";
import { GATEWAY_SCOPES, type GatewayScope } from "../gateway/gateway-options.js";
import type { AccessDecision, RequestAuthorizer } from "../gateway/request-authorizer.js";
import { isLoopbackAddress } from "./public-url.js";

export interface BearerToken {
  token: string;
  scopes: readonly string[];
}

/** What a route asks about its request: may it place or read calls (admin)? */
export type AdminCheck = (request: FastifyRequest) => AccessDecision;

/** The admin check of a route, over the surface's authorizer. */
export function adminCheckOf(authorizer: RequestAuthorizer): AdminCheck {
  return (request) =>
    authorizer.check({ headers: request.headers, remoteAddress: request.socket.remoteAddress }, "admin");
}

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();
const rank = (scope: string): number => GATEWAY_SCOPES.indexOf(scope as GatewayScope);

export function tokenAuthorizer(tokens: readonly BearerToken[]): RequestAuthorizer {
  const known = tokens.map((t) => ({ digest: digest(t.token), rank: Math.max(-1, ...t.scopes.map(rank)) }));
  return {
    check(request, scope) {
      if (known.length === 0) return isLoopbackAddress(request.remoteAddress) ? "ok" : "unauthorized";
      const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "");
      if (!m) return "unauthorized";
      const d = digest(m[1]!);
      let match: { rank: number } | undefined;
      // Every token is compared, so timing does not tell which one matched.
      for (const k of known) if (timingSafeEqual(d, k.digest) && !match) match = k;
      if (!match) return "unauthorized";
      return match.rank >= rank(scope) ? "ok" : "forbidden";
    },
  };
}
