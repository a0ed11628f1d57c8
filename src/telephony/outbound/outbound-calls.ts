/**
 * Outbound calls, put together: `place` dials here (no job queue) or queues
 * an `outbound-call` job for a media worker (Redis deployments); `status`
 * reads where a call is; `redeemer` lets the stream route accept the stream
 * of a call we placed; `plugin` carries the routes. The pieces are one
 * concept each: the dialer (REST + stream tokens), the job, the status
 * store and the routes.
 */
import type { FastifyPluginAsync } from "fastify";
import type { AppJobs } from "../../cluster/index.js";
import { TalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { RouteCheck } from "../../gateway/index.js";
import type { CarrierProtocol } from "../carrier/carrier-protocol.js";
import type { CallRegistry } from "../call-registry.js";
import type { CallSession } from "../call-session.js";
import {
  OUTBOUND_CALL_JOB,
  type CallJobData,
  type CallRequest,
  type OutboundCallStatus,
  type PlacedCall,
} from "./call-request.js";
import { CallStatusStore } from "./call-status-store.js";
import { notConfigured, OutboundDialer, type DialerOptions } from "./dialer.js";
import { processOutboundCalls } from "./outbound-call-job.js";
import { outboundRoutes } from "./outbound-routes.js";

export interface OutboundCallsOptions {
  carrier: CarrierProtocol;
  calls: CallRegistry;
  /** Base URL the carrier reaches (stream and status callback URLs); undefined in unsigned loopback mode. */
  publicUrl: string | undefined;
  maxPending: number;
  authorize: RouteCheck;
  createCall: DialerOptions["createCall"];
  /** The server's own base URL (http://127.0.0.1:PORT) when there is no public URL (local demo mode). */
  localBaseUrl(): string | undefined;
  /** `outbound-call` jobs (Redis deployments); absent: calls are placed in-process. */
  jobs?: Pick<AppJobs, "enqueue" | "cancel" | "process" | "inspect"> | undefined;
  logger: TalkLogger;
}

/** What the stream route needs to accept the stream of a call we placed. */
export interface OutboundRedeemer {
  redeem(token: string | undefined, callId: string): CallSession | undefined;
}

export interface OutboundCalls {
  plugin: FastifyPluginAsync;
  redeemer: OutboundRedeemer;
  /**
   * Places a call (or queues its job). Throws invalid_params (no caller id),
   * provider_unavailable (carrier not configured or unreachable), rate_limited
   * (too many dials in progress), provider_error (the carrier refused).
   */
  place(request: CallRequest, baseUrl: string | undefined): Promise<PlacedCall>;
  /** A call's status by job id (any worker) or carrier call id (placed here); undefined when unknown. */
  status(id: string): Promise<OutboundCallStatus | undefined>;
  /** Forgets outstanding stream tokens (shutdown). */
  close(): void;
}

export function outboundCalls(o: OutboundCallsOptions): OutboundCalls {
  const { carrier, jobs, logger } = o;
  const statuses = new CallStatusStore({ maxEarly: o.maxPending, jobs });
  const dialer = new OutboundDialer({
    carrier,
    calls: o.calls,
    statuses,
    maxPending: o.maxPending,
    createCall: o.createCall,
    logger,
  });
  // One handler per kind, registered once: this worker runs outbound-call jobs when it has the media role
  // and can reach the carrier; a worker without carrier credentials would only pull jobs to fail them.
  if (carrier.rest && jobs) processOutboundCalls(jobs, dialer, logger);

  const baseOf = (requestBase: string | undefined): string => {
    const base = o.publicUrl ?? requestBase ?? o.localBaseUrl();
    if (!base)
      throw new TalkError("invalid_state", "The server does not listen yet: no URL for the call's stream.");
    return base;
  };

  async function place(request: CallRequest, requestBase: string | undefined): Promise<PlacedCall> {
    if (!carrier.rest) throw notConfigured(carrier);
    const from = request.from ?? carrier.defaultFrom;
    if (!from)
      throw new TalkError(
        "invalid_params",
        `from: no caller id given and telephony.${carrier.id}.defaultFrom is unset.`,
      );
    const base = baseOf(requestBase);
    if (jobs) {
      const jobId = `call-${crypto.randomUUID()}`;
      // One attempt: dialling is not idempotent. A dial that timed out may still have placed the call, and a
      // retry would ring the callee a second time; the failure reaches the caller through the job instead.
      await jobs.enqueue<CallJobData>(
        OUTBOUND_CALL_JOB,
        { request, from, baseUrl: base },
        { jobId, attempts: 1 },
      );
      logger.info({ jobId, to: request.to }, "outbound call queued");
      return { placed: false, jobId, status: "queued" };
    }
    const { call, status } = await dialer.dial(request, from, base);
    return { placed: true, callSid: call.callSid, sessionId: call.session.id, status };
  }

  const status = (id: string) => statuses.status(id);
  const plugin = outboundRoutes({
    carrier,
    calls: o.calls,
    dialer,
    statuses,
    publicUrl: o.publicUrl,
    authorize: o.authorize,
    place,
    status,
    jobs,
    logger,
  });
  return {
    plugin,
    redeemer: { redeem: (token, callId) => dialer.redeem(token, callId) },
    place,
    status,
    close: () => dialer.clear(),
  };
}
