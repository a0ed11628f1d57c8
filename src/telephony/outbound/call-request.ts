/**
 * What an outbound call request is (`POST /telephony/calls`,
 * `telephony.call`), what placing one answers, and what a call's status
 * reads as (`GET /telephony/calls/:id`, `telephony.call.get`, and the
 * `outbound-call` job's progress and result).
 */
import { z } from "zod";
import { CALL_MODES } from "../../config/index.js";
import { MachineDetectionRequestSchema } from "../amd/amd-settings.js";
import type { MachineDetectionStatus } from "../amd/amd-types.js";

export const CallRequestSchema = z
  .object({
    to: z.string().regex(/^\+[1-9]\d{6,14}$/, "an E.164 number (+15551234567)"),
    from: z
      .string()
      .regex(/^\+[1-9]\d{6,14}$/, "an E.164 number")
      .optional(),
    /** The carrier to call through (`twilio`, `telnyx`, ...); default telephony.defaultCarrier. */
    carrier: z
      .string()
      .regex(/^[a-z][a-z0-9-]{0,31}$/, "a carrier id (twilio, telnyx, plivo, vonage)")
      .optional(),
    mode: z.enum(CALL_MODES).optional(),
    greeting: z.string().max(1000).optional(),
    /** Answering-machine detection: its policy (and voicemail message, greeting timing); default telephony.amd. */
    machineDetection: MachineDetectionRequestSchema.optional(),
  })
  .strict();

export type CallRequest = z.infer<typeof CallRequestSchema>;

/** Job ids (call-<uuid>) and carrier call ids (Twilio's CallSid: CA + 32 hex; Telnyx's call_control_id: `v3:` + base64url). */
export const OUTBOUND_CALL_ID = /^[A-Za-z0-9_-][A-Za-z0-9_:-]{0,127}$/;

/**
 * Where an outbound call is: `queued` (its job waits for a media worker),
 * `dialling` (the REST request is out), `placed` (the carrier took the call;
 * it rings or talks), `ended` (`reason`: the carrier's busy / no-answer /
 * failed / canceled / completed, or the session's own: hung_up, cancelled,
 * connection_lost, closed), `failed` (the job failed before a call ended:
 * `error`).
 */
export type OutboundCallState = "queued" | "dialling" | "placed" | "ended" | "failed";

/** What `GET /telephony/calls/:id` and `telephony.call.get` answer; also the outbound-call job's progress and result. */
export interface OutboundCallStatus {
  state: OutboundCallState;
  jobId?: string;
  /** The carrier's call id (the wire name predates carrier-neutral telephony). */
  callSid?: string;
  sessionId?: string;
  reason?: string;
  error?: string;
  /** Answering-machine detection, for a call that requested it. */
  machineDetection?: MachineDetectionStatus;
}

/** What placing a call answers: the call (placed here) or its job (queued for a media worker). */
export type PlacedCall =
  | { placed: true; callSid: string; sessionId: string; status: string }
  | { placed: false; jobId: string; status: "queued" };

/** The `outbound-call` job's data. */
export interface CallJobData {
  request: CallRequest;
  /** The carrier the call is placed through (jobs queued before carriers were named: twilio). */
  carrier?: string;
  from: string;
  /** Base URL of the stream and status callback, as the requesting worker saw it. */
  baseUrl: string;
}

export const OUTBOUND_CALL_JOB = "outbound-call";
