/**
 * Plivo's asynchronous machine detection (docs: "Asynchronous machine
 * detection"): the call create takes `machine_detection: "true"` (report
 * only: talkgate acts on the result itself, never Plivo's `hangup`) with
 * `machine_detection_url` / `_method`; Plivo posts there `Machine`
 * (true/false) with `Event=MachineDetection`, the call's `RequestUUID` and
 * `CallUUID`, V3-signed like its other callbacks. Plivo reports no beep: the
 * end of a machine's greeting is heard on the line instead (its silence,
 * src/telephony/amd/greeting-end.ts).
 */
import type { CarrierMachineDetectionResult, MachineDetectionRequest } from "../amd/amd-types.js";

export function plivoAmdParams(request: MachineDetectionRequest | undefined): Record<string, string> {
  if (!request) return {};
  return {
    machine_detection: "true",
    machine_detection_url: request.callbackUrl,
    machine_detection_method: "POST",
  };
}

/** A machine-detection callback (`Event=MachineDetection`, or a `Machine` field); undefined otherwise. */
export function parsePlivoAmd(
  params: Readonly<Record<string, unknown>>,
): CarrierMachineDetectionResult | undefined {
  const machine = params["Machine"];
  if (params["Event"] !== "MachineDetection" && machine === undefined) return undefined;
  const callId = text(params["RequestUUID"]) ?? text(params["ALegRequestUUID"]) ?? text(params["CallUUID"]);
  if (callId === undefined)
    return { ok: false, message: "RequestUUID: a machine-detection callback names its call." };
  if (machine !== "true" && machine !== "false") return { ok: false, message: "Machine: true or false." };
  return {
    ok: true,
    detection: {
      callId,
      answeredBy: machine === "true" ? "machine" : "human",
      greetingEnded: false,
      carrierResult: `Machine=${machine}`,
      greetingEndReported: false,
    },
  };
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
