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
 * `jobs.cancel(jobId, "carrier:<status>")`, and cancelling the job hangs up.
 * Without one the call is placed here, in-process.
 */
import formbody from "@fastify/formbody";
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import { z } from "zod";
import { TalkError, toTalkError } from "../core/errors.js";
import type { TalkLogger } from "../core/logger.js";
import { CALL_MODES, type CallMode } from "../config/telephony-schema.js";
import type { AppJobs } from "../cluster/job-scheduler.js";
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
  jobs?: Pick<AppJobs, "enqueue" | "cancel" | "process"> | undefined;
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
}

export function outboundCalls(o: OutboundCallsOptions): OutboundCalls {
  // Long TTL: the token must outlive the ringing (Twilio's default timeout is 60 s).
  const tokens = new StreamTokenStore({ ttlMs: 120_000, maxTokens: o.maxPending * 2 });
  const dials = new Map<string, PendingDial>();

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

  /** Dials through the REST API and creates the call's session; the session lives from here on. */
  async function dial(
    request: CallRequest,
    from: string,
    base: string,
    jobId?: string,
  ): Promise<{ call: CallSession; status: string }> {
    if (!o.rest)
      throw new TalkError(
        "provider_unavailable",
        "Twilio is not configured: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and PUBLIC_URL.",
      );
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
      pending.callSid = created.sid;
      pending.call = call;
      o.calls.add(call);
      o.logger.info({ callSid: created.sid, sessionId: call.session.id, jobId }, "outbound call placed");
      return { call, status: created.status };
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
    jobs?.process<CallJobData>("outbound-call", async (job, signal) => {
      const { call } = await dial(job.data.request, job.data.from, job.data.baseUrl, job.id);
      const ended = new Promise<void>((resolve) => {
        const onAbort = (): void => {
          const reason = String(signal.reason ?? "cancelled");
          if (reason.startsWith("carrier:")) void call.close(reason.slice("carrier:".length));
          else void hangUp(call).finally(() => call.close("cancelled"));
        };
        signal.addEventListener("abort", onAbort, { once: true });
        void call.whenClosed().then(() => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        });
      });
      await ended;
      return { callSid: call.callSid, sessionId: call.session.id };
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
    if (!o.rest)
      throw new TalkError(
        "provider_unavailable",
        "Twilio is not configured: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and PUBLIC_URL.",
      );
    const from = request.from ?? o.defaultFrom;
    if (!from)
      throw new TalkError(
        "invalid_params",
        "from: no caller id given and telephony.twilio.defaultFrom is unset.",
      );
    const base = baseOf(requestBase);
    if (jobs) {
      const jobId = `call-${crypto.randomUUID()}`;
      await jobs.enqueue<CallJobData>("outbound-call", { request, from, baseUrl: base }, { jobId });
      o.logger.info({ jobId, to: request.to }, "outbound call queued");
      return { placed: false, jobId, status: "queued" };
    }
    const { call, status } = await dial(request, from, base);
    return { placed: true, callSid: call.callSid, sessionId: call.session.id, status };
  }

  const plugin: FastifyPluginAsync = async (app) => {
    await app.register(formbody, { bodyLimit: 65_536 });

    app.post(OUTBOUND_CALLS_PATH, { bodyLimit: 16_384 }, async (request, reply) => {
      const auth = o.authorize(request);
      if (auth !== "ok") {
        const code = auth === "unauthorized" ? 401 : 403;
        return reply.code(code).send({
          error: new TalkError(
            auth,
            auth === "forbidden" ? "Placing calls needs the admin scope." : undefined,
          ).toJSON(),
        });
      }
      if (!o.rest) {
        const err = new TalkError(
          "provider_unavailable",
          "Twilio is not configured: set TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and PUBLIC_URL.",
        );
        return reply.code(503).send({ error: err.toJSON() });
      }
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
        const { placed, ...result } = await place(
          parsed.data,
          `http://${request.headers.host ?? "127.0.0.1"}`,
        );
        return reply.code(placed ? 201 : 202).send(result);
      } catch (err) {
        const error = toTalkError(err, "provider_error");
        const status = error.code === "invalid_params" ? 400 : error.code === "rate_limited" ? 429 : 502;
        return reply.code(status).send({ error: error.toJSON() });
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
      const callSid = typeof params["CallSid"] === "string" ? params["CallSid"] : undefined;
      const status = typeof params["CallStatus"] === "string" ? params["CallStatus"] : undefined;
      const jobId = (request.query as Record<string, unknown> | undefined)?.["job"];
      if (callSid && status && TERMINAL_STATUSES.has(status)) {
        const call = o.calls.get(callSid);
        if (call) {
          o.logger.info({ callSid, status }, "call ended by the carrier");
          void call.close(status);
        } else if (jobs && typeof jobId === "string") {
          // The call runs on another worker: ending its job ends the call there with this reason.
          void jobs.cancel(jobId, `carrier:${status}`).catch((err: unknown) => {
            o.logger.warn(
              { callSid, jobId, err: toTalkError(err).message },
              "twilio status callback: job not reached",
            );
          });
        }
        for (const [id, d] of dials) if (d.callSid === callSid) dials.delete(id);
      }
      return reply.code(204).send();
    });
  };
  return { plugin, redeemer, place };
}
