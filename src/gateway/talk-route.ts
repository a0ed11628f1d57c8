import type { IncomingMessage } from "node:http";
import type { FastifyPluginAsync } from "fastify";
import { TalkError } from "../core/index.js";
import type { TalkErrorCode } from "../core/index.js";
import type { Principal } from "./auth.js";
import { GatewayConnection } from "./gateway-connection.js";
import type { GatewayState } from "./gateway-state.js";

/** HTTP body of a refused upgrade, in the same error shape as response frames. */
export function httpError(code: TalkErrorCode, message?: string): { error: ReturnType<TalkError["toJSON"]> } {
  return { error: new TalkError(code, message).toJSON() };
}

/**
 * The `/talk` WebSocket route: authentication and connection limits run as a
 * preValidation hook, so a refused client gets a plain HTTP status (401, 503)
 * and never an open socket. Heartbeat and the talk.mode broadcast live and
 * die with the plugin.
 */
export function talkRoute(state: GatewayState): FastifyPluginAsync {
  return async (app) => {
    const principals = new WeakMap<IncomingMessage, Principal>();
    const heartbeat = setInterval(() => {
      for (const connection of state.connections) connection.heartbeat();
    }, state.options.heartbeatMs);
    heartbeat.unref();
    const offMode = state.mode.onChange((mode) => {
      for (const connection of state.connections) connection.sendEvent("talk.mode", mode);
    });
    app.addHook("onClose", async () => {
      clearInterval(heartbeat);
      offMode();
    });

    app.get(
      "/talk",
      {
        websocket: true,
        preValidation: async (request, reply) => {
          if (!state.accepting) return reply.code(503).send(httpError("shutting_down"));
          const principal = state.auth.authenticate({
            headers: request.headers,
            remoteAddress: request.socket.remoteAddress,
          });
          if (!principal) {
            return reply
              .code(401)
              .header("www-authenticate", 'Bearer realm="talkgate"')
              .send(httpError("unauthorized"));
          }
          if (state.connections.size >= state.options.maxConnections) {
            return reply
              .code(503)
              .send(
                httpError("rate_limited", "The server holds as many connections as it is configured for."),
              );
          }
          principals.set(request.raw, principal);
          return undefined;
        },
      },
      (socket, request) => {
        const principal = principals.get(request.raw);
        if (!principal || !state.accepting) {
          socket.close(1008, "unauthorized");
          return;
        }
        const connection = new GatewayConnection(socket, principal, {
          options: state.options,
          dispatcher: state.dispatcher,
          sessions: state.sessions,
          metrics: state.metrics,
          budget: state.budget,
          logger: state.logger,
          onClosed: (c) => {
            state.connections.delete(c);
            state.metrics.wsConnections.dec();
          },
        });
        state.connections.add(connection);
        state.metrics.wsConnections.inc();
        state.logger.debug(
          { connection: connection.id, principal: principal.name },
          "talk connection opened",
        );
      },
    );
  };
}
