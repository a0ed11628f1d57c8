/**
 * The HTTP face of outbound calls: `POST /telephony/calls` (admin) places a
 * call, `GET /telephony/calls/:id` (admin) says where it is, and POST
 * `<carrier paths.status>` (e.g. /telephony/twilio/status) takes the
 * carrier's status callbacks (authenticated like the voice webhook): a
 * terminal status closes the call here, or reaches the call's job on
 * whichever worker runs it.
 */
import formbody from "@fastify/formbody";
import type { FastifyPluginAsync } from "fastify";
import type { AppJobs } from "../../cluster/index.js";
import { LimitedLog, TalkError, toTalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import { replyError, type RouteCheck } from "../../gateway/index.js";
import {
  machineDetectionCallback,
  type DetectionWorkers,
  type MachineDetections,
} from "../amd/amd-callbacks.js";
import type { CarrierProtocol } from "../carrier/carrier-protocol.js";
import { webhookBodyParsers, webhookRequest } from "../carrier/webhook-request.js";
import type { CallRegistry } from "../call-registry.js";
import { isLoopbackAddress } from "../public-url.js";
import {
  CallRequestSchema,
  OUTBOUND_CALL_ID,
  type CallRequest,
  type OutboundCallStatus,
  type PlacedCall,
} from "./call-request.js";
import type { CallStatusStore } from "./call-status-store.js";
import type { OutboundDialer } from "./dialer.js";
import { CARRIER_STATUS_PREFIX } from "./outbound-call-job.js";

export const OUTBOUND_CALLS_PATH = "/telephony/calls";
export const OUTBOUND_CALL_STATUS_PATH = "/telephony/calls/:id";

/** One carrier's status callbacks: the carrier, the URL it signs, and its dialer. */
export interface StatusCallbackCarrier {
  carrier: CarrierProtocol;
  /** Base URL the carrier reaches; undefined in unsigned loopback mode (then only loopback peers may post status callbacks). */
  publicUrl: string | undefined;
  dialer: OutboundDialer;
}

export interface OutboundRoutesOptions {
  carriers: readonly StatusCallbackCarrier[];
  calls: CallRegistry;
  statuses: CallStatusStore;
  /** Calls whose answering-machine detection runs here (AMD results come to the status route). */
  detections: MachineDetections;
  /** This worker in the cluster (relays AMD results to the worker that dialled). */
  workers?: DetectionWorkers | undefined;
  authorize: RouteCheck;
  place(request: CallRequest, baseUrl: string | undefined): Promise<PlacedCall>;
  status(id: string): Promise<OutboundCallStatus | undefined>;
  jobs: Pick<AppJobs, "cancel" | "inspect"> | undefined;
  logger: TalkLogger;
  /** The rate-limited warnings of refusals, shared by the surface's routes. Default: one of these routes' own. */
  refusals?: LimitedLog | undefined;
}

export function outboundRoutes(o: OutboundRoutesOptions): FastifyPluginAsync {
  const { logger } = o;
  const refusal = (auth: "unauthorized" | "forbidden", what: string): TalkError =>
    new TalkError(auth, auth === "forbidden" ? `${what} needs the admin scope.` : undefined);

  return async (app) => {
    await app.register(formbody, { bodyLimit: 65_536 });

    app.post(OUTBOUND_CALLS_PATH, { bodyLimit: 16_384 }, async (request, reply) => {
      const auth = o.authorize(request);
      if (auth !== "ok") return replyError(reply, refusal(auth, "Placing calls"));
      const parsed = CallRequestSchema.safeParse(request.body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const err = new TalkError(
          "invalid_params",
          `${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`,
        );
        return replyError(reply, err);
      }
      try {
        const { placed: here, ...result } = await o.place(
          parsed.data,
          `http://${request.headers.host ?? "127.0.0.1"}`,
        );
        return reply.code(here ? 201 : 202).send(result);
      } catch (err) {
        return replyError(reply, toTalkError(err, "provider_error"));
      }
    });

    app.get<{ Params: { id: string } }>(OUTBOUND_CALL_STATUS_PATH, async (request, reply) => {
      const auth = o.authorize(request);
      if (auth !== "ok") return replyError(reply, refusal(auth, "Reading calls"));
      const id = request.params.id;
      if (!OUTBOUND_CALL_ID.test(id)) {
        return replyError(
          reply,
          new TalkError("invalid_params", "id: a job id (call-...) or a carrier call id."),
        );
      }
      try {
        const found = await o.status(id);
        if (found) return reply.send(found);
        return replyError(reply, unknownCall(id));
      } catch (err) {
        // The job store (Redis) did not answer: the status exists, it cannot be read now.
        const error = toTalkError(err, "provider_unavailable");
        logger.warn({ id, err: error.message }, "outbound call status not readable");
        return replyError(reply, error);
      }
    });

    const refusals = o.refusals ?? new LimitedLog(logger);
    for (const carrier of o.carriers) await app.register(statusCallbackRoute(o, carrier, refusals));
  };
}

/** The carrier's status callbacks, in their own scope (their body parsers keep the raw body for signatures). */
function statusCallbackRoute(
  o: OutboundRoutesOptions,
  c: StatusCallbackCarrier,
  refusals: LimitedLog,
): FastifyPluginAsync {
  const { logger, jobs } = o;
  const { carrier, dialer } = c;
  return async (app) => {
    webhookBodyParsers(app, 65_536);
    app.post(carrier.paths.status, async (request, reply) => {
      const publicUrl = c.publicUrl ?? `http://${request.headers.host ?? "127.0.0.1"}`;
      const webhook = webhookRequest(request, publicUrl);
      const ok = carrier.signed
        ? carrier.authenticate(webhook) === "ok"
        : isLoopbackAddress(request.socket.remoteAddress);
      if (!ok) {
        refusals.warn(
          `${carrier.id}:status:signature`,
          { carrier: carrier.id },
          "status callback: signature rejected",
        );
        const refusal = carrier.refusalStatus ?? 403;
        return reply
          .code(refusal)
          .type("text/plain")
          .send(refusal === 401 ? "Unauthorized" : "Forbidden");
      }
      const query = (request.query ?? {}) as Record<string, unknown>;
      const queried = (key: string): string | undefined =>
        typeof query[key] === "string" && query[key] ? query[key] : undefined;
      const amd = carrier.machineDetection?.(webhook);
      if (amd) {
        const dialledBy = queried("worker");
        const err = await machineDetectionCallback(amd, {
          detections: o.detections,
          hasEnded: (id) => o.statuses.hasEnded(id),
          dialledBy: dialledBy !== o.workers?.workerId ? dialledBy : undefined,
          relay: o.workers?.relay,
          logger,
          carrier: carrier.id,
        });
        return err ? replyError(reply, err) : reply.code(204).send();
      }
      const status = carrier.callStatus(webhook);
      if (!status) {
        const err = new TalkError("invalid_params", "A status callback names the call and its status.");
        return replyError(reply, err);
      }
      const { callId, terminal } = status;
      const jobId = queried("job");
      // The first status callback of a dial whose answer named no call (Telnyx TeXML) names it here.
      const dialId = queried("dial");
      if (dialId !== undefined && dialer.named(dialId, callId)) {
        logger.info({ callId, dialId, status: status.status }, "status callback: names the dialled call");
        if (terminal) o.statuses.keepEarly(callId, status.status);
        return reply.code(204).send();
      }
      if (terminal) dialer.forget(callId);

      const call = o.calls.get(callId);
      if (call) {
        if (terminal) {
          logger.info({ callId, status: status.status }, "call ended by the carrier");
          void call.close(status.status);
        }
        return reply.code(204).send();
      }
      if (jobs && jobId) {
        // The call runs on another worker (or its dial here has not returned yet): its job reaches it.
        try {
          const outcome = terminal
            ? await jobs.cancel(jobId, `${CARRIER_STATUS_PREFIX}${status.status}`)
            : (await jobs.inspect(jobId))
              ? "found"
              : "not_found";
          if (outcome !== "not_found") {
            logger.info(
              { callId, jobId, status: status.status, outcome },
              "status callback: relayed to the call's job",
            );
            return reply.code(204).send();
          }
        } catch (err) {
          logger.warn({ callId, jobId, err: toTalkError(err).message }, "status callback: job not reached");
          const error = new TalkError(
            "owner_unreachable",
            "The call's job could not be reached; try again.",
            {
              details: { callSid: callId, jobId },
            },
          );
          return replyError(reply, error);
        }
      }
      if (o.statuses.hasEnded(callId)) return reply.code(204).send(); // a late or repeated callback
      if (terminal && !jobId && dialer.awaitingAnswer) {
        o.statuses.keepEarly(callId, status.status);
        return reply.code(204).send();
      }
      logger.warn({ callId, jobId, status: status.status }, "status callback: unknown call");
      return replyError(reply, unknownCall(callId, jobId));
    });
  };
}

export function unknownCall(id: string, jobId?: string): TalkError {
  return new TalkError(
    "session_not_found",
    `No outbound call ${id}${jobId ? ` (job ${jobId})` : ""} is known to this deployment.`,
    { details: { id, ...(jobId ? { jobId } : {}) } },
  );
}
