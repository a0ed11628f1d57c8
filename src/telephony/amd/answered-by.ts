/**
 * The `AnsweredBy` vocabulary of asynchronous AMD callbacks as Twilio
 * defines it and Telnyx TeXML repeats it (human, machine_start,
 * machine_end_beep, machine_end_silence, machine_end_other, fax, unknown),
 * and the request parameters both take (`MachineDetection`, `AsyncAmd`,
 * `AsyncAmdStatusCallback`, `AsyncAmdStatusCallbackMethod`).
 */
import type { AnsweredBy, CarrierMachineDetectionResult, MachineDetectionRequest } from "./amd-types.js";

const ANSWERED_BY: Readonly<Record<string, { answeredBy: AnsweredBy; greetingEnded: boolean }>> =
  Object.freeze({
    human: { answeredBy: "human", greetingEnded: false },
    machine_start: { answeredBy: "machine", greetingEnded: false },
    machine_end_beep: { answeredBy: "machine", greetingEnded: true },
    machine_end_silence: { answeredBy: "machine", greetingEnded: true },
    machine_end_other: { answeredBy: "machine", greetingEnded: true },
    fax: { answeredBy: "fax", greetingEnded: false },
    unknown: { answeredBy: "unknown", greetingEnded: false },
  });

/** The asynchronous-AMD parameters of a call create (`DetectMessageEnd` waits for the end of a machine's greeting). */
export function asyncAmdParams(request: MachineDetectionRequest | undefined): Record<string, string> {
  if (!request) return {};
  return {
    MachineDetection: request.mode === "detect_message_end" ? "DetectMessageEnd" : "Enable",
    AsyncAmd: "true",
    AsyncAmdStatusCallback: request.callbackUrl,
    AsyncAmdStatusCallbackMethod: "POST",
  };
}

/** An AMD callback's fields (`CallSid`, `AnsweredBy`); undefined when the webhook carries no `AnsweredBy`. */
export function parseAnsweredBy(
  params: Readonly<Record<string, unknown>>,
): CarrierMachineDetectionResult | undefined {
  const word = params["AnsweredBy"];
  if (word === undefined) return undefined;
  const callId = params["CallSid"];
  if (typeof callId !== "string" || callId.length === 0)
    return { ok: false, message: "CallSid: an AMD callback names its call." };
  const mapped = typeof word === "string" ? ANSWERED_BY[word] : undefined;
  if (!mapped)
    return {
      ok: false,
      message: `AnsweredBy: ${JSON.stringify(word).slice(0, 40)} is not one of ${Object.keys(ANSWERED_BY).join(", ")}.`,
    };
  return { ok: true, detection: { callId, ...mapped, carrierResult: word as string } };
}
