import type { FastifyPluginAsync } from "fastify";
import type { RouteCheck } from "../../gateway/index.js";
import { TalkError } from "../../core/index.js";
import { testRoomPage } from "./test-room-page.js";
import { ROOM_NAME, TestRoomRegistry, type RoomClientMessage, type RoomPeer } from "./test-room-registry.js";

/** Limits of the local test meeting (`meetings.testRoom`). */
export interface TestRoomOptions {
  /** Who may join: the process's authorizer for one scope (routeCheck(ctx.authorizer, "write")). Required. */
  authorize: RouteCheck;
  /** Sockets in one room; more are refused with 1013. Default 16. */
  maxSocketsPerRoom?: number;
  /** Sockets in all rooms; more are refused with 1013. Default 128. */
  maxSockets?: number;
  /** Largest signalling message, bytes (an SDP offer is a few KiB); larger closes the socket with 1009. Default 65 536. */
  maxMessageBytes?: number;
}

/**
 * The local test meeting, for development and tests: `GET
 * /meetings/test-room/<room>?name=<participant>` serves the page (static,
 * no data), `/meetings/test-room/<room>/ws` is its signalling socket,
 * authorized by the process's one authorizer (a bearer header or the
 * `bearer.<token>` subprotocol the page offers when its URL fragment holds
 * `#token=`): 401 / 403 before the upgrade. A room name that does not match
 * ROOM_NAME is a 404 (the "meeting not found" of this platform).
 * Registered only when `meetings.testRoom.enabled` (see docs/meetings.md).
 */
export function testRoomPlugin(
  options: TestRoomOptions,
  registry = new TestRoomRegistry(),
): FastifyPluginAsync {
  const perRoom = options.maxSocketsPerRoom ?? 16;
  const total = options.maxSockets ?? 128;
  const maxMessageBytes = options.maxMessageBytes ?? 64 * 1024;
  for (const [name, value] of [
    ["maxSocketsPerRoom", perRoom],
    ["maxSockets", total],
    ["maxMessageBytes", maxMessageBytes],
  ] as const) {
    if (!Number.isInteger(value) || value < 1)
      throw new TalkError("config_invalid", `meetings.testRoom.${name} must be a positive integer.`);
  }
  return async (app) => {
    app.get<{ Params: { room: string } }>("/meetings/test-room/:room", async (request, reply) => {
      const { room } = request.params;
      if (!ROOM_NAME.test(room)) return reply.code(404).type("text/html").send("<h1>Meeting not found</h1>");
      return reply
        .type("text/html; charset=utf-8")
        .header("cache-control", "no-store")
        .send(testRoomPage(room));
    });

    app.get<{ Params: { room: string }; Querystring: { name?: string } }>(
      "/meetings/test-room/:room/ws",
      {
        websocket: true,
        // Refused before the upgrade: a plain HTTP status, never an open socket.
        preValidation: async (request, reply) => {
          const decision = options.authorize(request);
          if (decision === "ok") return undefined;
          const error = new TalkError(decision);
          if (decision === "unauthorized") reply.header("www-authenticate", 'Bearer realm="talkgate"');
          return reply.code(error.httpStatus).send({ error: error.toJSON() });
        },
      },
      (socket, request) => {
        const { room } = request.params;
        if (!ROOM_NAME.test(room)) {
          socket.close(4404, "meeting not found");
          return;
        }
        if (registry.socketCount >= total || registry.participants(room).length >= perRoom) {
          socket.close(1013, "test room full");
          return;
        }
        const name = (request.query.name ?? "guest").slice(0, 64) || "guest";
        const peer: RoomPeer = registry.join(room, name, socket);
        socket.on("message", (data: Buffer, isBinary: boolean) => {
          if (isBinary) return;
          if (data.byteLength > maxMessageBytes) {
            socket.close(1009, "signalling message too large");
            return;
          }
          let message: RoomClientMessage;
          try {
            message = JSON.parse(data.toString("utf8")) as RoomClientMessage;
          } catch {
            return;
          }
          if (message && typeof message === "object") registry.receive(room, peer, message);
        });
        socket.on("close", () => registry.leave(room, peer));
      },
    );
  };
}
