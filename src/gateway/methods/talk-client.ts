import { TalkError } from "../../core/index.js";
import { CREATION_MATRIX, GATEWAY_OWNED_TRANSPORTS, findCombination } from "../../core/index.js";
import type { MethodGroup } from "../method-registry.js";
import { resolveSessionShape } from "../session-shape.js";

/** Tool call ids remembered per client session, so a replayed call is refused as stale. */
const MAX_REMEMBERED_CALLS = 1024;

/**
 * Client-owned provider sessions: the client owns the provider media
 * (WebRTC, provider WebSocket); the Gateway owns credentials, instructions
 * and tool policy.
 */
export const talkClientMethods: MethodGroup = {
  "talk.client.create": {
    scope: "write",
    handler: async (params, ctx) => {
      const { mode, transport, brain } = resolveSessionShape(
        params,
        ctx.deps.sessionDefaults ?? {},
        "client",
      );
      if (GATEWAY_OWNED_TRANSPORTS.has(transport)) {
        throw new TalkError(
          "use_talk_session_create",
          `Transport "${transport}" is Gateway-owned: create it with talk.session.create.`,
          { details: { transport, method: "talk.session.create" } },
        );
      }
      if (!findCombination(mode, transport, brain)) {
        throw new TalkError(
          "unsupported_combination",
          `${mode} / ${transport} / ${brain} is not supported.`,
          {
            details: { supported: CREATION_MATRIX.filter((c) => c.owner === "client") },
          },
        );
      }
      ctx.sessions.assertAccepting();
      ctx.sessions.assertCapacity(ctx.caller);
      // Instructions and tools come from trusted config inside createClientSession; the
      // params schema is strict, so a request cannot smuggle instructions in.
      const mint = await ctx.deps.createClientSession({
        mode,
        transport,
        brain,
        signal: ctx.caller.signal,
        ...(params.provider !== undefined ? { provider: params.provider } : {}),
        ...(params.model !== undefined ? { model: params.model } : {}),
        ...(params.voice !== undefined ? { voice: params.voice } : {}),
      });
      if (ctx.caller.closed)
        throw new TalkError("cancelled", "The connection closed while the session was created.");
      const session = ctx.deps.runtime.createSession({
        mode,
        transport,
        brain,
        owner: "client",
        provider: mint.provider,
        source: "gateway",
        metadata: { surface: "gateway", connection: ctx.caller.id },
      });
      const owned = ctx.sessions.adopt(session, undefined, ctx.caller);
      ctx.afterResponse(() => ctx.sessions.goLive(owned, ctx.caller, 0, false));
      const { grant } = mint;
      return {
        sessionId: session.id,
        mode,
        transport,
        brain,
        provider: mint.provider,
        clientSecret: grant.clientSecret,
        expiresAt: grant.expiresAt,
        ...(grant.endpoint !== undefined ? { endpoint: grant.endpoint } : {}),
        ...(grant.model !== undefined ? { model: grant.model } : {}),
        ...(grant.voice !== undefined ? { voice: grant.voice } : {}),
        ...(grant.credentialIn !== undefined ? { credentialIn: grant.credentialIn } : {}),
        ...(grant.clientConfig !== undefined ? { clientConfig: grant.clientConfig } : {}),
        tools: [...mint.tools],
      };
    },
  },

  "talk.client.toolCall": {
    scope: "write",
    handler: async (params, ctx) => {
      const owned = ctx.sessions.require(params.sessionId, ctx.caller, "client");
      const { session } = owned;
      if (owned.toolCalls.has(params.callId)) {
        throw new TalkError("invalid_state", `Tool call ${params.callId} was already submitted.`, {
          details: { sessionId: session.id, callId: params.callId },
        });
      }
      owned.toolCalls.add(params.callId);
      if (owned.toolCalls.size > MAX_REMEMBERED_CALLS) {
        const oldest = owned.toolCalls.values().next().value;
        if (oldest !== undefined) owned.toolCalls.delete(oldest);
      }
      // Client-owned sessions have no turns of their own here: tool calls correlate to one
      // Gateway-held turn, whose signal aborts when the session closes (owner gone, close, shutdown).
      // Each call also has its own signal (talk.client.cancelToolCall, this connection) and runs
      // beside the others, at most maxParallelPerSession at once.
      const turn = session.ensureTurn({ source: "gateway" });
      const outcome = await ctx.deps.tools.dispatch(session, {
        name: params.name,
        argumentsJson: params.argumentsJson,
        callId: params.callId,
        turnId: turn.id,
        signal: ctx.caller.signal,
        parallel: true,
      });
      if (!outcome.ok) throw outcome.error;
      return { sessionId: session.id, callId: params.callId, output: outcome.output };
    },
  },

  "talk.client.cancelToolCall": {
    scope: "write",
    handler: async (params, ctx) => {
      const owned = ctx.sessions.require(params.sessionId, ctx.caller, "client");
      const cancelled = ctx.deps.tools.cancelCall(
        owned.session.id,
        params.callId,
        params.reason ?? "client_cancelled",
      );
      return { sessionId: owned.session.id, callId: params.callId, cancelled };
    },
  },
};
