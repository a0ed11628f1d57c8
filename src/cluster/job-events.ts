import type { TalkLogger } from "../core/index.js";
import { EventHub } from "./event-hub.js";
import { type JobOutcome, logJobOutcome } from "./job-outcome.js";

/**
 * Cluster-wide job lifecycle, as the queue records it (with BullMQ: seen by
 * every worker that has a JobQueue). `retried`: a run failed and the job
 * waits for its backoff; `stalled`: a dead worker's job went back to wait
 * (or, past maxStalledCount, is failed next with "job stalled more than
 * allowable limit").
 */
export interface JobEvent {
  type: "active" | "completed" | "failed" | "stalled" | "retried";
  kind: string;
  jobId: string;
  /** For failed and retried: the failure message ("cancelled: ..." for a cancelled job). */
  reason?: string;
  /** For retried: the attempt that failed (1 = the first run). */
  attempt?: number;
  at: number;
}

/**
 * The two event streams both job queues (BullMQ and in-process) offer, in
 * one place: `job`, the lifecycle of every job, and `outcome`, what happened
 * on this worker, each outcome also written as one structured log line
 * (logs and metrics count each transition once across the cluster).
 */
export class JobEvents {
  readonly #hub: EventHub<{ job: JobEvent; outcome: JobOutcome }>;
  readonly #logger: TalkLogger;
  readonly #workerId: string;

  constructor(workerId: string, logger: TalkLogger) {
    this.#workerId = workerId;
    this.#logger = logger;
    this.#hub = new EventHub(logger);
  }

  on(type: "job", listener: (event: JobEvent) => void): () => void;
  on(type: "outcome", listener: (outcome: JobOutcome) => void): () => void;
  on(
    type: "job" | "outcome",
    listener: ((event: JobEvent) => void) | ((outcome: JobOutcome) => void),
  ): () => void {
    return this.#hub.on(type, listener as (event: JobEvent | JobOutcome) => void);
  }

  /** Emits one `job` event. */
  job(
    type: JobEvent["type"],
    kind: string,
    jobId: string,
    detail: { reason?: string; attempt?: number } = {},
  ): void {
    this.#hub.emit("job", {
      type,
      kind,
      jobId,
      ...(detail.reason === undefined ? {} : { reason: detail.reason }),
      ...(detail.attempt === undefined ? {} : { attempt: detail.attempt }),
      at: Date.now(),
    });
  }

  /** Logs one outcome and emits it. */
  outcome(outcome: JobOutcome): void {
    logJobOutcome(this.#logger, this.#workerId, outcome);
    this.#hub.emit("outcome", outcome);
  }

  clear(): void {
    this.#hub.clear();
  }
}
