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
 * the Talk API (contract; the implementation lands with the surface-context work).
 */
export interface RequestAuthorizer {
  check(request: AuthorizedRequest, scope: GatewayScope): AccessDecision;
}
