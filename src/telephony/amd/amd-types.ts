/**
 * Answering-machine detection (AMD) in carrier-neutral words: what a dial
 * asks the carrier for, what a carrier's AMD callback says, and what a call's
 * status and `session.updated` event report. Each carrier's folder maps its
 * own parameters and result words onto these (`<carrier>-amd.ts`).
 */
import type { AmdGreet, AmdPolicy } from "../../config/index.js";

/** Who answered, as talkgate acts on it. */
export type AnsweredBy = "human" | "machine" | "fax" | "unknown";

/** What a dial asks of the carrier's AMD. */
export interface MachineDetectionRequest {
  /** `detect`: human or machine as soon as known; `detect_message_end`: also the end of a machine's greeting (the beep). */
  readonly mode: "detect" | "detect_message_end";
  /** Where the carrier posts its result (our status callback URL; Vonage posts to its event URL anyway). */
  readonly callbackUrl: string;
}

/** One AMD callback, decoded. */
export interface CarrierMachineDetection {
  readonly callId: string;
  readonly answeredBy: AnsweredBy;
  /** The machine's greeting is over (a beep, or its silence): a message left now is recorded. */
  readonly greetingEnded: boolean;
  /** The carrier's own words (AnsweredBy, `machine/beep_start`, `Machine=true`), for logs and the status. */
  readonly carrierResult: string;
  /** False when the carrier never reports the end of a machine's greeting (then the line's silence tells it). */
  readonly greetingEndReported?: boolean;
}

/** A webhook that is an AMD callback: decoded, or refused with why (400, invalid_params). */
export type CarrierMachineDetectionResult =
  | { readonly ok: true; readonly detection: CarrierMachineDetection }
  | { readonly ok: false; readonly message: string };

/** A call's detection settings, resolved from the request and `telephony.amd`. */
export interface AmdSettings {
  readonly policy: AmdPolicy;
  readonly message: string | undefined;
  readonly greet: AmdGreet;
  readonly timeoutMs: number;
}

/**
 * Where a call's detection stands: `detecting` until a result, then what
 * was done: `greeted` (the greeting followed detection), `continued` (the
 * call went on as it was), `waiting_for_beep` (a machine: the message waits
 * for the end of its greeting), `voicemail_left` (message spoken, hung up),
 * `hung_up`.
 */
export type AmdAction =
  "detecting" | "greeted" | "continued" | "waiting_for_beep" | "voicemail_left" | "hung_up";

/** A call's detection, as `GET /telephony/calls/:id` (`machineDetection`) and its `session.updated` events show it. */
export interface MachineDetectionStatus {
  policy: AmdPolicy;
  action: AmdAction;
  answeredBy?: AnsweredBy;
  greetingEnded?: boolean;
  carrierResult?: string;
  /** Why the result is `unknown` without the carrier saying so: it never came (`timeout`) or AMD was refused (`refused`). */
  fallback?: "timeout" | "refused";
  /** How the end of a machine's greeting was known: the carrier said so, the line fell silent, or time ran out. */
  greetingEndedBy?: "carrier" | "silence" | "timeout";
}
