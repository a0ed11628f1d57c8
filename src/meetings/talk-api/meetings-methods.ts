import { z } from "zod";
import { TalkError } from "../../core/index.js";
import { ConnectionFollows, type SurfaceMethodDefinition } from "../../gateway/index.js";
import type { BotManager } from "../bot/bot-manager.js";
import type { VoiceWakeStore } from "../agent/voice-wake-store.js";
import { exportTranscript, TRANSCRIPT_FORMATS } from "../bot/transcript-export.js";

/**
 * The meetings surface on the Talk API (docs/api.md), added through the
 * Gateway's surface-method hook, with the same rules as the HTTP routes:
 *
 * | method | scope | params -> result |
 * | --- | --- | --- |
 * | `voicewake.get` | read | `{}` -> `{triggers, updatedAtMs}` |
 * | `voicewake.set` | admin | `{triggers: string[]}` -> `{triggers, updatedAtMs}`; broadcasts `voicewake.changed` |
 * | `meetings.bots.create` | write | `{meetingUrl, platform?, botName, mode, joinAt?}` -> bot status |
 * | `meetings.bots.get` | read | `{botId}` -> bot status |
 * | `meetings.bots.delete` | write | `{botId}` -> bot status (the bot leaves, wherever it runs) |
 * | `meetings.bots.transcript` | read | `{botId, format?}` -> `{botId, lines}`, or `{botId, format, text}` for vtt / srt / txt |
 * | `meetings.bots.follow` | read | `{botId, afterIndex?}` -> `{botId, afterIndex, status}`; then this connection gets
 * |   |   | `meetings.transcript.line {botId, index, line}`, `meetings.bot.status {botId, status}`, `meetings.follow.ended {botId, status}` |
 * | `meetings.bots.unfollow` | read | `{botId}` -> `{botId, following}` |
 */
export interface MeetingsMethodsDeps {
  manager: Pick<BotManager, "create" | "status" | "leave" | "transcriptOf" | "follow">;
  voiceWake: VoiceWakeStore;
  registerMethod<P, R>(name: string, definition: SurfaceMethodDefinition<P, R>): void;
  /** Sends a surface event to every Talk API connection (GatewayServer.broadcast). */
  broadcast(event: string, payload: unknown): void;
}

const botId = z.strictObject({ botId: z.string().min(1).max(128) });

export const createBotParams = z.strictObject({
  meetingUrl: z.string().min(1).max(2048),
  platform: z.string().min(1).max(64).optional(),
  botName: z.string().trim().min(1).max(64),
  mode: z.enum(["transcribe", "agent"]),
  joinAt: z.iso.datetime({ offset: true }).optional(),
  camera: z.enum(["off", "card", "url"]).optional(),
  cameraUrl: z.string().min(1).max(2048).optional(),
});

const notFound = (): TalkError => new TalkError("session_not_found", "No such bot.");

/** Bots one connection follows at once. */
export const MAX_FOLLOWS_PER_CONNECTION = 8;

const followParams = z.strictObject({
  botId: z.string().min(1).max(128),
  /** Lines with an index above this are sent (-1: from the first line). */
  afterIndex: z.number().int().min(-1).max(Number.MAX_SAFE_INTEGER).optional(),
});

/** Registers the methods and the `voicewake.changed` broadcast; returns the listener's remover. */
export function registerMeetingsMethods(deps: MeetingsMethodsDeps): () => void {
  const { manager, voiceWake, registerMethod } = deps;
  registerMethod("voicewake.get", {
    scope: "read",
    params: z.strictObject({}),
    handler: () => voiceWake.get(),
  });
  registerMethod("voicewake.set", {
    scope: "admin",
    params: z.strictObject({ triggers: z.array(z.string().max(64)).min(1).max(32) }),
    handler: (params) => voiceWake.set(params.triggers),
  });
  registerMethod("meetings.bots.create", {
    scope: "write",
    params: createBotParams,
    handler: async (p) => {
      return await manager.create({
        meetingUrl: p.meetingUrl,
        botName: p.botName,
        mode: p.mode,
        ...(p.platform ? { platform: p.platform } : {}),
        ...(p.joinAt ? { joinAt: p.joinAt } : {}),
        ...(p.camera ? { camera: p.camera } : {}),
        ...(p.cameraUrl !== undefined ? { cameraUrl: p.cameraUrl } : {}),
      });
    },
  });
  registerMethod("meetings.bots.get", {
    scope: "read",
    params: botId,
    handler: async (p) => (await manager.status(p.botId)) ?? Promise.reject(notFound()),
  });
  registerMethod("meetings.bots.delete", {
    scope: "write",
    params: botId,
    handler: async (p) => (await manager.leave(p.botId)) ?? Promise.reject(notFound()),
  });
  registerMethod("meetings.bots.transcript", {
    scope: "read",
    params: z.strictObject({
      botId: z.string().min(1).max(128),
      format: z.enum(TRANSCRIPT_FORMATS).optional(),
    }),
    handler: async (p) => {
      const lines = await manager.transcriptOf(p.botId);
      if (!lines) throw notFound();
      if (!p.format || p.format === "json") return { botId: p.botId, lines };
      return { botId: p.botId, format: p.format, text: exportTranscript(p.botId, lines, p.format) };
    },
  });
  // Follows per connection (ended when it closes), one per bot, at most MAX_FOLLOWS_PER_CONNECTION.
  const follows = new ConnectionFollows(MAX_FOLLOWS_PER_CONNECTION, "bots");
  registerMethod("meetings.bots.follow", {
    scope: "read",
    params: followParams,
    handler: async (p, ctx) => {
      const { caller } = ctx;
      follows.check(caller, p.botId);
      const status = await manager.status(p.botId);
      if (!status) throw notFound();
      // A second follow of the same bot replaces the first (a client resuming from another index).
      const follow = follows.begin(caller, p.botId);
      const afterIndex = p.afterIndex ?? -1;
      const botIdValue = p.botId;
      ctx.afterResponse(() => {
        void manager
          .follow(
            botIdValue,
            afterIndex,
            {
              line: (index, line) =>
                caller.sendEvent("meetings.transcript.line", { botId: botIdValue, index, line }),
              status: (s) => caller.sendEvent("meetings.bot.status", { botId: botIdValue, status: s }),
              end: (s) => {
                follow.done();
                caller.sendEvent("meetings.follow.ended", { botId: botIdValue, status: s });
              },
            },
            follow.signal,
          )
          .catch((err: unknown) => ctx.logger.warn({ err, botId: botIdValue }, "meeting: follow failed"));
      });
      return { botId: p.botId, afterIndex, status };
    },
  });
  registerMethod("meetings.bots.unfollow", {
    scope: "read",
    params: botId,
    handler: (p, ctx) => ({
      botId: p.botId,
      following: false,
      wasFollowing: follows.stop(ctx.caller, p.botId),
    }),
  });
  return voiceWake.onChange((state) => deps.broadcast("voicewake.changed", state));
}
