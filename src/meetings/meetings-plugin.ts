import type { FastifyPluginAsync } from "fastify";
import { routeCheck, type SurfaceContext } from "../gateway/index.js";
import type { VoiceWakeStore } from "./agent/voice-wake-store.js";
import { BotManager } from "./bot/bot-manager.js";
import type { BrowserLauncher } from "./bot/browser-launcher.js";
import { meetingsRoutes } from "./http/meetings-routes.js";
import type { MeetingsOptions } from "./meetings-options.js";
import type { PlatformDriver } from "./platforms/platform-driver.js";
import { registerMeetingsMethods } from "./talk-api/meetings-methods.js";
import { testRoomPlugin, type TestRoomOptions } from "./test-room/test-room-plugin.js";

export interface MeetingsPluginOptions {
  /** meetings.* of the configuration (timers, browser, bot limits). */
  options: MeetingsOptions;
  /** Where transcripts are kept (`<dataDir>/meetings/`). */
  dataDir: string;
  /** Platform drivers, tried in order when a request names no platform. */
  drivers: readonly PlatformDriver[];
  /** Agent mode's wake triggers (voicewake.get/set), shared by every worker. */
  voiceWake: VoiceWakeStore;
  /**
   * Serve the local test meeting at /meetings/test-room/<room>, with these
   * limits, joined with a write token; false (default): not served (404).
   */
  testRoom?: Omit<TestRoomOptions, "authorize"> | false;
  /** Starts the bots' browsers (BotManagerOptions.launcher); default one Chromium per bot. */
  launcher?: BrowserLauncher;
}

/**
 * The meetings surface as one encapsulated plugin over the surface context:
 * its BotManager (bots run in-process, or as `meeting-bot` jobs when the
 * context has cluster jobs), the /meetings/bots routes and capture socket,
 * the `meetings.bots.*` and `voicewake.*` Talk API methods, and the local
 * test meeting. The manager is closed, and the voicewake broadcast removed,
 * when the app closes.
 */
export function meetingsPlugin(ctx: SurfaceContext, options: MeetingsPluginOptions): FastifyPluginAsync {
  return async (app) => {
    const manager = new BotManager({
      runtime: ctx.runtime,
      createController: ctx.createController,
      drivers: options.drivers,
      dataDir: options.dataDir,
      options: options.options,
      ...(ctx.jobs ? { jobs: ctx.jobs } : {}),
      localBaseUrl: () => ctx.loopbackBaseUrl(),
      // Agent mode answers through the brain's stt-tts path with the same persona and brain options.
      agent: { voiceWake: options.voiceWake },
      logger: ctx.logger,
      ...(options.launcher ? { launcher: options.launcher } : {}),
      ...(options.options.chromiumArgs && options.options.chromiumArgs.length > 0
        ? { browserArgs: options.options.chromiumArgs }
        : {}),
    });
    const offMethods = registerMeetingsMethods({
      manager,
      voiceWake: options.voiceWake,
      registerMethod: (name, definition) => ctx.registerMethod(name, definition),
      broadcast: (event, payload) => ctx.broadcast(event, payload),
    });
    app.addHook("onClose", async () => {
      offMethods();
      await manager.close();
    });
    await app.register(meetingsRoutes({ manager, authorizer: ctx.authorizer, replyError: ctx.replyError }));
    if (options.testRoom)
      await app.register(
        testRoomPlugin({ ...options.testRoom, authorize: routeCheck(ctx.authorizer, "write") }),
      );
  };
}
