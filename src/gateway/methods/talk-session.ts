import { TalkError, toTalkError } from "../../core/index.js";
import type { TalkSessionController } from "../../voice/index.js";
import { CLIENT_OWNED_TRANSPORTS, CREATION_MATRIX, findCombination } from "../../core/index.js";
import type { MethodContext, MethodGroup } from "../method-registry.js";
import { resolveSessionShape } from "../session-shape.js";
import { describeSession, LocalSessionHandle, type SessionHandle } from "../session-handle.js";

/**
 * The session a request names, resolved once: run here, or (cluster only) on
 * another worker. The verbs below call it and never branch on where it runs.
 */
function sessionOf(ctx: MethodContext, sessionId: string): SessionHandle {
  if (ctx.cluster?.isRemote(sessionId)) return ctx.cluster.handle(sessionId, ctx.caller);
  return new LocalSessionHandle(sessionId, ctx.sessions, ctx.caller, ctx.options.maxAudioBytesPerFrame);
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
      const { mode, transport, brain } = resolveSessionShape(
        params,
        ctx.deps.sessionDefaults ?? {},
        "gateway",
      );
      if (CLIENT_OWNED_TRANSPORTS.has(transport)) {
        throw new TalkError(
          "use_talk_client_create",
          `Transport "${transport}" is client-owned: create it with talk.client.create.`,
          { details: { transport, method: "talk.client.create" } },
        );
      }
      if (findCombination(mode, transport, brain)?.owner !== "gateway") {
        throw new TalkError(
          "unsupported_combination",
          `${mode} / ${transport} / ${brain} is not supported.`,
          {
            details: { supported: CREATION_MATRIX.filter((c) => c.owner === "gateway") },
          },
        );
      }
      // Seed 000: direct-tools stays privileged, whether asked for or resolved from talk.realtime.brain.
      if (brain === "direct-tools" && !ctx.caller.principal.scopes.has("direct-tools")) {
        throw new TalkError(
          "forbidden",
          `A direct-tools session needs the "direct-tools" scope (or admin).`,
          {
            details: {
              method: "talk.session.create",
              scope: "direct-tools",
              brain,
              ...(params.brain === undefined ? { from: "talk.realtime.brain" } : {}),
            },
          },
        );
      }
      if (params.clientTools !== undefined && mode !== "realtime") {
        throw new TalkError(
          "invalid_params",
          "clientTools: only realtime sessions call tools of the client.",
          {
            details: { field: "clientTools", reason: "mode_has_no_provider_tools" },
          },
        );
      }
      ctx.sessions.assertAccepting();
      ctx.sessions.assertCapacity(ctx.caller);
      ctx.deps.checkSession?.({
        mode,
        ...(params.provider !== undefined ? { provider: params.provider } : {}),
        ...(params.voice !== undefined ? { voice: params.voice } : {}),
        ...(params.model !== undefined ? { model: params.model } : {}),
        ...(params.replyPath !== undefined ? { replyPath: params.replyPath } : {}),
      });
      // What it runs on, named or the defaults: told in the response and session.created.
      const providers = ctx.deps.sessionProviders?.({
        mode,
        brain,
        ...(params.provider !== undefined ? { provider: params.provider } : {}),
      });
      const session = ctx.deps.runtime.createSession({
        mode,
        transport,
        brain,
        owner: "gateway",
        source: "gateway",
        metadata: { surface: "gateway", connection: ctx.caller.id },
        ...(params.provider !== undefined ? { provider: params.provider } : {}),
        ...(providers !== undefined ? { providers } : {}),
        ...(params.inputFormat !== undefined ? { inputFormat: params.inputFormat } : {}),
        ...(params.outputFormat !== undefined ? { outputFormat: params.outputFormat } : {}),
      });
      let controller: TalkSessionController;
      try {
        // The directory claim (cluster) runs beside the controller set-up; a
        // refused claim (draining) means the session must not start here.
        const claimed = ctx.deps.cluster?.claimed(session.id);
        claimed?.catch(() => undefined);
        const clientTools =
          params.clientTools !== undefined
            ? ctx.deps.tools.checkClientTools(session, params.clientTools)
            : undefined;
        controller = await ctx.deps.createController(session, {
          ...(clientTools !== undefined ? { clientTools } : {}),
          ...(params.model !== undefined ? { model: params.model } : {}),
          ...(params.voice !== undefined ? { voice: params.voice } : {}),
          ...(params.inputFormat !== undefined ? { inputFormat: params.inputFormat } : {}),
          ...(params.outputFormat !== undefined ? { outputFormat: params.outputFormat } : {}),
          ...(params.replyPath !== undefined ? { replyPath: params.replyPath } : {}),
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
      const owned = ctx.sessions.adopt(session, controller, ctx.caller, {
        playbackReports: params.playbackReports ?? false,
      });
      const joinToken = session.issueJoinToken();
      ctx.afterResponse(() => ctx.sessions.goLive(owned, ctx.caller, 0, false));
      return { ...describeSession(session), joinToken };
    },
  },

  "talk.session.join": {
    scope: "write",
    handler: async (params, ctx) => {
      const { result, start } = await sessionOf(ctx, params.sessionId).join(params);
      ctx.afterResponse(start);
      return result;
    },
  },

  "talk.session.appendAudio": {
    scope: "write",
    handler: (params, ctx) => sessionOf(ctx, params.sessionId).appendAudio(params),
  },

  "talk.session.startTurn": {
    scope: "write",
    handler: (params, ctx) => sessionOf(ctx, params.sessionId).startTurn(params),
  },

  "talk.session.endTurn": {
    scope: "write",
    handler: (params, ctx) => sessionOf(ctx, params.sessionId).endTurn(params),
  },

  "talk.session.cancelTurn": {
    scope: "write",
    handler: (params, ctx) => sessionOf(ctx, params.sessionId).cancelTurn(params),
  },

  "talk.session.cancelOutput": {
    scope: "write",
    handler: (params, ctx) => sessionOf(ctx, params.sessionId).cancelOutput(params),
  },

  "talk.session.submitToolResult": {
    scope: "write",
    handler: (params, ctx) => sessionOf(ctx, params.sessionId).submitToolResult(params),
  },

  "talk.session.callTool": {
    // Calling tools directly is the privilege itself: a write token that joined the session cannot.
    scope: "direct-tools",
    handler: (params, ctx) => sessionOf(ctx, params.sessionId).callTool(params),
  },

  "talk.session.close": {
    scope: "write",
    // Closes Gateway-owned sessions and, for symmetry, client-owned ones the caller created.
    handler: (params, ctx) => sessionOf(ctx, params.sessionId).close(params),
  },
};
