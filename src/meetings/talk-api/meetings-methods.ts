import { z } from "zod";
import { TalkError } from "../../core/index.js";
import type { SurfaceMethodDefinition } from "../../gateway/index.js";
import type { BotManager } from "../bot/bot-manager.js";
import type { VoiceWakeStore } from "../agent/voice-wake-store.js";

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
 * | `meetings.bots.transcript` | read | `{botId}` -> `{botId, lines}` |
 */
export interface MeetingsMethodsDeps {
  manager: Pick<BotManager, "create" | "status" | "leave" | "transcriptOf">;
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
});

const notFound = (): TalkError => new TalkError("session_not_found", "No such bot.");

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
    handler: (p) =>
      manager.create({
        meetingUrl: p.meetingUrl,
        botName: p.botName,
        mode: p.mode,
        ...(p.platform ? { platform: p.platform } : {}),
        ...(p.joinAt ? { joinAt: p.joinAt } : {}),
      }),
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
    params: botId,
    handler: async (p) => {
      const lines = await manager.transcriptOf(p.botId);
      if (!lines) throw notFound();
      return { botId: p.botId, lines };
    },
  });
  return voiceWake.onChange((state) => deps.broadcast("voicewake.changed", state));
}
