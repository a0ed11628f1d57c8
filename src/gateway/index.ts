// The public Talk API server. Internals (connections, dispatcher, ownership) stay out of this facade.
export { createGatewayServer } from "./gateway-server.js";
export type { GatewayServer, GatewayServerState } from "./gateway-server.js";
export type {
  GatewayDeps,
  SpeakRequest,
  ControllerRequest,
  ClientSessionMintRequest,
  ClientSessionMint,
  GatewayToolCall,
  GatewayToolDispatcher,
  ReadinessReport,
  GatewayCluster,
  GatewayClusterCommand,
  GatewayClusterVerb,
} from "./gateway-deps.js";
export {
  GATEWAY_DEFAULTS,
  GATEWAY_SCOPES,
  resolveGatewayOptions,
  isLoopbackHost,
} from "./gateway-options.js";
export type {
  GatewayOptions,
  GatewayOptionsInput,
  GatewayScope,
  GatewayToken,
  GatewayRateLimit,
} from "./gateway-options.js";
export type { GatewayMetrics } from "./gateway-metrics.js";
export * from "./protocol/frames.js";
export * from "./protocol/talk-methods.js";
export type { SurfaceMethodDefinition, SurfaceMethodContext } from "./method-registry.js";
export { ConnectionFollows, type FollowHandle, type FollowingConnection } from "./connection-follows.js";
export { loopbackBaseUrl } from "./loopback-url.js";
export { TokenAuthorizer, isLoopbackPeer, type Principal, type TokenAuthorizerOptions } from "./auth.js";
export {
  routeCheck,
  type RouteCheck,
  type AccessDecision,
  type AuthorizedRequest,
  type RequestAuthorizer,
  type RouteRequest,
} from "./request-authorizer.js";
export { replyError } from "./reply-error.js";
export type { SurfaceContext } from "./surface-context.js";
export {
  staticPagesPlugin,
  collectStaticFiles,
  sendStaticFile,
  etagOf,
  STATIC_PAGES_CSP,
  STATIC_CONTENT_TYPES,
  type StaticPagesOptions,
  type StaticFile,
} from "./static-pages.js";
