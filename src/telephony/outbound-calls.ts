/**
 * Outbound calls: `POST /telephony/calls {to, from?, mode?, greeting?}`
 * (admin token) or the Talk API method `telephony.call` (admin scope) places
 * a call through the Twilio REST API with inline TwiML that connects its
 * stream, and `POST /telephony/twilio/status` receives the call's status
 * callbacks (signature-checked like the voice webhook). The call's session
 * exists from the dial on, so a call that is never answered still ends in
 * one `session.closed` carrying the carrier's reason (busy, no-answer,
 * failed, canceled, completed).
 *
 * With a job queue (Redis deployments) a request becomes an `outbound-call`
 * job, run by a worker with the media role: the job lives as long as the
 * call, a status callback that lands on another worker ends it through
 * `jobs.cancel(jobId, "carrier:<status>")` (BullMQ's cross-worker cancel
 * reaches the job's handler wherever it runs, even while its dial is still
 * waiting for Twilio's answer), and cancelling the job hangs up. The job
 * records the call's status as its progress and ends `completed` with the
 * carrier's reason, so `GET /telephony/calls/:id` (and `telephony.call.get`)
 * answers from any worker. Without a job queue the call is placed here,
 * in-process.
 */
import formbody from "@fastify/formbody";
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { z } from "zod";
import { TalkError, toTalkError } from "../core/errors.js";
import type { TalkLogger } from "../core/logger.js";
import { CALL_MODES, type CallMode } from "../config/telephony-schema.js";
import type { AppJobs } from "../cluster/job-scheduler.js";
import type { JobRecord } from "../cluster/job-queue.js";
import type { CallRegistry } from "./call-registry.js";
import type { CallIdentity, CallSession } from "./call-session.js";
import { StreamTokenStore } from "./twilio/stream-token-store.js";
import {
  isValidTwilioSignature,
  signedWebhookUrl,
  streamUrlFor,
  type TwilioFormParams,
} from "./twilio/twilio-signature.js";
import type { TwilioRestClient } from "./twilio/twilio-rest-client.js";
import { connectStreamTwiml, isLoopbackAddress } from "./twilio/voice-webhook.js";

export const OUTBOUND_CALLS_PATH = "/telephony/calls";
export const TWILIO_STATUS_PATH = "/telephony/twilio/status";
export const OUTBOUND_CALL_STATUS_PATH = "/telephony/calls/:id";
const TERMINAL_STATUSES = new Set(["busy", "no-answer", "failed", "canceled", "completed"]);

export const CallRequestSchema = z
  .object({
    to: z.string().regex(/^\+[1-9]\d{6,14}$/, "an E.164 number (+15551234567)"),
    from: z
      .string()
      .regex(/^\+[1-9]\d{6,14}$/, "an E.164 number")
      .optional(),
    mode: z.enum(CALL_MODES).optional(),
    greeting: z.string().max(1000).optional(),
  })
  .strict();

export type CallRequest = z.infer<typeof CallRequestSchema>;

export type AdminCheck = (request: FastifyRequest) => "ok" | "unauthorized" | "forbidden";

/**
 * Where an outbound call is: `queued` (its job waits for a media worker),
 * `dialling` (the REST request is out), `placed` (Twilio took the call; it
 * rings or talks), `ended` (`reason`: the carrier's busy / no-answer /
 * failed / canceled / completed, or the session's own: hung_up, cancelled,
 * connection_lost, closed), `failed` (the job failed before a call ended:
 * `error`).
 */
export type OutboundCallState = "queued" | "dialling" | "placed" | "ended" | "failed";

/** What `GET /telephony/calls/:id` and `telephony.call.get` answer; also the outbound-call job's progress and result. */
export interface OutboundCallStatus {
  state: OutboundCallState;
  jobId?: string;
  callSid?: string;
  sessionId?: string;
  reason?: string;
  error?: string;
}

/** What placing a call answers: the call (placed here) or its job (queued for a media worker). */
export type PlacedCall =
  | { placed: true; callSid: string; sessionId: string; status: string }
  | { placed: false; jobId: string; status: "queued" };

export interface OutboundCallsOptions {
  calls: CallRegistry;
  /** Undefined when Twilio credentials are missing: the route answers 503. */
  rest: TwilioRestClient | undefined;
  /** Base URL Twilio reaches (stream and status callback URLs); undefined in unsigned loopback mode. */
  publicUrl: string | undefined;
  /** Empty in unsigned loopback mode (then only loopback peers may post status callbacks). */
  authToken: string;
  defaultFrom: string | undefined;
  streamPath: string;
  maxPending: number;
  authorize: AdminCheck;
  createCall(
    identity: CallIdentity,
    overrides: { mode?: CallMode; greeting?: string },
    metadata?: Record<string, string>,
  ): CallSession;
  /** The server's own base URL (http://127.0.0.1:PORT) when there is no public URL (local demo mode). */
  localBaseUrl(): string | undefined;
  /** `outbound-call` jobs (Redis deployments); absent: calls are placed in-process. */
  jobs?: Pick<AppJobs, "enqueue" | "cancel" | "process" | "inspect"> | undefined;
  logger: TalkLogger;
}

interface PendingDial {
  callSid: string | undefined;
  call: CallSession | undefined;
}

interface CallJobData {
  request: CallRequest;
  from: string;
  /** Base URL of the stream and status callback, as the requesting worker saw it. */
  baseUrl: string;
}

/** What the stream route needs to accept the stream of a call we placed. */
export interface OutboundRedeemer {
  redeem(token: string | undefined, callSid: string): CallSession | undefined;
}

export interface OutboundCalls {
  plugin: FastifyPluginAsync;
  redeemer: OutboundRedeemer;
  /**
   * Places a call (or queues its job). Throws invalid_params (no caller id),
   * provider_unavailable (Twilio not configured or unreachable), rate_limited
   * (too many dials in progress), provider_error (Twilio refused).
   */
  place(request: CallRequest, baseUrl: string | undefined): Promise<PlacedCall>;
  /**
   * A call's status by job id (from any worker, through the job record) or
   * by CallSid (a call placed by this worker); undefined when unknown.
   */
  status(id: string): Promise<OutboundCallStatus | undefined>;
}

/** Calls placed here that ended, remembered so late callbacks and status reads still find them. */
const ENDED_CALLS_KEPT = 1000;

export function outboundCalls(o: OutboundCallsOptions): OutboundCalls {
  // Long TTL: the token must outlive the ringing (Twilio's default timeout is 60 s).
  const tokens = new StreamTokenStore({ ttlMs: 120_000, maxTokens: o.maxPending * 2 });
  const dials = new Map<string, PendingDial>();
  /** Live calls placed by this worker, by CallSid. */
  const placed = new Map<string, { call: CallSession; jobId: string | undefined }>();
  /** Calls placed here that ended, by CallSid (bounded: the oldest is dropped first). */
  const ended = new Map<string, OutboundCallStatus>();
  /** Terminal statuses that came for an unknown CallSid while a dial here waited for Twilio's answer. */
  const early = new Map<string, { status: string; at: number }>();

  const redeemer: OutboundRedeemer = {
    redeem(token, callSid) {
      if (!token) return undefined;
      const r = tokens.consume(token);
      if (!r.ok) return undefined;
      const dial = dials.get(r.call.callSid);
      dials.delete(r.call.callSid);
      return dial?.callSid === callSid ? dial.call : undefined;
    },
  };

  const baseOf = (requestBase: string | undefined): string => {
    const base = o.publicUrl ?? requestBase ?? o.localBaseUrl();
    if (!base)
      throw new TalkError("invalid_state", "The server does not listen yet: no URL for the call's stream.");
    return base;
  };

  const remember = (callSid: string, status: OutboundCallStatus): void => {
    placed.delete(callSid);
    ended.set(callSid, status);
    if (ended.size > ENDED_CALLS_KEPT) ended.delete(ended.keys().next().value as string);
  };

  /** Dials through the REST API and creates the call's session; the session lives from here on. */
  async function dial(
    request: CallRequest,
    from: string,
    base: string,
    jobId?: string,
  ): Promise<{ call: CallSession; status: string; closed: Promise<string> }> {
    if (!o.rest) throw notConfigured();
    if (dials.size >= o.maxPending)
      throw new TalkError("rate_limited", "Too many outbound calls are being placed.");
    const dialId = `dial-${crypto.randomUUID()}`;
    const identity = { to: request.to, from, direction: "outbound-api" };
    const token = tokens.issue({ callSid: dialId, ...identity });
    const pending: PendingDial = { callSid: undefined, call: undefined };
    dials.set(dialId, pending);
    const twiml = connectStreamTwiml(streamUrlFor(base, o.streamPath), token, {
      callSid: dialId,
      ...identity,
    });
    o.logger.info({ jobId, to: request.to }, "outbound call: dialling");
    try {
      const created = await o.rest.createCall({
        to: request.to,
        from,
        twiml,
        statusCallback: `${base}${TWILIO_STATUS_PATH}${jobId ? `?job=${encodeURIComponent(jobId)}` : ""}`,
        signal: AbortSignal.timeout(15_000),
      });
      const call = o.createCall(
        { callSid: created.sid, ...identity },
        {
          ...(request.mode ? { mode: request.mode } : {}),
          ...(request.greeting !== undefined ? { greeting: request.greeting } : {}),
        },
        jobId ? { jobId } : undefined,
      );
      const closed = closeReasonOf(call);
      pending.callSid = created.sid;
      pending.call = call;
      o.calls.add(call);
      placed.set(created.sid, { call, jobId });
      void closed.then((reason) =>
        remember(created.sid, {
          state: "ended",
          ...(jobId ? { jobId } : {}),
          callSid: created.sid,
          sessionId: call.session.id,
          reason,
        }),
      );
      o.logger.info({ callSid: created.sid, sessionId: call.session.id, jobId }, "outbound call placed");
      const earlyStatus = early.get(created.sid);
      if (earlyStatus) {
        early.delete(created.sid);
        o.logger.info(
          { callSid: created.sid, status: earlyStatus.status },
          "call ended by the carrier before its dial was answered",
        );
        void call.close(earlyStatus.status);
      }
      return { call, status: created.status, closed };
    } catch (err) {
      dials.delete(dialId);
      const error = toTalkError(err, "provider_error");
      o.logger.warn({ code: error.code, message: error.message }, "outbound call failed");
      throw error;
    }
  }

  const jobs = o.jobs;
  // One handler per kind, registered once: this worker runs outbound-call jobs when it has the media role
  // and can reach the carrier; a worker without Twilio credentials would only pull jobs to fail them.
  if (o.rest)
    jobs?.process<CallJobData>("outbound-call", { role: "media" }, async (job, signal) => {
      const report = async (status: OutboundCallStatus): Promise<void> => {
        await job.progress?.(status).catch((err: unknown) => {
          o.logger.debug({ err, jobId: job.id }, "outbound call status not recorded");
        });
      };
      void report({ state: "dialling", jobId: job.id });
      signal.addEventListener(
        "abort",
        () => o.logger.info({ jobId: job.id, reason: String(signal.reason) }, "outbound call: job signalled"),
        { once: true },
      );
      const { call, closed } = await dial(job.data.request, job.data.from, job.data.baseUrl, job.id);
      const ids = { jobId: job.id, callSid: call.callSid, sessionId: call.session.id };
      void report({ state: "placed", ...ids });
      let cancelled = false;
      const onAbort = (): void => {
        const reason = String(signal.reason ?? "cancelled");
        if (reason.startsWith("carrier:")) {
          o.logger.info(
            { ...ids, status: reason },
            "call ended by the carrier (status relayed through its job)",
          );
          void call.close(reason.slice("carrier:".length));
        } else {
          cancelled = true;
          void hangUp(call).finally(() => call.close("cancelled"));
        }
      };
      // The cancel (or a carrier's status relayed by another worker) may have come while the dial waited for Twilio.
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      const reason = await closed;
      signal.removeEventListener("abort", onAbort);
      const final: OutboundCallStatus = { state: "ended", ...ids, reason };
      // Recorded before the job ends, so no reader sees a finished job with a live status.
      await report(final);
      // A call the carrier or the line ended completes its job; one cancelled here fails it as cancelled.
      if (cancelled) signal.throwIfAborted();
      return final;
    });

  async function hangUp(call: CallSession): Promise<void> {
    try {
      await o.rest?.endCall(
        call.callSid,
        AbortSignal.timeout(10_000),
        call.state === "created" ? "canceled" : "completed",
      );
    } catch (err) {
      o.logger.warn(
        { callSid: call.callSid, err: toTalkError(err).message },
        "outbound call: hang-up after job cancel failed",
      );
    }
  }

  async function place(request: CallRequest, requestBase: string | undefined): Promise<PlacedCall> {
    if (!o.rest) throw notConfigured();
    const from = request.from ?? o.defaultFrom;
    if (!from)
      throw new TalkError(
        "invalid_params",
        "from: no caller id given and telephony.twilio.defaultFrom is unset.",
      );
    const base = baseOf(requestBase);
    if (jobs) {
      const jobId = `call-${crypto.randomUUID()}`;
      // One attempt: dialling is not idempotent. A dial that timed out may still have placed the call, and a
      // retry would ring the callee a second time; the failure reaches the caller through the job instead.
      await jobs.enqueue<CallJobData>(
        "outbound-call",
        { request, from, baseUrl: base },
        { jobId, attempts: 1 },
      );
      o.logger.info({ jobId, to: request.to }, "outbound call queued");
      return { placed: false, jobId, status: "queued" };
    }
    const { call, status } = await dial(request, from, base);
    return { placed: true, callSid: call.callSid, sessionId: call.session.id, status };
  }

  async function status(id: string): Promise<OutboundCallStatus | undefined> {
    const live = placed.get(id);
    if (live)
      return {
        state: "placed",
        ...(live.jobId ? { jobId: live.jobId } : {}),
        callSid: id,
        sessionId: live.call.session.id,
      };
    const done = ended.get(id);
    if (done) return done;
    if (!jobs) return undefined;
    const record = await jobs.inspect<CallJobData>(id);
    return record?.kind === "outbound-call" ? statusOfJob(record) : undefined;
  }

  /** A terminal status for a CallSid not known here: kept briefly when a dial here may be about to learn it. */
  const keepEarly = (callSid: string, status: string): boolean => {
    if (![...dials.values()].some((d) => d.callSid === undefined)) return false;
    const now = Date.now();
    for (const [sid, e] of early) if (now - e.at > 120_000 || early.size >= o.maxPending) early.delete(sid);
    early.set(callSid, { status, at: now });
    return true;
  };

  const refuse = (auth: "unauthorized" | "forbidden", what: string) => ({
    code: auth === "unauthorized" ? 401 : 403,
    body: {
      error: new TalkError(
        auth,
        auth === "forbidden" ? `${what} needs the admin scope.` : undefined,
      ).toJSON(),
    },
  });

  const plugin: FastifyPluginAsync = async (app) => {
    await app.register(formbody, { bodyLimit: 65_536 });

    app.post(OUTBOUND_CALLS_PATH, { bodyLimit: 16_384 }, async (request, reply) => {
      const auth = o.authorize(request);
      if (auth !== "ok") {
        const { code, body } = refuse(auth, "Placing calls");
        return reply.code(code).send(body);
      }
      if (!o.rest) return reply.code(503).send({ error: notConfigured().toJSON() });
      const parsed = CallRequestSchema.safeParse(request.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const err = new TalkError(
          "invalid_params",
          `${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`,
        );
        return reply.code(400).send({ error: err.toJSON() });
      }
      try {
        const { placed: here, ...result } = await place(
          parsed.data,
          `http://${request.headers.host ?? "127.0.0.1"}`,
        );
        return reply.code(here ? 201 : 202).send(result);
      } catch (err) {
        const error = toTalkError(err, "provider_error");
        const status = error.code === "invalid_params" ? 400 : error.code === "rate_limited" ? 429 : 502;
        return reply.code(status).send({ error: error.toJSON() });
      }
    });

    app.get<{ Params: { id: string } }>(OUTBOUND_CALL_STATUS_PATH, async (request, reply) => {
      const auth = o.authorize(request);
      if (auth !== "ok") {
        const { code, body } = refuse(auth, "Reading calls");
        return reply.code(code).send(body);
      }
      const id = request.params.id;
      if (!OUTBOUND_CALL_ID.test(id)) {
        const err = new TalkError("invalid_params", "id: a job id (call-...) or a CallSid (CA...).");
        return reply.code(400).send({ error: err.toJSON() });
      }
      try {
        const found = await status(id);
        if (found) return reply.send(found);
        return reply.code(404).send({ error: unknownCall(id).toJSON() });
      } catch (err) {
        const error = toTalkError(err, "internal");
        o.logger.warn({ id, err: error.message }, "outbound call status not readable");
        return reply.code(503).send({ error: error.toJSON() });
      }
    });

    app.post(TWILIO_STATUS_PATH, async (request, reply) => {
      const params = (request.body ?? {}) as TwilioFormParams;
      const header = request.headers["x-twilio-signature"];
      const publicUrl = o.publicUrl ?? `http://${request.headers.host ?? "127.0.0.1"}`;
      const ok = o.authToken
        ? isValidTwilioSignature(
            o.authToken,
            typeof header === "string" ? header : undefined,
            signedWebhookUrl(publicUrl, request.url),
            params,
          )
        : isLoopbackAddress(request.socket.remoteAddress);
      if (!ok) {
        o.logger.warn({}, "twilio status callback: signature rejected");
        return reply.code(403).type("text/plain").send("Forbidden");
      }
      const callSid = typeof params["CallSid"] === "string" ? params["CallSid"] : "";
      const status = typeof params["CallStatus"] === "string" ? params["CallStatus"] : "";
      if (!callSid || !status) {
        const err = new TalkError("invalid_params", "A status callback carries CallSid and CallStatus.");
        return reply.code(400).send({ error: err.toJSON() });
      }
      const terminal = TERMINAL_STATUSES.has(status);
      const query = (request.query ?? {}) as Record<string, unknown>;
      const jobId = typeof query["job"] === "string" && query["job"] ? query["job"] : undefined;
      if (terminal) for (const [id, d] of dials) if (d.callSid === callSid) dials.delete(id);

      const call = o.calls.get(callSid);
      if (call) {
        if (terminal) {
          o.logger.info({ callSid, status }, "call ended by the carrier");
          void call.close(status);
        }
        return reply.code(204).send();
      }
      if (jobs && jobId) {
        // The call runs on another worker (or its dial here has not returned yet): its job reaches it.
        try {
          const outcome = terminal
            ? await jobs.cancel(jobId, `carrier:${status}`)
            : (await jobs.inspect(jobId))
              ? "found"
              : "not_found";
          if (outcome !== "not_found") {
            o.logger.info(
              { callSid, jobId, status, outcome },
              "twilio status callback: relayed to the call's job",
            );
            return reply.code(204).send();
          }
        } catch (err) {
          o.logger.warn(
            { callSid, jobId, err: toTalkError(err).message },
            "twilio status callback: job not reached",
          );
          const error = new TalkError(
            "owner_unreachable",
            "The call's job could not be reached; try again.",
            {
              details: { callSid, jobId },
            },
          );
          return reply.code(503).send({ error: error.toJSON() });
        }
      }
      if (ended.has(callSid)) return reply.code(204).send(); // a late or repeated callback
      if (terminal && !jobId && keepEarly(callSid, status)) return reply.code(204).send();
      o.logger.warn({ callSid, jobId, status }, "twilio status callback: unknown call");
      return reply.code(404).send({ error: unknownCall(callSid, jobId).toJSON() });
    });
  };
  return { plugin, redeemer, place, status };
}

/** Job ids (call-<uuid>) and CallSids (CA + 32 hex). */
export const OUTBOUND_CALL_ID = /^[A-Za-z0-9_-]{1,128}$/;

function notConfigured(): TalkError {
  return new TalkError(
    "provider_unavailable",
    "Twilio is not configured: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and PUBLIC_URL.",
  );
}

function unknownCall(id: string, jobId?: string): TalkError {
  return new TalkError(
    "session_not_found",
    `No outbound call ${id}${jobId ? ` (job ${jobId})` : ""} is known to this deployment.`,
    { details: { id, ...(jobId ? { jobId } : {}) } },
  );
}

/** Resolves with the reason of the call's session.closed once the call is closed. */
function closeReasonOf(call: CallSession): Promise<string> {
  let reason = "closed";
  const off = call.session.subscribe((event) => {
    if (event.type === "session.closed") reason = event.payload.reason;
  });
  return call.whenClosed().then(() => {
    off();
    return reason;
  });
}

function statusOfJob(record: JobRecord<CallJobData>): OutboundCallStatus {
  const p = record.progress;
  const progress =
    typeof p === "object" && p !== null && typeof (p as { state?: unknown }).state === "string"
      ? (p as OutboundCallStatus)
      : undefined;
  if (progress?.state === "ended") return { ...progress, jobId: record.id };
  if (record.state === "failed")
    return {
      ...progress,
      state: "failed",
      jobId: record.id,
      ...(record.failedReason ? { error: record.failedReason } : {}),
    };
  if (progress) return { ...progress, jobId: record.id };
  const state = record.state === "active" ? "dialling" : record.state === "completed" ? "ended" : "queued";
  return { state, jobId: record.id };
}
