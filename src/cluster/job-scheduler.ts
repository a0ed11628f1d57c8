import { TalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import type { WorkerRole } from "./coordinator.js";
import { InProcessJobQueue } from "./in-process-job-queue.js";
import type {
  CancelOutcome,
  EnqueueOptions,
  JobBackoff,
  JobEvent,
  JobHandler,
  JobRecord,
  JobSummary,
} from "./job-queue.js";
import type { JobScheduler } from "./job-scheduler-contract.js";

export type { JobScheduler } from "./job-scheduler-contract.js";

/** Where jobs of a kind run: only on workers with this role (BullMQ's pull model places them there). */
export interface JobPlacement {
  role: WorkerRole;
}

/**
 * The narrow job interface surfaces get from the app (telephony's outbound
 * calls, meetings' bot launches). A surface names its own job kinds and the
 * worker role that runs each when it registers its handler; the cluster names
 * none. Cancelling reaches the worker running the job: its handler's signal
 * aborts, and the job fails without retry.
 */
export interface AppJobs {
  /** Schedules a job of a registered kind on any worker with the kind's role. */
  enqueue<T>(kind: string, data: T, options?: EnqueueOptions): Promise<{ id: string; kind: string }>;
  /** From any worker: removes a waiting job, or aborts the running handler's signal. */
  cancel(jobId: string, reason?: string): Promise<CancelOutcome>;
  /**
   * From any worker: a job's data, state, progress and log lines (BullMQ);
   * undefined for an unknown job, and always in one process (in-process
   * queue), where the surface's own state is the record.
   */
  inspect<T>(
    jobId: string,
    options?: { logs?: boolean; logsFrom?: number },
  ): Promise<JobRecord<T> | undefined>;
  /** From any worker: open jobs (running, waiting, delayed) of every registered kind, at most `limit` per kind. */
  list(limit?: number): Promise<JobSummary[]>;
  /**
   * Registers `kind` and the role that runs it, and runs its jobs here if
   * this worker has that role (returns true); otherwise only registers the
   * kind, so this worker can still enqueue, inspect and cancel its jobs
   * (returns false). One handler and one role per kind.
   */
  process<T>(kind: string, placement: JobPlacement, handler: JobHandler<T>): boolean;
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
  /** With redisUrl: whether Redis answers now, so a close while it does not ends at once (JobQueueOptions). */
  redisReady?: () => boolean;
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
    workerId: options.workerId,
    ...(concurrency !== undefined ? { concurrency } : {}),
    ...(attempts !== undefined ? { attempts } : {}),
    ...(backoff !== undefined ? { backoff } : {}),
    ...(options.isFull ? { isFull: options.isFull } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
  };
  // Stalled jobs need a second worker to find them: one process has none. BullMQ (and ioredis) are loaded
  // only for a Redis URL: a worker without one does not carry them (tens of MB of RSS).
  const scheduler: JobScheduler =
    options.redisUrl === undefined || options.redisUrl === ""
      ? new InProcessJobQueue(common)
      : new (await import("./job-queue.js")).JobQueue({
          ...common,
          ...stalledRules,
          redisUrl: options.redisUrl,
          keyPrefix: options.keyPrefix,
          ...(options.redisReady ? { redisReady: options.redisReady } : {}),
        });
  await scheduler.start();
  return scheduler;
}

/** The AppJobs view of a scheduler for a worker with `roles`. */
export function appJobs(scheduler: JobScheduler, roles: readonly WorkerRole[]): AppJobs {
  const kindRoles = new Map<string, WorkerRole>();
  const check = (kind: string): string => {
    if (!kindRoles.has(kind))
      throw new TalkError("invalid_params", `Unknown job kind ${JSON.stringify(kind)}.`);
    return kind;
  };
  return Object.freeze({
    enqueue: <T>(kind: string, data: T, options?: EnqueueOptions) =>
      scheduler.enqueue(check(kind), data, options),
    cancel: (jobId: string, reason?: string) => scheduler.cancel(jobId, reason),
    list: (limit?: number) => scheduler.list(limit),
    inspect: async <T>(jobId: string, options?: { logs?: boolean; logsFrom?: number }) =>
      scheduler.inspect?.<T>(jobId, options),
    process: <T>(kind: string, placement: JobPlacement, handler: JobHandler<T>) => {
      const known = kindRoles.get(kind);
      if (known !== undefined && known !== placement.role)
        throw new TalkError("invalid_state", `Jobs of kind ${kind} already run on role ${known}.`);
      scheduler.addKind(kind);
      kindRoles.set(kind, placement.role);
      if (!roles.includes(placement.role)) return false;
      scheduler.process(kind, handler);
      return true;
    },
    on: (type: "job", listener: (event: JobEvent) => void) => scheduler.on(type, listener),
  });
}
