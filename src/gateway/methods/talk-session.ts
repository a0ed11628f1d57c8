import { TalkError, toTalkError } from "../../core/errors.js";
import type { TalkSessionController } from "../../core/pipelines/controller-types.js";
import type { TalkSession } from "../../core/session-types.js";
import { CLIENT_OWNED_TRANSPORTS, CREATION_MATRIX, findCombination } from "../../core/talk-types.js";
import type { MethodContext, MethodGroup } from "../method-registry.js";
import type { SessionDescription } from "../protocol/talk-methods.js";
import type { RemoteSessions } from "../remote-sessions.js";

/** Standard base64 (RFC 4648 §4) with padding: the only alphabet appendAudio accepts. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function describe(session: TalkSession): SessionDescription {
  return {
    sessionId: session.id,
    mode: session.mode,
    transport: session.transport,
    brain: session.brain,
    ...(session.provider !== undefined ? { provider: session.provider } : {}),
    seq: session.lastSeq,
  };
}

function controllerOf(ctx: MethodContext, sessionId: string): TalkSessionController {
  // "gateway" guarantees a controller.
  return ctx.sessions.require(sessionId, ctx.caller, "gateway").controller as TalkSessionController;
}

/**
 * The session runs on another worker (cluster only). Media verbs cannot be
 * relayed (no audio crosses workers); they answer where the media lives.
 */
function remoteOf(ctx: MethodContext, sessionId: string): RemoteSessions | undefined {
  return ctx.cluster?.isRemote(sessionId) ? ctx.cluster : undefined;
}

async function mediaControllerOf(ctx: MethodContext, sessionId: string): Promise<TalkSessionController> {
  const remote = remoteOf(ctx, sessionId);
  if (remote) return remote.mediaElsewhere(sessionId, ctx.caller);
  return controllerOf(ctx, sessionId);
}

/**
 * Gateway-owned live sessions: the Gateway holds the provider connection
 * and the session state; the owning connection streams audio in, drives
 * turns with explicit verbs and receives `talk.event` and `talk.audio`.
 */
export const talkSessionMethods: MethodGroup = {
  "talk.session.create": {
    scope: "write",
    handler: async (params, ctx) => {
      const { mode, transport } = params;
      if (CLIENT_OWNED_TRANSPORTS.has(transport)) {
        throw new TalkError(
          "use_talk_client_create",
          `Transport "${transport}" is client-owned: create it with talk.client.create.`,
          { details: { transport, method: "talk.client.create" } },
        );
      }
      const brain = params.brain ?? (mode === "transcription" ? "none" : "agent-consult");
      if (findCombination(mode, transport, brain)?.owner !== "gateway") {
        throw new TalkError(
          "unsupported_combination",
          `${mode} / ${transport} / ${brain} is not supported.`,
          {
            details: { supported: CREATION_MATRIX.filter((c) => c.owner === "gateway") },
          },
        );
      }
      ctx.sessions.assertAccepting();
      ctx.sessions.assertCapacity(ctx.caller);
      const session = ctx.deps.runtime.createSession({
        mode,
        transport,
        brain,
        owner: "gateway",
        source: "gateway",
        metadata: { surface: "gateway", connection: ctx.caller.id },
        ...(params.provider !== undefined ? { provider: params.provider } : {}),
        ...(params.inputFormat !== undefined ? { inputFormat: params.inputFormat } : {}),
        ...(params.outputFormat !== undefined ? { outputFormat: params.outputFormat } : {}),
      });
      let controller: TalkSessionController;
      try {
        // The directory claim (cluster) runs beside the controller set-up; a
        // refused claim (draining) means the session must not start here.
        const claimed = ctx.deps.cluster?.claimed(session.id);
        claimed?.catch(() => undefined);
        controller = await ctx.deps.createController(session, {
          ...(params.model !== undefined ? { model: params.model } : {}),
          ...(params.voice !== undefined ? { voice: params.voice } : {}),
          ...(params.inputFormat !== undefined ? { inputFormat: params.inputFormat } : {}),
          ...(params.outputFormat !== undefined ? { outputFormat: params.outputFormat } : {}),
        });
        try {
          await claimed;
        } catch (err) {
          await controller.close("error").catch(() => {});
          throw err;
        }
      } catch (err) {
        const error = toTalkError(err);
        await session.close("error", error.message).catch(() => {});
        throw error;
      }
      if (ctx.caller.closed) {
        // Nobody is left to own it and nobody holds its join token.
        await controller.close("owner_lost").catch(() => {});
        throw new TalkError("cancelled", "The connection closed while the session was created.");
      }
      const owned = ctx.sessions.adopt(session, controller, ctx.caller);
      const joinToken = session.issueJoinToken();
      ctx.afterResponse(() => ctx.sessions.goLive(owned, ctx.caller, 0));
      return { ...describe(session), joinToken };
    },
  },

  "talk.session.join": {
    scope: "write",
    handler: async (params, ctx) => {
      const remote = remoteOf(ctx, params.sessionId);
      if (remote) {
        const { result, start } = await remote.join(
          params.sessionId,
          params.joinToken,
          params.afterSeq,
          ctx.caller,
        );
        ctx.afterResponse(start);
        return result;
      }
      const owned = ctx.sessions.join(params.sessionId, params.joinToken, ctx.caller);
      const { events, complete } = owned.session.replay(params.afterSeq);
      ctx.afterResponse(() => {
        ctx.sessions.goLive(owned, ctx.caller, params.afterSeq);
        if (owned.session.state === "active") {
          owned.session.emit({ type: "session.ready", payload: { reason: "joined" }, source: "gateway" });
        }
      });
      return { ...describe(owned.session), replayed: events.length, complete };
    },
  },

  "talk.session.appendAudio": {
    scope: "write",
    handler: (params, ctx) => {
      if (remoteOf(ctx, params.sessionId)) return mediaControllerOf(ctx, params.sessionId) as never;
      const controller = controllerOf(ctx, params.sessionId);
      const max = ctx.options.maxAudioBytesPerFrame;
      // Checked on the encoded length first so an oversized frame is never decoded.
      if (params.audioBase64.length > Math.ceil(max / 3) * 4) {
        throw new TalkError("payload_too_large", `An audio frame carries at most ${max} bytes.`, {
          details: { max },
        });
      }
      if (!BASE64.test(params.audioBase64)) {
        throw new TalkError("invalid_params", "audioBase64 is not valid base64.", {
          details: { issues: [{ path: "audioBase64", message: "not valid base64" }] },
        });
      }
      const bytes = Buffer.from(params.audioBase64, "base64");
      if (bytes.byteLength > max) {
        throw new TalkError("payload_too_large", `An audio frame carries at most ${max} bytes.`, {
          details: { max },
        });
      }
      controller.appendAudio(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      return { sessionId: params.sessionId, bytes: bytes.byteLength };
    },
  },

  "talk.session.startTurn": {
    scope: "write",
    handler: async (params, ctx) => {
      const turn = (await mediaControllerOf(ctx, params.sessionId)).startTurn();
      return { sessionId: params.sessionId, turnId: turn.id };
    },
  },

  "talk.session.endTurn": {
    scope: "write",
    handler: async (params, ctx) => {
      await (await mediaControllerOf(ctx, params.sessionId)).endTurn(params.turnId);
      return { sessionId: params.sessionId, turnId: params.turnId };
    },
  },

  "talk.session.cancelTurn": {
    scope: "write",
    handler: async (params, ctx) => {
      const remote = remoteOf(ctx, params.sessionId);
      if (remote) return (await remote.command(params.sessionId, ctx.caller, "cancelTurn", params)) as never;
      const cancelled = controllerOf(ctx, params.sessionId).cancelTurn(
        params.turnId,
        params.reason ?? "client_request",
      );
      return { sessionId: params.sessionId, cancelled };
    },
  },

  "talk.session.cancelOutput": {
    scope: "write",
    handler: async (params, ctx) => {
      const remote = remoteOf(ctx, params.sessionId);
      if (remote)
        return (await remote.command(params.sessionId, ctx.caller, "cancelOutput", params)) as never;
      const cancelled = controllerOf(ctx, params.sessionId).cancelOutput(
        params.turnId,
        params.reason ?? "client_request",
      );
      return { sessionId: params.sessionId, cancelled };
    },
  },

  "talk.session.submitToolResult": {
    scope: "write",
    handler: async (params, ctx) => {
      (await mediaControllerOf(ctx, params.sessionId)).submitToolResult(params.callId, params.output);
      return { sessionId: params.sessionId, callId: params.callId };
    },
  },

  "talk.session.close": {
    scope: "write",
    // Closes Gateway-owned sessions and, for symmetry, client-owned ones the caller created.
    handler: async (params, ctx) => {
      const remote = remoteOf(ctx, params.sessionId);
      if (remote) return (await remote.command(params.sessionId, ctx.caller, "close", params)) as never;
      const owned = ctx.sessions.require(params.sessionId, ctx.caller, "any");
      await ctx.sessions.close(owned, params.reason ?? "client_request");
      return { sessionId: params.sessionId, closed: true as const };
    },
  },
};
