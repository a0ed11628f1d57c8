import type { FastifyPluginAsync } from "fastify";
import { z } from "zod";
import { TalkError } from "../../core/index.js";
import type { GatewayScope, RequestAuthorizer, SurfaceContext } from "../../gateway/index.js";
import { routeCheck } from "../../gateway/index.js";
import type { BotManager } from "../bot/bot-manager.js";

export type MeetingsScope = Extract<GatewayScope, "read" | "write">;

export interface MeetingsRoutesOptions {
  manager: BotManager;
  /** The process's one authorizer (SurfaceContext.authorizer): bearer tokens and the no-token rule. */
  authorizer: RequestAuthorizer;
  /** The one error -> HTTP answer (SurfaceContext.replyError). */
  replyError: SurfaceContext["replyError"];
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

const notFound = (): TalkError => new TalkError("session_not_found", "No such bot.");

/**
 * Meeting bot routes, one encapsulated plugin: POST/GET/DELETE
 * /meetings/bots, the transcript (read: GET; write: POST, DELETE), and the
 * bot page's capture socket (`/meetings/bots/:id/capture?token=`,
 * authenticated by the per-bot token the page was given, not by API tokens).
 * Errors are answered by `replyError` with their catalogue status.
 */
export function meetingsRoutes(options: MeetingsRoutesOptions): FastifyPluginAsync {
  const { manager, replyError } = options;
  const read = routeCheck(options.authorizer, "read");
  const write = routeCheck(options.authorizer, "write");
  const refused = (decision: ReturnType<typeof read>): TalkError | undefined =>
    decision === "ok" ? undefined : new TalkError(decision);
  return async (app) => {
    app.post("/meetings/bots", async (request, reply) => {
      const denied = refused(write(request));
      if (denied) return replyError(reply, denied);
      const parsed = createBody.safeParse(request.body ?? {});
      if (!parsed.success) {
        const issues = parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
        return replyError(
          reply,
          new TalkError("invalid_params", "Invalid bot request.", { details: { issues } }),
        );
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
        return replyError(reply, err);
      }
    });

    app.get<{ Params: { id: string } }>("/meetings/bots/:id", async (request, reply) => {
      const denied = refused(read(request));
      if (denied) return replyError(reply, denied);
      const status = await manager.status(request.params.id);
      return status ? reply.send(status) : replyError(reply, notFound());
    });

    app.delete<{ Params: { id: string } }>("/meetings/bots/:id", async (request, reply) => {
      const denied = refused(write(request));
      if (denied) return replyError(reply, denied);
      const status = await manager.leave(request.params.id);
      return status ? reply.code(202).send(status) : replyError(reply, notFound());
    });

    app.get<{ Params: { id: string } }>("/meetings/bots/:id/transcript", async (request, reply) => {
      const denied = refused(read(request));
      if (denied) return replyError(reply, denied);
      const lines = await manager.transcriptOf(request.params.id);
      return lines ? reply.send({ botId: request.params.id, lines }) : replyError(reply, notFound());
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
