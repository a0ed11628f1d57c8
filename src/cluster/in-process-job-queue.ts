import { randomUUID } from "node:crypto";
import { TalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import { NOOP_LOGGER } from "../core/index.js";
import { type JobEvent, JobEvents } from "./job-events.js";
import { checkJobInt, checkJobKinds } from "./job-options.js";
import { jobOutcome, type JobOutcomeType } from "./job-outcome.js";
import type { CancelOutcome, EnqueueOptions, JobBackoff, JobHandler, JobSummary } from "./job-queue.js";
import type { JobScheduler } from "./job-scheduler-contract.js";

/** Options of the in-process job queue (one process, no Redis). */
export interface InProcessJobQueueOptions {
  /** Job kinds known from the start (lowercase, digits, dashes); surfaces add theirs with `addKind` (default none). */
  kinds?: readonly string[];
  /** Jobs of one kind run at once (default 1). */
  concurrency?: number;
  /** Attempts per job when the handler fails (default 2). */
  attempts?: number;
  /** Delay before a retry, ms (default 1000); ignored when `backoff` is given. */
  retryDelayMs?: number;
  /** Wait before a retry, as for the BullMQ queue. */
  backoff?: JobBackoff;
  /** Named in the outcome log lines (default "local"). */
  workerId?: string;
  /** While this returns true no new job starts (checked when a job could start). */
  isFull?: () => boolean;
  logger?: TalkLogger;
}

interface QueuedJob {
  id: string;
  kind: string;
  data: unknown;
  attemptsLeft: number;
  attempt: number;
  timer: NodeJS.Timeout | undefined;
  abort: AbortController | undefined;
  createdAt: number;
  startedAt: number | undefined;
}

/**
 * The same JobScheduler contract as the BullMQ JobQueue for a single process:
 * jobs wait in a FIFO per kind and run on this process's handlers; cancel
 * removes a waiting job or aborts the running handler's signal (then the job
 * fails with `cancelled: <reason>` and is not retried). Nothing survives a
 * restart: with one process there is nowhere else for a job to go.
 */
export class InProcessJobQueue implements JobScheduler {
  readonly #kinds: string[];
  readonly #concurrency: number;
  readonly #attempts: number;
  readonly #backoff: JobBackoff;
  readonly #workerId: string;
  readonly #isFull: (() => boolean) | undefined;
  readonly #events: JobEvents;
  /** `job`: every job's lifecycle; `outcome`: the same transitions for logs and metrics (one process: all local). */
  readonly on: JobEvents["on"];
  readonly #waiting = new Map<string, QueuedJob[]>();
  readonly #running = new Map<string, QueuedJob>();
  readonly #jobs = new Map<string, QueuedJob>();
  readonly #handlers = new Map<string, JobHandler>();
  #accepting = true;
  #state: "starting" | "ready" | "closing" | "closed" = "starting";
  #closing: Promise<void> | undefined;
  #fullTimer: NodeJS.Timeout | undefined;

  constructor(options: InProcessJobQueueOptions) {
    const kinds = options.kinds?.length ? checkJobKinds(options.kinds) : [];
    const int = checkJobInt;
    this.#kinds = kinds;
    this.#concurrency = int("concurrency", options.concurrency ?? 1, 1);
    this.#attempts = int("attempts", options.attempts ?? 2, 1);
    this.#backoff = options.backoff
      ? { type: options.backoff.type, delayMs: int("backoff.delayMs", options.backoff.delayMs, 1) }
      : { type: "fixed", delayMs: int("retryDelayMs", options.retryDelayMs ?? 1000, 0) };
    this.#workerId = options.workerId ?? "local";
    this.#isFull = options.isFull;
    this.#events = new JobEvents(this.#workerId, options.logger ?? NOOP_LOGGER);
    this.on = this.#events.on.bind(this.#events);
    for (const kind of kinds) this.#waiting.set(kind, []);
  }

  get activeJobs(): number {
    return this.#running.size;
  }

  async start(): Promise<void> {
    if (this.#state !== "starting") throw new TalkError("invalid_state", `The job queue is ${this.#state}.`);
    this.#state = "ready";
    if (this.#isFull) {
      // A full worker starts nothing; look again when load may have dropped.
      this.#fullTimer = setInterval(() => this.#pumpAll(), 1000);
      this.#fullTimer.unref();
    }
  }

  /** Makes `kind` known (enqueue, process); idempotent. Kinds are named by the surfaces that own them. */
  addKind(kind: string): void {
    if (this.#waiting.has(kind)) return;
    checkJobKinds([kind]);
    this.#kinds.push(kind);
    this.#waiting.set(kind, []);
  }

  async enqueue<T>(
    kind: string,
    data: T,
    options: EnqueueOptions = {},
  ): Promise<{ id: string; kind: string }> {
    this.#assertReady();
    const queue = this.#queue(kind);
    const id = options.jobId ?? randomUUID();
    if (this.#jobs.has(id)) return { id, kind };
    const job: QueuedJob = {
      id,
      kind,
      data,
      attemptsLeft: options.attempts ?? this.#attempts,
      attempt: 0,
      timer: undefined,
      abort: undefined,
      createdAt: Date.now(),
      startedAt: undefined,
    };
    this.#jobs.set(id, job);
    if (options.delayMs) {
      job.timer = setTimeout(() => {
        job.timer = undefined;
        queue.push(job);
        this.#pump(kind);
      }, options.delayMs);
      job.timer.unref();
    } else {
      queue.push(job);
      queueMicrotask(() => this.#pump(kind));
    }
    return { id, kind };
  }

  process<T>(kind: string, handler: JobHandler<T>): void {
    this.#assertReady();
    this.#queue(kind);
    if (this.#handlers.has(kind))
      throw new TalkError("invalid_state", `A handler for jobs of kind ${kind} is already registered.`);
    this.#handlers.set(kind, handler as JobHandler);
    queueMicrotask(() => this.#pump(kind));
  }

  /** Open jobs: running ones first, then waiting and delayed (a retry waiting out its backoff is delayed). */
  async list(limit = 100): Promise<JobSummary[]> {
    this.#assertReady();
    const rank = (job: QueuedJob): number => (job.abort ? 0 : job.timer ? 2 : 1);
    return [...this.#jobs.values()]
      .sort((a, b) => rank(a) - rank(b) || a.createdAt - b.createdAt)
      .slice(0, limit)
      .map((job) => ({
        id: job.id,
        kind: job.kind,
        state: job.abort ? "active" : job.timer ? "delayed" : "waiting",
        attempts: job.abort ? job.attempt - 1 : job.attempt,
        createdAt: job.createdAt,
        ...(job.abort && job.startedAt !== undefined
          ? { startedAt: job.startedAt, workerId: this.#workerId }
          : {}),
      }));
  }

  async cancel(jobId: string, reason = "cancelled"): Promise<CancelOutcome> {
    this.#assertReady();
    const job = this.#jobs.get(jobId);
    if (!job) return "not_found";
    if (job.abort) {
      job.abort.abort(reason);
      return "signalled";
    }
    clearTimeout(job.timer);
    const queue = this.#waiting.get(job.kind) ?? [];
    const at = queue.indexOf(job);
    if (at >= 0) queue.splice(at, 1);
    this.#jobs.delete(jobId);
    return "removed";
  }

  async pause(): Promise<void> {
    this.#accepting = false;
  }

  async resume(): Promise<void> {
    this.#accepting = true;
    this.#pumpAll();
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#state = "closing";
    clearInterval(this.#fullTimer);
    for (const job of this.#jobs.values()) {
      clearTimeout(job.timer);
      job.abort?.abort("shutdown");
    }
    this.#waiting.clear();
    this.#jobs.clear();
    this.#events.clear();
    this.#state = "closed";
  }

  #pumpAll(): void {
    for (const kind of this.#kinds) this.#pump(kind);
  }

  #pump(kind: string): void {
    const handler = this.#handlers.get(kind);
    const queue = this.#waiting.get(kind);
    if (!handler || !queue || this.#state !== "ready") return;
    let runningOfKind = [...this.#running.values()].filter((j) => j.kind === kind).length;
    while (
      queue.length > 0 &&
      runningOfKind < this.#concurrency &&
      this.#accepting &&
      !(this.#isFull?.() ?? false)
    ) {
      const job = queue.shift() as QueuedJob;
      runningOfKind++;
      void this.#run(job, handler);
    }
  }

  async #run(job: QueuedJob, handler: JobHandler): Promise<void> {
    job.abort = new AbortController();
    job.startedAt = Date.now();
    job.attempt += 1;
    job.attemptsLeft -= 1;
    this.#running.set(job.id, job);
    this.#emit("active", job);
    const signal = job.abort.signal;
    try {
      await handler({ id: job.id, kind: job.kind, data: job.data, attempt: job.attempt }, signal);
      this.#jobs.delete(job.id);
      this.#emit("completed", job);
      this.#outcome("completed", job);
    } catch (err) {
      if (signal.aborted) {
        this.#jobs.delete(job.id);
        const reason = `cancelled: ${String(signal.reason ?? "cancelled")}`;
        this.#emit("failed", job, reason);
        this.#outcome("cancelled", job, reason);
      } else if (job.attemptsLeft > 0 && this.#state === "ready") {
        this.#emit("retried", job, toMessage(err));
        this.#outcome("retried", job, toMessage(err));
        const { type, delayMs } = this.#backoff;
        job.timer = setTimeout(
          () => {
            job.timer = undefined;
            this.#waiting.get(job.kind)?.push(job);
            this.#pump(job.kind);
          },
          type === "fixed" ? delayMs : delayMs * 2 ** (job.attempt - 1),
        );
        job.timer.unref();
      } else {
        this.#jobs.delete(job.id);
        this.#emit("failed", job, toMessage(err));
        this.#outcome("failed", job, toMessage(err));
      }
    } finally {
      job.abort = undefined;
      this.#running.delete(job.id);
      this.#pump(job.kind);
    }
  }

  #emit(type: JobEvent["type"], job: QueuedJob, reason?: string): void {
    this.#events.job(type, job.kind, job.id, {
      reason,
      ...(type === "retried" ? { attempt: job.attempt } : {}),
    });
  }

  #outcome(outcome: JobOutcomeType, job: QueuedJob, reason?: string): void {
    this.#events.outcome(jobOutcome(outcome, job.kind, job.id, { attempt: job.attempt, reason }));
  }

  #queue(kind: string): QueuedJob[] {
    const queue = this.#waiting.get(kind);
    if (!queue) throw new TalkError("invalid_params", `Unknown job kind ${JSON.stringify(kind)}.`);
    return queue;
  }

  #assertReady(): void {
    if (this.#state !== "ready") throw new TalkError("invalid_state", `The job queue is ${this.#state}.`);
  }
}

function toMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
