/**
 * The calls of this worker whose answering-machine detection runs, by
 * carrier call id, and what an AMD callback (already authenticated by the
 * status route, like any status callback) does: reaches its call (204), is
 * refused for its body (400 invalid_params, saying which field), or names a
 * call not here (204 when it ended here, else 404 session_not_found).
 */
import { TalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { CarrierMachineDetectionResult } from "./amd-types.js";
import type { CallMachineDetection } from "./call-machine-detection.js";

export class MachineDetections {
  readonly #byCall = new Map<string, CallMachineDetection>();

  /** Detection of `callId` runs until `closed` settles. */
  add(callId: string, detection: CallMachineDetection, closed: Promise<unknown>): void {
    this.#byCall.set(callId, detection);
    void closed.finally(() => {
      if (this.#byCall.get(callId) === detection) this.#byCall.delete(callId);
    });
  }

  get(callId: string): CallMachineDetection | undefined {
    return this.#byCall.get(callId);
  }
}

/** Applies one AMD callback; the error to answer with, or undefined for 204. */
export function machineDetectionCallback(
  result: CarrierMachineDetectionResult,
  detections: MachineDetections,
  hasEnded: (callId: string) => boolean,
  logger: TalkLogger,
  carrier: string,
): TalkError | undefined {
  if (!result.ok) {
    logger.warn({ carrier, err: result.message }, "amd callback refused");
    return new TalkError("invalid_params", result.message);
  }
  const { detection } = result;
  const found = detections.get(detection.callId);
  if (found) {
    found.onResult(detection);
    return undefined;
  }
  if (hasEnded(detection.callId)) return undefined; // late: the call is over
  logger.warn({ carrier, callId: detection.callId }, "amd callback: unknown call");
  return new TalkError("session_not_found", `No outbound call ${detection.callId} runs detection here.`, {
    details: { id: detection.callId },
  });
}
