import { UnrecoverableError, type Worker } from "bullmq";
import { jobOutcome, type JobOutcome, type JobOutcomeType } from "./job-outcome.js";

/**
 * The outcomes a BullMQ Worker sees locally: `completed`, `failed` (retried,
 * cancelled or failed for good) and `stalled`, which BullMQ emits only on the
 * worker whose stalled check moved the job (a Redis key guards the check).
 */
export function watchWorkerOutcomes(
  worker: Worker,
  kind: string,
  report: (outcome: JobOutcome) => void,
): void {
  const emit = (
    outcome: JobOutcomeType,
    jobId: string | undefined,
    attempt?: number,
    reason?: string,
  ): void =>
    report(
      jobOutcome(outcome, kind, jobId ?? "", {
        attempt: attempt === undefined ? undefined : Math.max(1, attempt),
        reason,
      }),
    );
  worker.on("completed", (job) => emit("completed", job.id, job.attemptsMade));
  worker.on("failed", (job, err) => {
    if (!job) return;
    // moveToFailed sets finishedOn only when the job is failed for good; otherwise BullMQ retries it.
    const cancelled = err instanceof UnrecoverableError && err.message.startsWith("cancelled: ");
    const outcome = job.finishedOn === undefined ? "retried" : cancelled ? "cancelled" : "failed";
    emit(outcome, job.id, job.attemptsMade, err.message);
  });
  worker.on("stalled", (jobId) => emit("stalled", jobId));
}
