import type { IncomingHttpHeaders } from "node:http";
import type { GatewayScope } from "./gateway-options.js";

/** What the one authorizer decides for an HTTP request: ok, no valid token (401), or a token without the scope (403). */
export type AccessDecision = "ok" | "unauthorized" | "forbidden";

/** The request as the authorizer sees it: headers and the peer's address, nothing else. */
export interface AuthorizedRequest {
  headers: IncomingHttpHeaders;
  remoteAddress: string | undefined;
}

/**
 * Bearer-token authorization of HTTP routes, the same for every surface and
 * the Talk API. The implementation and its one rule (tokens, no tokens,
 * scope implication) is TokenAuthorizer in ./auth.ts.
 */
export interface RequestAuthorizer {
  check(request: AuthorizedRequest, scope: GatewayScope): AccessDecision;
}

/** The parts of a Fastify request the authorizer reads. */
export interface RouteRequest {
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string | undefined };
}

/** A route's check for one scope: `(request) => decision`, e.g. `routeCheck(ctx.authorizer, "admin")`. */
/** A route's check of its request against one scope. */
export type RouteCheck = (request: RouteRequest) => AccessDecision;

export function routeCheck(
  authorizer: RequestAuthorizer,
  scope: GatewayScope,
): (request: RouteRequest) => AccessDecision {
  return (request) =>
    authorizer.check({ headers: request.headers, remoteAddress: request.socket.remoteAddress }, scope);
}
