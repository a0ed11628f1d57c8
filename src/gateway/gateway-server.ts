import type { AddressInfo } from "node:net";
import Fastify, { LogController } from "fastify";
import type { FastifyInstance } from "fastify";
import fastifyWebsocket from "@fastify/websocket";
import { TalkError, WindowedLogLimiter } from "../core/index.js";
import { NOOP_LOGGER } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import type { TerminalReason } from "../core/index.js";
import { TALK_SUBPROTOCOL, TokenAuthorizer } from "./auth.js";
import type { GatewayConnection } from "./gateway-connection.js";
import type { GatewayDeps } from "./gateway-deps.js";
import { GatewayMetrics } from "./gateway-metrics.js";
import { resolveGatewayOptions } from "./gateway-options.js";
import type { GatewayOptions, GatewayOptionsInput } from "./gateway-options.js";
import type { GatewayState } from "./gateway-state.js";
import type { RequestAuthorizer } from "./request-authorizer.js";
import { httpRoutes } from "./http-routes.js";
import { isSurfaceName, MethodRegistry, type SurfaceMethodDefinition } from "./method-registry.js";
import type { GatewayEventName } from "./protocol/frames.js";
import { talkMethods } from "./methods/talk.js";
import { talkClientMethods } from "./methods/talk-client.js";
import { talkSessionMethods } from "./methods/talk-session.js";
import { CLOSE_CODES } from "./protocol/frames.js";
import { RpcDispatcher } from "./rpc-dispatcher.js";
import { RemoteSessions } from "./remote-sessions.js";
import { SendQueueBudget } from "./send-queue-budget.js";
import { ServerSockets } from "./server-sockets.js";
import { SessionOwnership } from "./session-owners.js";
import { TalkModeStore } from "./talk-mode-store.js";
import { talkRoute } from "./talk-route.js";
import { websocketErrorHandler } from "./ws-protocol-fault.js";
import { useTalkErrorReplies } from "./reply-error.js";

export type GatewayServerState = "created" | "listening" | "closing" | "closed";

export interface GatewayServer {
  /** The Fastify instance: telephony and meetings register their plugins (and `websocket: true` routes) on it. */
  readonly app: FastifyInstance;
  readonly options: Readonly<GatewayOptions>;
  /** Prometheus registry holder; other surfaces may register metrics on `metrics.registry`. */
  readonly metrics: GatewayMetrics;
  /**
   * The one bearer-token authorizer (auth.tokens, auth.anonymousScopes): the
   * Talk API uses it, and surfaces get it through their SurfaceContext so
   * every HTTP route follows the same rule (src/gateway/auth.ts).
   */
  readonly authorizer: RequestAuthorizer;
  readonly state: GatewayServerState;
  /** Method names the server answers: the public Talk API, then any surface methods registered. */
  readonly methods: readonly string[];
  /** Scope needed per method. */
  readonly scopes: Readonly<Record<string, string>>;
  /**
   * Adds a surface method (e.g. telephony's `telephony.call`) to the
   * WebSocket API: `<surface>.<verb>`, never in the reserved `talk.*`
   * namespace, with a scope, a strict zod params schema and a handler that
   * sees only the caller and a logger. Validated now (config_invalid).
   */
  registerMethod<P, R>(name: string, definition: SurfaceMethodDefinition<P, R>): void;
  /**
   * Sends a surface event (e.g. `voicewake.changed`) to every open Talk API
   * connection: `{type:"event", event, payload}`, no seq (not session
   * state). The name follows the surface-method rule (`<surface>.<event>`,
   * never `talk.*`); config_invalid otherwise.
   */
  broadcast(event: string, payload: unknown): void;
  /**
   * Drain: refuses new sessions (talk.session.create, talk.client.create) with
   * shutting_down; existing sessions, joins and their verbs continue.
   */
  stopAcceptingSessions(): void;
  /**
   * Closes a session this Gateway holds through its controller (the cluster
   * lost its lease). Resolves false when the session is not held here.
   */
  closeSession(sessionId: string, reason: TerminalReason): Promise<boolean>;
  /** Binds `options.host`; `port` overrides `options.port` (0 = pick a free port). */
  listen(overrides?: { port?: number }): Promise<{ urls: string[]; port: number }>;
  /**
   * Stops accepting, closes every Gateway session (each gets its terminal
   * event), closes sockets with 1001, then the HTTP server. Idempotent:
   * returns the close in progress.
   */
  close(): Promise<void>;
}

/** How long sockets get to finish the closing handshake before they are cut. */
const SOCKET_CLOSE_TIMEOUT_MS = 2000;

/**
 * Builds the public Talk API server. Options are validated here, so a bad
 * configuration fails before anything binds (for example no auth tokens with
 * a non-loopback host: `config_invalid` naming `server.host`).
 */
export function createGatewayServer(deps: GatewayDeps, input: GatewayOptionsInput = {}): GatewayServer {
  const options = Object.freeze(resolveGatewayOptions(input));
  const logger: TalkLogger = deps.logger ?? NOOP_LOGGER;
  const app = gatewayFastify(deps.logger);
  const sockets = new ServerSockets(app.server);
  const { registry, sessions, cluster, dispatcher, mode, metrics, budget } = gatewayParts(
    deps,
    options,
    logger,
  );
  const connections = new Set<GatewayConnection>();
  const auth = new TokenAuthorizer(options.auth);
  let serverState: GatewayServerState = "created";
  const state: GatewayState = {
    options,
    deps,
    auth,
    dispatcher,
    sessions,
    mode,
    metrics,
    budget,
    logger,
    connections,
    get accepting() {
      return serverState === "created" || serverState === "listening";
    },
  };
  registerGatewayRoutes(app, state);

  let closing: Promise<void> | undefined;
  const server: GatewayServer = {
    app,
    options,
    metrics,
    authorizer: auth,
    get methods() {
      return Object.freeze(registry.names());
    },
    get scopes() {
      return Object.freeze(registry.scopes());
    },
    registerMethod(name, definition) {
      if (serverState === "closing" || serverState === "closed")
        throw new TalkError("invalid_state", "The gateway is closing.");
      registry.registerSurface(name, definition);
    },
    broadcast: (event, payload) => broadcastSurfaceEvent(connections, event, payload),
    get state() {
      return serverState;
    },
    stopAcceptingSessions() {
      sessions.stopAccepting();
    },
    async closeSession(sessionId, reason) {
      const owned = sessions.get(sessionId);
      if (!owned) return false;
      await sessions.close(owned, reason);
      return true;
    },
    async listen(overrides = {}) {
      if (serverState !== "created")
        throw new TalkError("invalid_state", `gateway: listen() called while ${serverState}`);
      await app.listen({ host: options.host, port: overrides.port ?? options.port });
      serverState = "listening";
      return announceListening(app, state, registry.names().length);
    },
    close() {
      closing ??= closeGateway(
        { app, sockets, sessions, cluster, connections, metrics, logger },
        (next) => (serverState = next),
      );
      return closing;
    },
  };
  return server;
}

/** Fastify with the process's logger (request logging off), or silent; errors answered in the Talk shape. */
function gatewayFastify(logger: GatewayDeps["logger"]): FastifyInstance {
  const app = (logger
    ? Fastify({
        loggerInstance: logger,
        logController: new LogController({ disableRequestLogging: true }),
      })
    : Fastify({ logger: false })) as unknown as FastifyInstance;
  // Before any route: every route and plugin answers Fastify's own errors in the Talk error shape.
  useTalkErrorReplies(app);
  return app;
}

/** The server's parts: method registry, session ownership (local and, in a cluster, remote), dispatcher, metrics. */
function gatewayParts(deps: GatewayDeps, options: GatewayOptions, logger: TalkLogger) {
  // Replies queued and not read, bounded per socket, per token and in total: a slow reader is cut, slowest first.
  const budget = new SendQueueBudget({
    maxPerConnection: options.maxBufferedBytes,
    maxPerClient: options.maxBufferedBytesPerClient,
    maxTotal: options.maxBufferedBytesTotal,
  });
  const metrics = new GatewayMetrics(deps.runtime, () => budget.queuedBytes);
  const registry = new MethodRegistry([talkMethods, talkClientMethods, talkSessionMethods]);
  const sessions = new SessionOwnership({
    runtime: deps.runtime,
    reconnectGraceMs: options.reconnectGraceMs,
    maxSessionsPerConnection: options.maxSessionsPerConnection,
    logger,
  });
  const mode = new TalkModeStore();
  const cluster = deps.cluster
    ? new RemoteSessions({
        cluster: deps.cluster,
        runtime: deps.runtime,
        sessions,
        lostRetentionMs: 10 * 60_000,
        logger,
      })
    : undefined;
  const dispatcher = new RpcDispatcher({ registry, deps, options, sessions, cluster, mode, metrics, logger });
  return { registry, sessions, cluster, dispatcher, mode, metrics, budget };
}

/** The WebSocket plugin (subprotocol, going-away close of every socket), the HTTP routes and the Talk route. */
function registerGatewayRoutes(app: FastifyInstance, state: GatewayState): void {
  void app.register(fastifyWebsocket, {
    options: {
      maxPayload: state.options.maxPayloadBytes,
      // Browsers authenticate with the ["talkgate", "bearer.<token>"] subprotocols; we answer "talkgate".
      handleProtocols: (protocols) => (protocols.has(TALK_SUBPROTOCOL) ? TALK_SUBPROTOCOL : false),
    },
    // Client protocol faults on any WebSocket route (invalid UTF-8, oversized frames): rate-limited warnings.
    errorHandler: websocketErrorHandler(state.logger, new WindowedLogLimiter()),
    // Sockets of other routes (telephony, meetings) also learn we are going away.
    preClose(done) {
      for (const client of app.websocketServer.clients)
        client.close(CLOSE_CODES.goingAway, "server shutting down");
      app.websocketServer.close(() => done());
    },
  });
  void app.register(httpRoutes(state));
  void app.register(talkRoute(state));
}

/** Sends a surface event to every open Talk API connection; the name must be `<surface>.<event>` outside talk.*. */
function broadcastSurfaceEvent(connections: Set<GatewayConnection>, event: string, payload: unknown): void {
  if (!isSurfaceName(event)) {
    throw new TalkError(
      "config_invalid",
      `gateway: surface event "${String(event).slice(0, 128)}" must be named <surface>.<event> outside talk.*`,
    );
  }
  // Surface events are not in GATEWAY_EVENTS (the core set); the frame shape is the same.
  for (const connection of connections) connection.sendEvent(event as GatewayEventName, payload);
}

/** Logs the bound URLs (and a loud warning when auth is off); returns them with the port. */
function announceListening(
  app: FastifyInstance,
  state: GatewayState,
  methodCount: number,
): { urls: string[]; port: number } {
  const { logger, options } = state;
  if (!state.auth.enabled) {
    logger.warn(
      { host: options.host },
      "auth disabled: loopback only (configure auth.tokens to bind other interfaces)",
    );
  }
  const addresses = app.addresses().filter((a): a is AddressInfo => typeof a !== "string");
  const urls = addresses.map((a) => `http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}`);
  // The process's own line names every URL (src/cli/serve.ts); this one is for embedders' debugging.
  logger.debug({ urls, methods: methodCount }, "talk gateway listening");
  return { urls, port: addresses[0]?.port ?? 0 };
}

/** What closing the server closes, in order. */
interface ClosingParts {
  app: FastifyInstance;
  sockets: ServerSockets;
  sessions: SessionOwnership;
  cluster: RemoteSessions | undefined;
  connections: Set<GatewayConnection>;
  metrics: GatewayMetrics;
  logger: TalkLogger;
}

/** Sessions first (their owners still receive the terminal events), then the sockets, the HTTP server, metrics. */
async function closeGateway(
  parts: ClosingParts,
  setState: (state: GatewayServerState) => void,
): Promise<void> {
  const { app, sockets, sessions, cluster, connections, metrics, logger } = parts;
  setState("closing");
  await sessions.closeAll("closed");
  cluster?.close();
  try {
    await closeSockets(connections);
  } catch (err) {
    logger.error({ err }, "closing sockets failed");
  }
  try {
    await closeHttpServer(app, sockets, logger);
  } catch (err) {
    logger.error({ err }, "closing the HTTP server failed");
  }
  metrics.close();
  setState("closed");
}

/**
 * Closes Fastify: the other routes' WebSockets get 1001, then the HTTP server
 * stops. Its close waits for every socket it accepted, and a peer decides
 * when some end: a connection that sent no request or half of one (a browser
 * keeps sockets it preconnected and never used in its pool for seconds), a
 * WebSocket whose close frame is never answered. Whatever is still open after
 * SOCKET_CLOSE_TIMEOUT_MS is cut, so the close always ends.
 */
async function closeHttpServer(
  app: FastifyInstance,
  sockets: ServerSockets,
  logger: TalkLogger,
): Promise<void> {
  const timer = setTimeout(() => {
    const cut = sockets.cut();
    logger.info(
      { sockets: cut, afterMs: SOCKET_CLOSE_TIMEOUT_MS },
      "gateway close: connections still open were cut",
    );
  }, SOCKET_CLOSE_TIMEOUT_MS);
  try {
    await app.close();
  } finally {
    clearTimeout(timer);
  }
}

/** Closes the Talk API sockets with 1001; those that have not finished the handshake in time are cut. */
async function closeSockets(connections: Set<GatewayConnection>): Promise<void> {
  const open = [...connections];
  for (const c of open) c.close(CLOSE_CODES.goingAway, "server shutting down");
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, SOCKET_CLOSE_TIMEOUT_MS);
  });
  await Promise.race([Promise.all(open.map((c) => c.whenClosed())), timeout]);
  clearTimeout(timer);
  for (const c of open) if (!c.closed) c.terminate();
}
