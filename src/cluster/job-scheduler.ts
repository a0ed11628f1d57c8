import { TalkError } from "../core/errors.js";
import type { TalkLogger } from "../core/logger.js";
import type { WorkerRole } from "./coordinator.js";
import { InProcessJobQueue } from "./in-process-job-queue.js";
import type { JobOutcome } from "./job-outcome.js";
import {
  type CancelOutcome,
  type EnqueueOptions,
  type JobBackoff,
  type JobEvent,
  type JobHandler,
  JobQueue,
  type JobRecord,
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
  enqueue<T>(kind: string, data: T, options?: EnqueueOptions): Promise<{ id: string; kind: string }>;
  process<T>(kind: string, handler: JobHandler<T>): void;
  cancel(jobId: string, reason?: string): Promise<CancelOutcome>;
  /** Reads a job from any worker; absent in one process (nothing to read that the process does not hold). */
  inspect?<T>(jobId: string, options?: { logs?: boolean }): Promise<JobRecord<T> | undefined>;
  /** Takes no new jobs (drain); running ones continue. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The job kinds of a talkgate deployment and the worker role that runs each.
 * A worker registers a handler for a kind only when it has that role, so
 * BullMQ's pull model places the job on a capable worker.
 */
export const JOB_KIND_ROLES = Object.freeze({
  "meeting-bot": "bot",
  "outbound-call": "media",
} as const satisfies Record<string, WorkerRole>);

export type JobKind = keyof typeof JOB_KIND_ROLES;
export const JOB_KINDS = Object.freeze(Object.keys(JOB_KIND_ROLES) as JobKind[]);

/**
 * The narrow job interface surfaces get from the app (telephony's outbound
 * calls, meetings' bot launches). Cancelling reaches the worker running the
 * job: its handler's signal aborts, and the job fails without retry.
 */
export interface AppJobs {
  /** Schedules a job on any worker with the kind's role. */
  enqueue<T>(kind: JobKind, data: T, options?: EnqueueOptions): Promise<{ id: string; kind: string }>;
  /** From any worker: removes a waiting job, or aborts the running handler's signal. */
  cancel(jobId: string, reason?: string): Promise<CancelOutcome>;
  /**
   * From any worker: a job's data, state, progress and log lines (BullMQ);
   * undefined for an unknown job, and always in one process (in-process
   * queue), where the surface's own state is the record.
   */
  inspect<T>(jobId: string, options?: { logs?: boolean }): Promise<JobRecord<T> | undefined>;
  /**
   * Runs jobs of `kind` here if this worker has the kind's role (returns
   * true), otherwise does nothing (returns false). One handler per kind.
   */
  process<T>(kind: JobKind, handler: JobHandler<T>): boolean;
  /** Cluster-wide lifecycle (active, completed, failed, retried, stalled) of every job. */
  on(type: "job", listener: (event: JobEvent) => void): () => void;
}

export interface CreateJobSchedulerOptions {
  /** BullMQ when set; the in-process queue otherwise. */
  redisUrl?: string;
  keyPrefix: string;
  workerId: string;
  /** Placement: a full worker takes no new jobs. */
  isFull?: () => boolean;
  /** Retries and stalled-job rules (config `cluster.jobs`); BullMQ's defaults otherwise. */
  settings?: JobSettings;
  logger?: TalkLogger;
}

/** Config `cluster.jobs`: attempts and backoff for failing handlers, BullMQ's stalled-job rules. */
export interface JobSettings {
  concurrency?: number;
  attempts?: number;
  backoff?: JobBackoff;
  lockDurationMs?: number;
  stalledIntervalMs?: number;
  maxStalledCount?: number;
}

/** Builds and starts the job queue that matches the coordinator's backend. */
export async function createJobScheduler(options: CreateJobSchedulerOptions): Promise<JobScheduler> {
  const { concurrency, attempts, backoff, ...stalledRules } = options.settings ?? {};
  const common = {
    kinds: JOB_KINDS,
    workerId: options.workerId,
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(attempts !== undefined ? { attempts } : {}),
    ...(backoff !== undefined ? { backoff } : {}),
    ...(options.isFull ? { isFull: options.isFull } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  };
  // Stalled jobs need a second worker to find them: one process has none.
  const scheduler: JobScheduler =
    options.redisUrl === undefined || options.redisUrl === ""
      ? new InProcessJobQueue(common)
      : new JobQueue({
          ...common,
          ...stalledRules,
          redisUrl: options.redisUrl,
          keyPrefix: options.keyPrefix,
        });
  await scheduler.start();
  return scheduler;
}

/** The AppJobs view of a scheduler for a worker with `roles`. */
export function appJobs(scheduler: JobScheduler, roles: readonly WorkerRole[]): AppJobs {
  const check = (kind: string): JobKind => {
    if (!(kind in JOB_KIND_ROLES))
      throw new TalkError("invalid_params", `Unknown job kind ${JSON.stringify(kind)}.`);
    return kind as JobKind;
  };
  return Object.freeze({
    enqueue: <T>(kind: JobKind, data: T, options?: EnqueueOptions) =>
      scheduler.enqueue(check(kind), data, options),
    cancel: (jobId: string, reason?: string) => scheduler.cancel(jobId, reason),
    inspect: async <T>(jobId: string, options?: { logs?: boolean }) => scheduler.inspect?.<T>(jobId, options),
    process: <T>(kind: JobKind, handler: JobHandler<T>) => {
      if (!roles.includes(JOB_KIND_ROLES[check(kind)])) return false;
      scheduler.process(kind, handler);
      return true;
    },
    on: (type: "job", listener: (event: JobEvent) => void) => scheduler.on(type, listener),
  });
}
