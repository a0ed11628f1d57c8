/**
 * Places outbound calls through the carrier's REST API. A dial issues a
 * one-time stream token (long-lived: it must outlive the ringing), asks the
 * carrier to connect the answered call to our stream with it, and creates
 * the call's session as soon as the carrier accepted the call, so a call
 * that is never answered still ends in one `session.closed` carrying the
 * carrier's reason. The stream route redeems the token to find the call.
 */
import { TalkError, toTalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { CallMode } from "../../config/index.js";
import type { CarrierProtocol } from "../carrier/carrier-protocol.js";
import type { CallRegistry } from "../call-registry.js";
import type { CallCarrier, CallIdentity, CallSession } from "../call-session.js";
import { STREAM_PARAMETER, streamParameters } from "../answer-webhook.js";
import { streamUrlFor } from "../public-url.js";
import type { StreamTokens } from "../stream-tokens.js";
import type { CallRequest } from "./call-request.js";
import type { CallStatusStore } from "./call-status-store.js";

export interface DialerOptions {
  carrier: CarrierProtocol;
  /** The carrier as its calls see it (id, REST client, line format). */
  callCarrier: CallCarrier;
  /** Stream tokens: the dial's token is spent by the stream route when the answered call's stream starts. */
  tokens: StreamTokens;
  calls: CallRegistry;
  statuses: CallStatusStore;
  /** Dials in progress at most (rate_limited beyond). */
  maxPending: number;
  createCall(
    carrier: CallCarrier,
    identity: CallIdentity,
    overrides: { mode?: CallMode; greeting?: string },
    metadata?: Record<string, string>,
  ): CallSession;
  logger: TalkLogger;
}

/** A placed call: its session, the carrier's first status, and the session's close reason once it closes. */
export interface DialledCall {
  call: CallSession;
  status: string;
  closed: Promise<string>;
}

interface PendingDial {
  callId: string | undefined;
  call: CallSession | undefined;
}

const DIAL_TIMEOUT_MS = 15_000;
/** A dial's stream token must outlive the ringing (carriers ring for about 60 s by default). */
const DIAL_TOKEN_TTL_MS = 120_000;
const HANG_UP_TIMEOUT_MS = 10_000;

export class OutboundDialer {
  readonly #o: DialerOptions;
  readonly #dials = new Map<string, PendingDial>();

  constructor(options: DialerOptions) {
    this.#o = options;
  }

  /** A dial here waits for the carrier's answer (a status for an unknown call may be its). */
  get awaitingAnswer(): boolean {
    return [...this.#dials.values()].some((d) => d.callId === undefined);
  }

  /** Dials through the REST API and creates the call's session; the session lives from here on. */
  async dial(request: CallRequest, from: string, base: string, jobId?: string): Promise<DialledCall> {
    const { carrier, logger } = this.#o;
    const rest = carrier.rest;
    if (!rest) throw notConfigured(carrier);
    if (this.#dials.size >= this.#o.maxPending)
      throw new TalkError("rate_limited", "Too many outbound calls are being placed.");
    const dialId = `dial-${crypto.randomUUID()}`;
    const identity = { to: request.to, from, direction: "outbound-api" };
    const pending: PendingDial = { callId: undefined, call: undefined };
    this.#dials.set(dialId, pending);
    logger.info({ jobId, to: request.to }, "outbound call: dialling");
    try {
      const token = await this.#o.tokens.issue(
        { callId: dialId, ...identity, kind: "outbound", carrier: carrier.id },
        DIAL_TOKEN_TTL_MS,
      );
      const created = await rest.dial({
        to: request.to,
        from,
        stream: {
          url: streamUrlFor(base, carrier.paths.stream),
          parameters: streamParameters(token, { callId: dialId, ...identity }),
        },
        answerUrl: `${base}${carrier.paths.voice}?${STREAM_PARAMETER.token}=${token}`,
        statusCallbackUrl: `${base}${carrier.paths.status}${jobId ? `?job=${encodeURIComponent(jobId)}` : ""}`,
        signal: AbortSignal.timeout(DIAL_TIMEOUT_MS),
      });
      const callId = created.callId;
      const call = this.#o.createCall(
        this.#o.callCarrier,
        { callSid: callId, ...identity },
        {
          ...(request.mode ? { mode: request.mode } : {}),
          ...(request.greeting !== undefined ? { greeting: request.greeting } : {}),
        },
        jobId ? { jobId } : undefined,
      );
      const closed = closeReasonOf(call);
      pending.callId = callId;
      pending.call = call;
      this.#o.calls.add(call);
      this.#o.statuses.placed(callId, call, jobId);
      void closed.then((reason) =>
        this.#o.statuses.ended(callId, {
          state: "ended",
          ...(jobId ? { jobId } : {}),
          callSid: callId,
          sessionId: call.session.id,
          reason,
        }),
      );
      logger.info({ callId, sessionId: call.session.id, jobId }, "outbound call placed");
      const early = this.#o.statuses.takeEarly(callId);
      if (early !== undefined) {
        logger.info({ callId, status: early }, "call ended by the carrier before its dial was answered");
        void call.close(early);
      }
      return { call, status: created.status, closed };
    } catch (err) {
      this.#dials.delete(dialId);
      const error = toTalkError(err, "provider_error");
      logger.warn({ code: error.code, message: error.message }, "outbound call failed");
      throw error;
    }
  }

  /** Whether `dialId` (a stream token's call) is a dial of this worker's still waiting for its stream. */
  holds(dialId: string): boolean {
    return this.#dials.has(dialId);
  }

  /**
   * The call dialled as `dialId`, once (its stream started); undefined when
   * the carrier's call id differs. A carrier whose stream cannot name its own
   * call id (Vonage: the answer document is sent with the dial, before the
   * call has an id) names the dial instead: `callId === dialId`, which the
   * signed, single-use token vouches for.
   */
  take(dialId: string, callId: string): CallSession | undefined {
    const dial = this.#dials.get(dialId);
    this.#dials.delete(dialId);
    if (dial?.callId === undefined) return undefined;
    return dial.callId === callId || callId === dialId ? dial.call : undefined;
  }

  /** The carrier ended `callId`: its dial, if still pending, is forgotten. */
  forget(callId: string): void {
    for (const [id, d] of this.#dials) if (d.callId === callId) this.#dials.delete(id);
  }

  /** Hangs up (or cancels while ringing) through the REST API; a failure is logged, not thrown. */
  async hangUp(call: CallSession): Promise<void> {
    try {
      await this.#o.carrier.rest?.hangUp(call.callSid, {
        signal: AbortSignal.timeout(HANG_UP_TIMEOUT_MS),
        ringing: call.state === "created",
      });
    } catch (err) {
      this.#o.logger.warn(
        { callId: call.callSid, err: toTalkError(err).message },
        "outbound call: hang-up after job cancel failed",
      );
    }
  }

  /** Forgets every dial waiting for its stream (shutdown). */
  clear(): void {
    this.#dials.clear();
  }
}

export function notConfigured(carrier: Pick<CarrierProtocol, "name" | "missingSettings">): TalkError {
  return new TalkError(
    "provider_unavailable",
    `${carrier.name} is not configured: set ${carrier.missingSettings}.`,
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
