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

/**
 * The loopback http:// URL of a listening Fastify server (undefined before
 * listen): where a bot's page, on this machine, reaches the capture socket.
 */
export function loopbackBaseUrl(app: {
  addresses(): ({ address: string; family: string; port: number } | string)[];
}): string | undefined {
  const address = app
    .addresses()
    .find((a): a is { address: string; family: string; port: number } => typeof a !== "string");
  if (!address) return undefined;
  const host =
    address.family === "IPv6"
      ? address.address === "::"
        ? "[::1]"
        : `[${address.address}]`
      : address.address === "0.0.0.0"
        ? "127.0.0.1"
        : address.address;
  return `http://${host}:${address.port}`;
}
