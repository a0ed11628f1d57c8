import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { FastifyPluginAsync, FastifyReply } from "fastify";
import { z } from "zod";
import { TalkError, type TalkErrorCode } from "../../core/errors.js";
import type { BotManager } from "../bot/bot-manager.js";

export type MeetingsScope = "read" | "write";

export interface MeetingsRoutesOptions {
  manager: BotManager;
  /** Whether a request may use a scope. Default: everything allowed (a loopback-only server without tokens). */
  authorize?(headers: IncomingHttpHeaders, scope: MeetingsScope): boolean;
}

const createBody = z
  .object({
    meetingUrl: z.string().min(1).max(2048),
    platform: z.string().min(1).max(64).optional(),
    botName: z.string().trim().min(1).max(64),
    mode: z.enum(["transcribe", "agent"]),
    joinAt: z.iso.datetime({ offset: true }).optional(),
  })
  .strict();

const STATUS: Partial<Record<TalkErrorCode, number>> = {
  invalid_params: 400,
  unauthorized: 401,
  forbidden: 403,
  session_not_found: 404,
  session_limit: 429,
  shutting_down: 503,
  capability_unsupported: 501,
};

function fail(reply: FastifyReply, err: TalkError): FastifyReply {
  return reply.code(STATUS[err.code] ?? 500).send({ error: err.toJSON() });
}

/**
 * Meeting bot routes, one encapsulated plugin: POST/GET/DELETE
 * /meetings/bots, the transcript, and the bot page's capture socket
 * (`/meetings/bots/:id/capture?token=`, authenticated by the per-bot token
 * the page was given, not by API tokens).
 */
export function meetingsRoutes(options: MeetingsRoutesOptions): FastifyPluginAsync {
  const { manager } = options;
  const authorize = options.authorize ?? (() => true);
  return async (app) => {
    app.addHook("onClose", async () => manager.close());

    app.post("/meetings/bots", async (request, reply) => {
      if (!authorize(request.headers, "write")) return fail(reply, new TalkError("unauthorized"));
      const parsed = createBody.safeParse(request.body ?? {});
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
        return fail(reply, new TalkError("invalid_params", "Invalid bot request.", { details: { issues } }));
      }
      try {
        const { meetingUrl, platform, botName, mode, joinAt } = parsed.data;
        const status = manager.create({
          meetingUrl,
          botName,
          mode,
          ...(platform ? { platform } : {}),
          ...(joinAt ? { joinAt } : {}),
        });
        return reply.code(201).send(status);
      } catch (err) {
        if (err instanceof TalkError) return fail(reply, err);
        throw err;
      }
    });

    app.get<{ Params: { id: string } }>("/meetings/bots/:id", async (request, reply) => {
      if (!authorize(request.headers, "read")) return fail(reply, new TalkError("unauthorized"));
      const status = await manager.status(request.params.id);
      return status ? reply.send(status) : fail(reply, new TalkError("session_not_found", "No such bot."));
    });

    app.delete<{ Params: { id: string } }>("/meetings/bots/:id", async (request, reply) => {
      if (!authorize(request.headers, "write")) return fail(reply, new TalkError("unauthorized"));
      const status = await manager.leave(request.params.id);
      return status
        ? reply.code(202).send(status)
        : fail(reply, new TalkError("session_not_found", "No such bot."));
    });

    app.get<{ Params: { id: string } }>("/meetings/bots/:id/transcript", async (request, reply) => {
      if (!authorize(request.headers, "read")) return fail(reply, new TalkError("unauthorized"));
      const lines = await manager.transcriptOf(request.params.id);
      return lines
        ? reply.send({ botId: request.params.id, lines })
        : fail(reply, new TalkError("session_not_found", "No such bot."));
    });

    app.get<{ Params: { id: string }; Querystring: { token?: string } }>(
      "/meetings/bots/:id/capture",
      { websocket: true },
      (socket, request) => {
        manager.attachCapture(request.params.id, request.query.token ?? "", socket);
      },
    );
  };
}

/**
 * An authorizer over the configured API tokens (auth.tokens): a bearer token
 * whose scopes cover the route (admin implies write implies read). With no
 * tokens configured every request is allowed, as on the Talk API (the server
 * then binds loopback only).
 */
export function tokenAuthorizer(
  tokens: readonly { token: string; scopes: readonly string[] }[],
): MeetingsRoutesOptions["authorize"] {
  const digest = (s: string): Buffer => createHash("sha256").update(s).digest();
  const known = tokens.map((t) => ({ digest: digest(t.token), scopes: new Set(t.scopes) }));
  return (headers, scope) => {
    if (known.length === 0) return true;
    const m = /^Bearer\s+(\S+)\s*$/i.exec(headers.authorization ?? "");
    if (!m) return false;
    const d = digest(m[1]!);
    const match = known.find((k) => timingSafeEqual(d, k.digest));
    if (!match) return false;
    return (
      match.scopes.has("admin") || match.scopes.has("write") || (scope === "read" && match.scopes.has("read"))
    );
  };
}
