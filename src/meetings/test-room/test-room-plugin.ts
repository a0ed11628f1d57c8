import type { FastifyPluginAsync } from "fastify";
import { testRoomPage } from "./test-room-page.js";
import { ROOM_NAME, TestRoomRegistry, type RoomClientMessage, type RoomPeer } from "./test-room-registry.js";

/** Largest signalling message accepted (an SDP offer is a few KiB). */
const MAX_SIGNAL_BYTES = 64 * 1024;

/**
 * The local test meeting, for development and tests: `GET
 * /meetings/test-room/<room>?name=<participant>` serves the page,
 * `/meetings/test-room/<room>/ws` is its signalling socket. A room name that
 * does not match ROOM_NAME is a 404 (the "meeting not found" of this platform).
 */
export function testRoomPlugin(registry = new TestRoomRegistry()): FastifyPluginAsync {
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
      { websocket: true },
      (socket, request) => {
        const { room } = request.params;
        if (!ROOM_NAME.test(room)) {
          socket.close(4404, "meeting not found");
          return;
        }
        const name = (request.query.name ?? "guest").slice(0, 64) || "guest";
        const peer: RoomPeer = registry.join(room, name, socket);
        socket.on("message", (data: Buffer, isBinary: boolean) => {
          if (isBinary || data.byteLength > MAX_SIGNAL_BYTES) return;
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
