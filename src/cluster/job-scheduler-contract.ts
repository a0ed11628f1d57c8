import type { JobOutcome } from "./job-outcome.js";
import type {
  CancelOutcome,
  EnqueueOptions,
  JobEvent,
  JobHandler,
  JobRecord,
  JobSummary,
} from "./job-queue.js";

/** What both job queues (BullMQ and in-process) offer the composition root. */
export interface JobScheduler {
  /** Jobs this worker is running now (for drain). */
  readonly activeJobs: number;
  start(): Promise<void>;
  /** Cluster-wide lifecycle of every job. */
  on(type: "job", listener: (event: JobEvent) => void): () => void;
  /** Transitions that happened on this worker (logs, metrics). */
  on(type: "outcome", listener: (outcome: JobOutcome) => void): () => void;
  /** Makes a job kind known on this worker (enqueue, inspect, cancel, process); idempotent. */
  addKind(kind: string): void;
  enqueue<T>(kind: string, data: T, options?: EnqueueOptions): Promise<{ id: string; kind: string }>;
  process<T>(kind: string, handler: JobHandler<T>): void;
  cancel(jobId: string, reason?: string): Promise<CancelOutcome>;
  /** Open jobs (running, waiting, delayed) of every kind known here, read from any worker; at most `limit` per kind. */
  list(limit?: number): Promise<JobSummary[]>;
  /** Reads a job from any worker; absent in one process (nothing to read that the process does not hold). */
  inspect?<T>(jobId: string, options?: { logs?: boolean }): Promise<JobRecord<T> | undefined>;
  /** Takes no new jobs (drain); running ones continue. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}
