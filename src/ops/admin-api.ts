import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { TalkError } from "../core/index.js";
import { routeCheck, type SurfaceContext } from "../gateway/index.js";
import type { AdminService } from "./admin-service.js";
import type { SessionFollows } from "./session-follow.js";
import { usageCsv } from "./usage-record.js";

const id = z.string().regex(/^\S{1,256}$/, "1-256 characters without whitespace");
const reason = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9_.-]+$/, "lowercase letters, digits, _ . -");
const turnId = z.string().min(1).max(128);
const jobId = z.string().regex(/^[A-Za-z0-9_-]{1,128}$/, "[A-Za-z0-9_-]{1,128}");

const empty = z.strictObject({});
const closeParams = z.strictObject({ sessionId: id, reason: reason.optional() });
const cancelParams = z.strictObject({ sessionId: id, turnId: turnId.optional(), reason: reason.optional() });
const drainParams = z.strictObject({ workerId: id });
const jobCancelParams = z.strictObject({ jobId, reason: reason.optional() });
const followParams = z.strictObject({
  sessionId: id,
  /** Events with a seq above this are sent (0: every event the cluster still holds). */
  afterSeq: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
});
const unfollowParams = z.strictObject({ sessionId: id });
/** Days (UTC, inclusive) of the sessions' ends; both default to today. */
const usageParams = z.strictObject({ from: z.iso.date().optional(), to: z.iso.date().optional() });
const usageQuery = usageParams.extend({ format: z.enum(["json", "csv"]).optional() });

function usageRange(p: { from?: string | undefined; to?: string | undefined }): { from: string; to: string } {
  const today = new Date().toISOString().slice(0, 10);
  const from = p.from ?? p.to ?? today;
  const to = p.to ?? (p.from !== undefined && p.from > today ? p.from : today);
  if (from > to) throw new TalkError("invalid_params", "from must not be after to.");
  return { from, to };
}

/**
 * The admin operations as Talk API surface methods (`admin.*`, scope admin),
 * beside `telephony.*` and `meetings.*`. Each answers the same from any worker.
 */
export function registerAdminMethods(
  ctx: SurfaceContext,
  admin: AdminService,
  follows: SessionFollows,
): void {
  const method = <P, R>(
    name: string,
    params: z.ZodType<P>,
    handler: (params: P, signal: AbortSignal) => Promise<R>,
  ): void =>
    ctx.registerMethod(name, {
      scope: "admin",
      params,
      handler: (p, { caller }) => handler(p, caller.signal),
    });
  method("admin.sessions.list", empty, (_p, signal) => admin.listSessions(signal));
  method("admin.session.close", closeParams, (p, signal) =>
    admin.closeSession(p.sessionId, p.reason, signal),
  );
  method("admin.session.cancelOutput", cancelParams, (p, signal) =>
    admin.cancel("cancelOutput", p.sessionId, p, signal),
  );
  method("admin.session.cancelTurn", cancelParams, (p, signal) =>
    admin.cancel("cancelTurn", p.sessionId, p, signal),
  );
  method("admin.errors.list", empty, (_p, signal) => admin.listErrors(signal));
  ctx.registerMethod("admin.session.follow", {
    scope: "admin",
    params: followParams,
    handler: async (p, { caller, afterResponse }) => {
      const { result, start } = await follows.follow(p.sessionId, p.afterSeq ?? 0, caller);
      afterResponse(start);
      return result;
    },
  });
  ctx.registerMethod("admin.session.unfollow", {
    scope: "admin",
    params: unfollowParams,
    handler: (p, { caller }) => ({
      sessionId: p.sessionId,
      following: false,
      wasFollowing: follows.unfollow(p.sessionId, caller),
    }),
  });
  method("admin.workers.list", empty, (_p, signal) => admin.listWorkers(signal));
  method("admin.worker.drain", drainParams, (p, signal) => admin.drainWorker(p.workerId, signal));
  method("admin.jobs.list", empty, () => admin.listJobs());
  method("admin.job.cancel", jobCancelParams, (p) => admin.cancelJob(p.jobId, p.reason));
  method("admin.usage.list", usageParams, (p, signal) => {
    const { from, to } = usageRange(p);
    return admin.listUsage(from, to, signal);
  });
}

const reasonBody = z.strictObject({ reason: reason.optional() });
const cancelBody = z.strictObject({ turnId: turnId.optional(), reason: reason.optional() });

/**
 * The same operations over HTTP under `/admin/` (bearer token with the admin
 * scope, the one authorizer's rule): GET lists, POST acts.
 */
export function adminRoutes(ctx: SurfaceContext, admin: AdminService): FastifyPluginAsync {
  return async (app) => {
    // Every /admin route: the token first, before the body or the id is read.
    app.addHook("onRequest", adminOnly(ctx));
    const run = async (reply: FastifyReply, work: () => Promise<unknown>): Promise<FastifyReply> => {
      try {
        return reply.send(await work());
      } catch (err) {
        return ctx.replyError(reply, err);
      }
    };
    const parse = <T>(schema: z.ZodType<T>, value: unknown, what: string): T => {
      const parsed = schema.safeParse(value ?? {});
      if (parsed.success) return parsed.data;
      const issues = parsed.error.issues.map((i) => ({ path: i.path.join("."), message: i.message }));
      throw new TalkError("invalid_params", `Invalid ${what}.`, { details: { issues } });
    };
    type WithId = { Params: { id: string } };

    app.get("/admin/sessions", (_req, reply) => run(reply, () => admin.listSessions()));
    app.post<WithId>("/admin/sessions/:id/close", (req, reply) =>
      run(reply, () =>
        admin.closeSession(
          parse(id, req.params.id, "session id"),
          parse(reasonBody, req.body, "body").reason,
        ),
      ),
    );
    for (const [path, verb] of [
      ["cancel-output", "cancelOutput"],
      ["cancel-turn", "cancelTurn"],
    ] as const) {
      app.post<WithId>(`/admin/sessions/:id/${path}`, (req, reply) =>
        run(reply, () =>
          admin.cancel(verb, parse(id, req.params.id, "session id"), parse(cancelBody, req.body, "body")),
        ),
      );
    }
    app.get("/admin/usage", (req, reply) =>
      run(reply, async () => {
        const query = parse(usageQuery, req.query, "query");
        const { from, to } = usageRange(query);
        const listing = await admin.listUsage(from, to);
        if (query.format !== "csv") return listing;
        void reply
          .header("content-type", "text/csv; charset=utf-8")
          .header("content-disposition", `attachment; filename="talkgate-usage-${from}-${to}.csv"`);
        return usageCsv(listing.records);
      }),
    );
    app.get("/admin/errors", (_req, reply) => run(reply, () => admin.listErrors()));
    app.get("/admin/workers", (_req, reply) => run(reply, () => admin.listWorkers()));
    app.post<WithId>("/admin/workers/:id/drain", (req, reply) =>
      run(reply, () => admin.drainWorker(parse(id, req.params.id, "worker id"))),
    );
    app.get("/admin/jobs", (_req, reply) => run(reply, () => admin.listJobs()));
    app.post<WithId>("/admin/jobs/:id/cancel", (req, reply) =>
      run(reply, () =>
        admin.cancelJob(parse(jobId, req.params.id, "job id"), parse(reasonBody, req.body, "body").reason),
      ),
    );
  };
}

/** An onRequest hook that answers anything but an admin token 401 / 403 (the one authorizer's rule). */
export function adminOnly(
  ctx: SurfaceContext,
): (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> {
  const allowed = routeCheck(ctx.authorizer, "admin");
  return async (request, reply) => {
    const decision = allowed(request);
    if (decision !== "ok") {
      if (decision === "unauthorized") reply.header("www-authenticate", 'Bearer realm="talkgate"');
      return ctx.replyError(reply, new TalkError(decision));
    }
    return undefined;
  };
}
