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
import type { AmdConfig, CallMode } from "../../config/index.js";
import type { MachineDetections } from "../amd/amd-callbacks.js";
import { resolveAmd } from "../amd/amd-settings.js";
import type { AmdSettings } from "../amd/amd-types.js";
import { CallMachineDetection } from "../amd/call-machine-detection.js";
import type { CarrierCall, CarrierDialRequest, CarrierProtocol } from "../carrier/carrier-protocol.js";
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
  /** telephony.amd, and the calls whose detection runs (the status route delivers AMD callbacks to them). */
  amd: {
    config: AmdConfig;
    detections: MachineDetections;
    hangUpTimeoutMs: number;
    /** This worker's cluster id, named in AMD callback URLs so a callback reaching another worker is relayed here. */
    workerId?: string | undefined;
  };
  createCall(
    carrier: CallCarrier,
    identity: CallIdentity,
    overrides: { mode?: CallMode; greeting?: string; holdGreeting?: boolean },
    metadata?: Record<string, string>,
  ): CallSession;
  logger: TalkLogger;
}

/** A placed call: its session, the carrier's first status, and the session's close reason once it closes. */
export interface DialledCall {
  call: CallSession;
  status: string;
  closed: Promise<string>;
  /** The call's answering-machine detection, when it requested one. */
  machineDetection?: CallMachineDetection | undefined;
}

interface PendingDial {
  callId: string | undefined;
  call: CallSession | undefined;
  /** The id a status callback named for this dial (callIdFromStatus carriers), and who waits for it. */
  named?: string;
  onNamed?: (callId: string) => void;
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
      const amd = resolveAmd(request.machineDetection, from, this.#o.amd.config);
      // The job reaches the call from any worker; an AMD result has to reach this worker, which runs the detection.
      // A carrier whose dial answer may not name the call names it in the first status callback: the URL names the dial.
      const query = new URLSearchParams({
        ...(jobId ? { job: jobId } : {}),
        ...(amd && this.#o.amd.workerId ? { worker: this.#o.amd.workerId } : {}),
        ...(rest.callIdFromStatus ? { dial: dialId } : {}),
      }).toString();
      const statusCallbackUrl = `${base}${carrier.paths.status}${query ? `?${query}` : ""}`;
      const { created, amdRefused } = await this.#dialWithAmd(amd, statusCallbackUrl, {
        to: request.to,
        from,
        stream: {
          url: streamUrlFor(base, carrier.paths.stream),
          parameters: streamParameters(token, { callId: dialId, ...identity }),
        },
        answerUrl: `${base}${carrier.paths.voice}?${STREAM_PARAMETER.token}=${token}`,
        statusCallbackUrl,
      });
      const callId = created.callId ?? (await this.#namedByStatus(dialId, pending));
      const call = this.#o.createCall(
        this.#o.callCarrier,
        { callSid: callId, ...identity },
        {
          ...(request.mode ? { mode: request.mode } : {}),
          ...(request.greeting !== undefined ? { greeting: request.greeting } : {}),
          ...(amd?.greet === "after_detection" ? { holdGreeting: true } : {}),
        },
        jobId ? { jobId } : undefined,
      );
      const closed = closeReasonOf(call);
      const detection = amd && this.#detect(callId, call, amd, closed, amdRefused);
      pending.callId = callId;
      pending.call = call;
      this.#o.calls.add(call);
      this.#o.statuses.placed(callId, call, jobId, detection);
      void closed.then((reason) =>
        this.#o.statuses.ended(callId, {
          state: "ended",
          ...(jobId ? { jobId } : {}),
          callSid: callId,
          sessionId: call.session.id,
          reason,
          ...(detection ? { machineDetection: detection.status() } : {}),
        }),
      );
      logger.info({ callId, sessionId: call.session.id, jobId }, "outbound call placed");
      const early = this.#o.statuses.takeEarly(callId);
      if (early !== undefined) {
        logger.info({ callId, status: early }, "call ended by the carrier before its dial was answered");
        void call.close(early);
      }
      return { call, status: created.status, closed, machineDetection: detection };
    } catch (err) {
      this.#dials.delete(dialId);
      const error = toTalkError(err, "provider_error");
      logger.warn({ code: error.code, message: error.message }, "outbound call failed");
      throw error;
    }
  }

  /**
   * The id the call's first status callback named for the dial (`named`),
   * for a carrier whose dial answer did not name it. provider_error when
   * none comes within the dial timeout: the call may ring with nobody
   * holding it, which the log says with the dial's id.
   */
  #namedByStatus(dialId: string, pending: PendingDial): Promise<string> {
    if (pending.named !== undefined) return Promise.resolve(pending.named);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.onNamed = undefined;
        this.#o.logger.error(
          { dialId },
          "outbound call: the carrier accepted the dial but no status callback named the call",
        );
        reject(
          new TalkError(
            "provider_error",
            `The carrier accepted the call but no status callback named it within ${DIAL_TIMEOUT_MS} ms (is PUBLIC_URL reachable?).`,
          ),
        );
      }, DIAL_TIMEOUT_MS);
      pending.onNamed = (callId) => {
        clearTimeout(timer);
        resolve(callId);
      };
    });
  }

  /**
   * A status callback named `callId` for the dial `dialId` (its URL's
   * `?dial=`): the dial, if still waiting here for its call's id, takes it.
   * True when it was a dial of this worker's that did not know its id yet.
   */
  named(dialId: string, callId: string): boolean {
    const dial = this.#dials.get(dialId);
    if (dial === undefined || dial.callId !== undefined || dial.named !== undefined) return false;
    dial.named = callId;
    dial.onNamed?.(callId);
    return true;
  }

  /**
   * Dials with detection requested when `amd` is set. A carrier that refuses
   * the dial (4xx) is asked again without detection (nothing was placed, so
   * this rings once): the call goes on with the result `unknown`.
   */
  async #dialWithAmd(
    amd: AmdSettings | undefined,
    callbackUrl: string,
    dial: Omit<CarrierDialRequest, "signal" | "machineDetection">,
  ): Promise<{ created: CarrierCall; amdRefused: boolean }> {
    const rest = this.#o.carrier.rest!;
    if (!amd)
      return {
        created: await rest.dial({ ...dial, signal: AbortSignal.timeout(DIAL_TIMEOUT_MS) }),
        amdRefused: false,
      };
    const mode = amd.policy === "voicemail" ? "detect_message_end" : "detect";
    try {
      const created = await rest.dial({
        ...dial,
        machineDetection: { mode, callbackUrl },
        signal: AbortSignal.timeout(DIAL_TIMEOUT_MS),
      });
      return { created, amdRefused: false };
    } catch (err) {
      const error = toTalkError(err, "provider_error");
      if (error.code !== "provider_error") throw error;
      this.#o.logger.warn({ err: error.message }, "outbound call: detection refused; dialling without it");
      return {
        created: await rest.dial({ ...dial, signal: AbortSignal.timeout(DIAL_TIMEOUT_MS) }),
        amdRefused: true,
      };
    }
  }

  #detect(
    callId: string,
    call: CallSession,
    amd: AmdSettings,
    closed: Promise<string>,
    refused: boolean,
  ): CallMachineDetection {
    const detection = new CallMachineDetection(call, amd, {
      hangUpTimeoutMs: this.#o.amd.hangUpTimeoutMs,
      logger: this.#o.logger,
    });
    this.#o.amd.detections.add(callId, detection, closed);
    if (refused) detection.refused();
    return detection;
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
