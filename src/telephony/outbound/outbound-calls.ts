/**
 * Outbound calls, put together: `place` dials here (no job queue) or queues
 * an `outbound-call` job for a media worker (Redis deployments), through the
 * carrier the request names (or the default one); `status` reads where a call
 * is; `redeemer` lets each carrier's stream route accept the stream of a call
 * dialled here; `plugin` carries the routes. The pieces are one concept each:
 * the dialer (REST + stream tokens, one per carrier), the job, the status
 * store and the routes.
 */
import type { FastifyPluginAsync } from "fastify";
import type { AppJobs } from "../../cluster/index.js";
import { TalkError } from "../../core/index.js";
import type { LimitedLog, TalkLogger } from "../../core/index.js";
import type { RouteCheck } from "../../gateway/index.js";
import type { AmdConfig } from "../../config/index.js";
import { MachineDetections, type DetectionWorkers } from "../amd/amd-callbacks.js";
import { resolveAmd } from "../amd/amd-settings.js";
import type { CarrierProtocol } from "../carrier/carrier-protocol.js";
import type { CallRegistry } from "../call-registry.js";
import type { CallCarrier, CallSession } from "../call-session.js";
import type { StreamTokens } from "../stream-tokens.js";
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

/** A carrier calls can be placed through. */
export interface OutboundCarrier {
  carrier: CarrierProtocol;
  callCarrier: CallCarrier;
  /** Base URL the carrier reaches (stream and status callback URLs); undefined in unsigned loopback mode. */
  publicUrl: string | undefined;
}

export interface OutboundCallsOptions {
  /** The carriers served here (each with its status callback route). */
  carriers: readonly OutboundCarrier[];
  /** The carrier a request that names none goes through. */
  defaultCarrier: string;
  calls: CallRegistry;
  tokens: StreamTokens;
  maxPending: number;
  /** telephony.amd, and telephony.hangUpTimeoutMs (a voicemail message's playback before the hang-up). */
  amd?: { config: AmdConfig; hangUpTimeoutMs: number } | undefined;
  authorize: RouteCheck;
  createCall: DialerOptions["createCall"];
  /** The server's own base URL (http://127.0.0.1:PORT) when there is no public URL (local demo mode). */
  localBaseUrl(): string | undefined;
  /** This worker in the cluster: AMD results reaching another worker are relayed to the one that dialled. */
  workers?: DetectionWorkers | undefined;
  /** `outbound-call` jobs (Redis deployments); absent: calls are placed in-process. */
  jobs?: Pick<AppJobs, "enqueue" | "cancel" | "process" | "inspect"> | undefined;
  logger: TalkLogger;
  /** The rate-limited warnings of refusals (forged status callbacks), shared by the surface's routes. */
  refusals?: LimitedLog | undefined;
}

/** What a carrier's stream route needs to accept the stream of a call dialled here. */
export interface OutboundRedeemer {
  holds(dialId: string): boolean;
  take(dialId: string, callId: string): CallSession | undefined;
}

export interface OutboundCalls {
  plugin: FastifyPluginAsync;
  /** The redeemer of one carrier's dials. */
  redeemer(carrier: string): OutboundRedeemer;
  /**
   * Places a call (or queues its job). Throws invalid_params (no caller id,
   * unknown carrier), provider_unavailable (carrier not configured or
   * unreachable), rate_limited (too many dials in progress), provider_error
   * (the carrier refused).
   */
  place(request: CallRequest, baseUrl: string | undefined): Promise<PlacedCall>;
  /** A call's status by job id (any worker) or carrier call id (placed here); undefined when unknown. */
  status(id: string): Promise<OutboundCallStatus | undefined>;
  /** Forgets dials waiting for their streams (shutdown). */
  close(): void;
}

/** telephony.amd's defaults: no detection unless a request asks for it. */
const NO_AMD: AmdConfig = { greet: "after_detection", timeoutMs: 30_000, numbers: {} };

interface CarrierDialing {
  entry: OutboundCarrier;
  dialer: OutboundDialer;
}

export function outboundCalls(o: OutboundCallsOptions): OutboundCalls {
  const { jobs, logger } = o;
  const statuses = new CallStatusStore({ maxEarly: o.maxPending, jobs });
  const dialing = new Map<string, CarrierDialing>();
  const detections = new MachineDetections();
  const amd = o.amd ?? { config: NO_AMD, hangUpTimeoutMs: 30_000 };
  for (const entry of o.carriers) {
    const dialer = new OutboundDialer({
      carrier: entry.carrier,
      callCarrier: entry.callCarrier,
      tokens: o.tokens,
      calls: o.calls,
      statuses,
      maxPending: o.maxPending,
      amd: { ...amd, detections, workerId: o.workers?.workerId },
      createCall: o.createCall,
      logger,
    });
    dialing.set(entry.carrier.id, { entry, dialer });
  }
  // One handler per kind, registered once: this worker runs outbound-call jobs when it has the media role
  // and can reach a carrier; a worker without carrier credentials would only pull jobs to fail them.
  const canDial = [...dialing.values()].some((d) => d.entry.carrier.rest);
  const stopAnswering = o.workers?.answer((detection) =>
    detections.apply(detection, (id) => statuses.hasEnded(id)),
  );
  if (canDial && jobs) processOutboundCalls(jobs, (id) => dialing.get(id)?.dialer, logger);

  const carrierOf = (request: CallRequest): CarrierDialing => {
    const id = request.carrier ?? o.defaultCarrier;
    const found = dialing.get(id);
    if (!found)
      throw new TalkError(
        "invalid_params",
        `carrier: ${id} is not served here (served: ${[...dialing.keys()].join(", ") || "none"}).`,
        { details: { issues: [{ path: "carrier", message: "unknown carrier" }] } },
      );
    return found;
  };

  const baseOf = (entry: OutboundCarrier, requestBase: string | undefined): string => {
    const base = entry.publicUrl ?? requestBase ?? o.localBaseUrl();
    if (!base)
      throw new TalkError("invalid_state", "The server does not listen yet: no URL for the call's stream.");
    return base;
  };

  async function place(request: CallRequest, requestBase: string | undefined): Promise<PlacedCall> {
    const { entry, dialer } = carrierOf(request);
    const { carrier } = entry;
    if (!carrier.rest) throw notConfigured(carrier);
    const from = request.from ?? carrier.defaultFrom;
    if (!from)
      throw new TalkError(
        "invalid_params",
        `from: no caller id given and telephony.${carrier.id}.defaultFrom is unset.`,
      );
    resolveAmd(request.machineDetection, from, amd.config); // invalid_params before anything is queued
    const base = baseOf(entry, requestBase);
    if (jobs) {
      const jobId = `call-${crypto.randomUUID()}`;
      // One attempt: dialling is not idempotent. A dial that timed out may still have placed the call, and a
      // retry would ring the callee a second time; the failure reaches the caller through the job instead.
      await jobs.enqueue<CallJobData>(
        OUTBOUND_CALL_JOB,
        { request, carrier: carrier.id, from, baseUrl: base },
        { jobId, attempts: 1 },
      );
      logger.info({ jobId, carrier: carrier.id, to: request.to }, "outbound call queued");
      return { placed: false, jobId, status: "queued" };
    }
    const { call, status } = await dialer.dial(request, from, base);
    return { placed: true, callSid: call.callSid, sessionId: call.session.id, status };
  }

  const status = (id: string) => statuses.status(id);
  const plugin = outboundRoutes({
    carriers: [...dialing.values()].map(({ entry, dialer }) => ({
      carrier: entry.carrier,
      publicUrl: entry.publicUrl,
      dialer,
    })),
    calls: o.calls,
    statuses,
    detections,
    workers: o.workers,
    authorize: o.authorize,
    place,
    status,
    jobs,
    logger,
    refusals: o.refusals,
  });
  const none: OutboundRedeemer = { holds: () => false, take: () => undefined };
  return {
    plugin,
    redeemer: (carrier) => {
      const dialer = dialing.get(carrier)?.dialer;
      return dialer
        ? { holds: (id) => dialer.holds(id), take: (id, callId) => dialer.take(id, callId) }
        : none;
    },
    place,
    status,
    close: () => {
      stopAnswering?.();
      for (const { dialer } of dialing.values()) dialer.clear();
    },
  };
}
