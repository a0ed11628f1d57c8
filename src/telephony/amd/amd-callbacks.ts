/**
 * The calls of this worker whose answering-machine detection runs, by
 * carrier call id, and what an AMD callback (already authenticated by the
 * status route, like any status callback) does: reaches its call (204), is
 * refused for its body (400 invalid_params, saying which field), or names a
 * call not here. A call not here may run on the worker that dialled it (the
 * status callback URL names it: `worker=`): the result is relayed there
 * through the cluster (amd-relay.ts). Otherwise 204 when the call ended,
 * else 404 session_not_found.
 */
import { TalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { CarrierMachineDetection, CarrierMachineDetectionResult } from "./amd-types.js";
import type { CallMachineDetection } from "./call-machine-detection.js";

/** Where one AMD result went: to its call here, nowhere because the call is over, or not found here. */
export type DetectionOutcome = "applied" | "ended" | "not_found";

/** Relays a result to the worker that dialled the call; absent without a cluster. */
export type DetectionRelay = (
  workerId: string,
  carrier: string,
  detection: CarrierMachineDetection,
) => Promise<DetectionOutcome>;

/** This worker in the cluster, as AMD callbacks need it: its id (named in callback URLs), the relay, and its answer to relayed results. */
export interface DetectionWorkers {
  readonly workerId: string;
  relay: DetectionRelay;
  /** Installs how this worker applies results relayed to it; returns its removal. */
  answer(apply: (detection: CarrierMachineDetection) => DetectionOutcome): () => void;
}

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

  /** Gives `detection` to its call if it runs here. */
  apply(detection: CarrierMachineDetection, hasEnded: (callId: string) => boolean): DetectionOutcome {
    const found = this.#byCall.get(detection.callId);
    if (found) {
      found.onResult(detection);
      return "applied";
    }
    return hasEnded(detection.callId) ? "ended" : "not_found";
  }
}

export interface MachineDetectionCallback {
  detections: MachineDetections;
  hasEnded: (callId: string) => boolean;
  /** The worker that dialled the call, from the callback URL's `worker=`, when it is not this one. */
  dialledBy?: string | undefined;
  relay?: DetectionRelay | undefined;
  logger: TalkLogger;
  carrier: string;
}

/**
 * Applies one AMD callback, here or on the worker that dialled the call; the
 * error to answer with (a relay that failed is owner_unreachable, so the
 * carrier retries where it does), or undefined for 204.
 */
export async function machineDetectionCallback(
  result: CarrierMachineDetectionResult,
  o: MachineDetectionCallback,
): Promise<TalkError | undefined> {
  const { logger, carrier } = o;
  if (!result.ok) {
    logger.warn({ carrier, err: result.message }, "amd callback refused");
    return new TalkError("invalid_params", result.message);
  }
  const { detection } = result;
  let outcome = o.detections.apply(detection, o.hasEnded);
  if (outcome === "not_found" && o.dialledBy && o.relay) {
    try {
      outcome = await o.relay(o.dialledBy, carrier, detection);
      logger.info(
        { carrier, callId: detection.callId, workerId: o.dialledBy, outcome },
        "amd callback relayed",
      );
    } catch (err) {
      logger.warn(
        { carrier, callId: detection.callId, workerId: o.dialledBy, err },
        "amd callback not relayed",
      );
      return new TalkError(
        "owner_unreachable",
        "The worker running the call's detection did not answer; try again.",
        {
          details: { id: detection.callId, workerId: o.dialledBy },
        },
      );
    }
  }
  if (outcome !== "not_found") return undefined; // applied, or late: the call is over
  logger.warn({ carrier, callId: detection.callId }, "amd callback: unknown call");
  return new TalkError("session_not_found", `No outbound call ${detection.callId} runs detection here.`, {
    details: { id: detection.callId },
  });
}
