/**
 * The `outbound-call` job (Redis deployments): run by a worker with the
 * media role, it dials and lives as long as the call. A status callback that
 * lands on another worker ends it through `jobs.cancel(jobId,
 * "carrier:<status>")` (BullMQ's cross-worker cancel reaches the handler
 * wherever it runs, even while its dial still waits for the carrier), and
 * cancelling the job hangs up. The job records the call's status as its
 * progress and ends `completed` with the carrier's reason, so the call's
 * status reads the same from any worker.
 */
import type { AppJobs } from "../../cluster/index.js";
import { TalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import { OUTBOUND_CALL_JOB, type CallJobData, type OutboundCallStatus } from "./call-request.js";
import type { OutboundDialer } from "./dialer.js";

/** The reason prefix of a job cancel that relays the carrier's terminal status. */
export const CARRIER_STATUS_PREFIX = "carrier:";

/** Registers the job's handler on `jobs` (a no-op on a worker without the media role). */
export function processOutboundCalls(
  jobs: Pick<AppJobs, "process">,
  dialerOf: (carrier: string) => OutboundDialer | undefined,
  logger: TalkLogger,
): void {
  jobs.process<CallJobData>(OUTBOUND_CALL_JOB, { role: "media" }, async (job, signal) => {
    const carrier = job.data.carrier ?? "twilio";
    const dialer = dialerOf(carrier);
    if (!dialer)
      throw new TalkError(
        "provider_unavailable",
        `This worker cannot place ${carrier} calls (not configured).`,
      );
    const report = async (status: OutboundCallStatus): Promise<void> => {
      await job.progress?.(status).catch((err: unknown) => {
        logger.debug({ err, jobId: job.id }, "outbound call status not recorded");
      });
    };
    void report({ state: "dialling", jobId: job.id });
    signal.addEventListener(
      "abort",
      () => logger.info({ jobId: job.id, reason: String(signal.reason) }, "outbound call: job signalled"),
      { once: true },
    );
    const dialled = await dialer.dial(job.data.request, job.data.from, job.data.baseUrl, job.id);
    const { call, closed, machineDetection: amd } = dialled;
    const ids = { jobId: job.id, callSid: call.callSid, sessionId: call.session.id };
    void report({ state: "placed", ...ids, ...(amd ? { machineDetection: amd.status() } : {}) });
    amd?.onChange((machineDetection) => void report({ state: "placed", ...ids, machineDetection }));
    let cancelled = false;
    const onAbort = (): void => {
      const reason = String(signal.reason ?? "cancelled");
      if (reason.startsWith(CARRIER_STATUS_PREFIX)) {
        logger.info({ ...ids, status: reason }, "call ended by the carrier (status relayed through its job)");
        void call.close(reason.slice(CARRIER_STATUS_PREFIX.length));
      } else {
        cancelled = true;
        void dialer.hangUp(call).finally(() => call.close("cancelled"));
      }
    };
    // The cancel (or a carrier's status relayed by another worker) may have come while the dial waited.
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
    const reason = await closed;
    signal.removeEventListener("abort", onAbort);
    const final: OutboundCallStatus = {
      state: "ended",
      ...ids,
      reason,
      ...(amd ? { machineDetection: amd.status() } : {}),
    };
    // Recorded before the job ends, so no reader sees a finished job with a live status.
    await report(final);
    // A call the carrier or the line ended completes its job; one cancelled here fails it as cancelled.
    if (cancelled) signal.throwIfAborted();
    return final;
  });
}
