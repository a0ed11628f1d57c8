import type { FastifyPluginAsync } from "fastify";
import { meetingsRoutes, type MeetingsRoutesOptions } from "./http/meetings-routes.js";
import { testRoomPlugin } from "./test-room/test-room-plugin.js";

export interface MeetingsPluginOptions extends MeetingsRoutesOptions {
  /** Serve the local test meeting at /meetings/test-room/<room>. Default true. */
  testRoom?: boolean;
}

/** Everything meetings adds to the HTTP server, as one plugin the composition root registers. */
export function meetingsPlugin(options: MeetingsPluginOptions): FastifyPluginAsync {
  return async (app) => {
    await app.register(meetingsRoutes(options));
    if (options.testRoom !== false) await app.register(testRoomPlugin());
  };
}
