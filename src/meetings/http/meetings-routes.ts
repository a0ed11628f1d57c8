import type { FastifyPluginAsync } from "fastify";
import { z } from "zod";
import { TalkError } from "../../core/index.js";
import type { GatewayScope, RequestAuthorizer, SurfaceContext } from "../../gateway/index.js";
import { routeCheck } from "../../gateway/index.js";
import type { BotManager } from "../bot/bot-manager.js";
import {
  exportTranscript,
  TRANSCRIPT_CONTENT_TYPES,
  TRANSCRIPT_FORMATS,
  type TranscriptFormat,
} from "../bot/transcript-export.js";
import type { IncomingMessage } from "node:http";
import type { FastifyReply } from "fastify";

/** A comment line this often keeps proxies from closing an idle event stream, ms. */
const SSE_KEEPALIVE_MS = 15_000;

/**
 * Server-sent events of a bot's live transcript (text/event-stream):
 * `event: line` with `id: <index>` (so a reconnecting EventSource resumes
 * with Last-Event-ID) and the line as data, `event: status`, and `event: end`
 * once the bot ended and its last line was sent; the stream then closes.
 */
function streamTranscript(
  manager: BotManager,
  id: string,
  afterIndex: number,
  request: IncomingMessage,
  reply: FastifyReply,
): void {
  reply.hijack();
  const out = reply.raw;
  out.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  const stop = new AbortController();
  const write = (chunk: string): void => {
    if (!stop.signal.aborted && !out.destroyed) out.write(chunk);
  };
  const close = (): void => {
    if (stop.signal.aborted) return;
    stop.abort();
    clearInterval(keepalive);
    out.end();
  };
  const keepalive = setInterval(() => write(": keepalive\n\n"), SSE_KEEPALIVE_MS);
  request.on("close", close);
  write(": following\n\n");
  manager
    .follow(
      id,
      afterIndex,
      {
        line: (index, line) => write(`event: line\nid: ${index}\ndata: ${JSON.stringify(line)}\n\n`),
        status: (status) => write(`event: status\ndata: ${JSON.stringify(status)}\n\n`),
        end: (status) => {
          write(`event: end\ndata: ${JSON.stringify(status)}\n\n`);
          close();
        },
      },
      stop.signal,
    )
    .then((status) => {
      if (!status) close();
    })
    .catch(() => close());
}

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
    camera: z.enum(["off", "card", "url"]).optional(),
    cameraUrl: z.string().min(1).max(2048).optional(),
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
        const { meetingUrl, platform, botName, mode, joinAt, camera, cameraUrl } = parsed.data;
        const status = await manager.create({
          meetingUrl,
          botName,
          mode,
          ...(platform ? { platform } : {}),
          ...(joinAt ? { joinAt } : {}),
          ...(camera ? { camera } : {}),
          ...(cameraUrl !== undefined ? { cameraUrl } : {}),
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

    app.get<{ Params: { id: string }; Querystring: { format?: string } }>(
      "/meetings/bots/:id/transcript",
      async (request, reply) => {
        const denied = refused(read(request));
        if (denied) return replyError(reply, denied);
        const format = request.query.format ?? "json";
        if (!(TRANSCRIPT_FORMATS as readonly string[]).includes(format)) {
          return replyError(
            reply,
            new TalkError("invalid_params", `format must be one of ${TRANSCRIPT_FORMATS.join(", ")}.`, {
              details: { issues: [{ path: "format", message: "unsupported" }] },
            }),
          );
        }
        const lines = await manager.transcriptOf(request.params.id);
        if (!lines) return replyError(reply, notFound());
        const f = format as TranscriptFormat;
        return reply.type(TRANSCRIPT_CONTENT_TYPES[f]).send(exportTranscript(request.params.id, lines, f));
      },
    );

    app.get<{ Params: { id: string }; Querystring: { after?: string } }>(
      "/meetings/bots/:id/transcript/live",
      async (request, reply) => {
        const denied = refused(read(request));
        if (denied) return replyError(reply, denied);
        const resume = request.query.after ?? request.headers["last-event-id"];
        const afterIndex = resume === undefined ? -1 : Number(resume);
        if (!Number.isSafeInteger(afterIndex) || afterIndex < -1) {
          return replyError(
            reply,
            new TalkError("invalid_params", "after (or Last-Event-ID) must be an integer >= -1.", {
              details: { issues: [{ path: "after", message: "not an index" }] },
            }),
          );
        }
        const status = await manager.status(request.params.id);
        if (!status) return replyError(reply, notFound());
        streamTranscript(manager, request.params.id, afterIndex, request.raw, reply);
        return reply;
      },
    );

    app.get<{ Params: { id: string }; Querystring: { token?: string } }>(
      "/meetings/bots/:id/capture",
      { websocket: true },
      (socket, request) => {
        manager.attachCapture(request.params.id, request.query.token ?? "", socket);
      },
    );
  };
}
