/**
 * Vonage's Advanced Machine Detection (docs: "Voicemail Detection"): the
 * call create takes `advanced_machine_detection` `{behavior: "continue",
 * mode: "default", beep_timeout}` (asynchronous: the NCCO, and so the
 * stream, starts at answer; beep detection included; talkgate acts on the
 * result itself, never Vonage's `hangup`). The result comes to the call's
 * event webhook, signed like every event: `status` `human` or `machine`,
 * then for a machine `sub_state` `beep_start` (the beep: leave the message
 * now) or `beep_timeout` (no beep within beep_timeout).
 */
import type { CarrierMachineDetectionResult, MachineDetectionRequest } from "../amd/amd-types.js";

/** Seconds Vonage listens for a beep (its range is 45..120). */
const BEEP_TIMEOUT_S = 45;

export function vonageAmdParams(request: MachineDetectionRequest | undefined): Record<string, unknown> {
  if (!request) return {};
  return {
    advanced_machine_detection: { behavior: "continue", mode: "default", beep_timeout: BEEP_TIMEOUT_S },
  };
}

const SUB_STATES = new Set(["beep_start", "beep_timeout"]);

/** A human/machine event of the event webhook; undefined for every other event. */
export function parseVonageAmd(
  params: Readonly<Record<string, unknown>>,
): CarrierMachineDetectionResult | undefined {
  const status = params["status"];
  if (status !== "human" && status !== "machine") return undefined;
  const callId = params["uuid"];
  if (typeof callId !== "string" || callId.length === 0)
    return { ok: false, message: "uuid: a human/machine event names its call." };
  const sub = params["sub_state"];
  if (sub !== undefined && (typeof sub !== "string" || !SUB_STATES.has(sub)))
    return { ok: false, message: "sub_state: beep_start or beep_timeout." };
  if (status === "human" && sub !== undefined)
    return { ok: false, message: "sub_state: only a machine event has one." };
  return {
    ok: true,
    detection: {
      callId,
      answeredBy: status,
      greetingEnded: sub !== undefined,
      carrierResult: sub ? `${status}/${sub}` : status,
    },
  };
}
