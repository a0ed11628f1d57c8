import type { TalkLogger } from "../core/index.js";

/**
 * What happened to one run of a job, reported by the worker where it happened
 * (the worker that ran the job, or for `stalled` the one whose stalled check
 * moved it), so each transition is counted once across the cluster:
 *
 * - `completed`: the handler resolved.
 * - `failed`: the handler failed on its last attempt, or a stalled job was
 *   failed by BullMQ (`maxStalledCount` exceeded: "job stalled more than allowable limit").
 * - `cancelled`: cancelled from any worker (`cancelled: <reason>`), never retried.
 * - `retried`: the handler failed and BullMQ will run the job again after the backoff.
 * - `stalled`: a dead (or blocked) worker's job lost its lock and went back to wait.
 */
export type JobOutcomeType = "completed" | "failed" | "cancelled" | "retried" | "stalled";

export interface JobOutcome {
  outcome: JobOutcomeType;
  kind: string;
  jobId: string;
  /** The attempt that ended (1 = the first run); absent for `stalled`. */
  attempt?: number;
  /** The failure message for failed, cancelled and retried. */
  reason?: string;
  at: number;
}

/** An outcome of a job's run, stamped now. */
export function jobOutcome(
  outcome: JobOutcomeType,
  kind: string,
  jobId: string,
  detail: { attempt?: number; reason?: string } = {},
): JobOutcome {
  return {
    outcome,
    kind,
    jobId,
    ...(detail.attempt === undefined ? {} : { attempt: detail.attempt }),
    ...(detail.reason === undefined ? {} : { reason: detail.reason }),
    at: Date.now(),
  };
}

/** The structured log line of a job outcome: warn for what an operator should look at. */
export function logJobOutcome(logger: TalkLogger, workerId: string, outcome: JobOutcome): void {
  const { outcome: type, kind, jobId, attempt, reason } = outcome;
  const fields = {
    workerId,
    kind,
    jobId,
    outcome: type,
    ...(attempt === undefined ? {} : { attempt }),
    ...(reason === undefined ? {} : { reason }),
  };
  if (type === "completed" || type === "cancelled") logger.info(fields, `job ${type}`);
  else logger.warn(fields, `job ${type}`);
}
