import { setTimeout as wait } from "node:timers/promises";
import { randomUUID } from "node:crypto";
import {
  type ConnectionOptions,
  type Job,
  Queue,
  QueueEvents,
  Relay,
  type RelaySubscription,
  UnrecoverableError,
  WaitingError,
  Worker,
} from "bullmq";
import { TalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import { NOOP_LOGGER } from "../core/index.js";
import { type JobEvent, JobEvents } from "./job-events.js";
import { checkJobInt, checkJobKinds } from "./job-options.js";
import { watchWorkerOutcomes } from "./bullmq-outcomes.js";
import type { JobOutcome } from "./job-outcome.js";
import { parseRedisUrl, reconnectDelay, RedisKeys } from "./redis-connection.js";

/** What the worker whose run failed publishes on `jobs.<kind>.retried`. */
interface RetriedMessage {
  jobId: string;
  attempt?: number;
  reason?: string;
}

/** Options of the BullMQ job queue (work placed on any capable worker). */
export interface JobQueueOptions {
  /** redis:// URL (required). */
  redisUrl: string;
  /** Same prefix as the coordinator; BullMQ keys live under `<keyPrefix>bull:` (required). */
  keyPrefix: string;
  /** This worker's id, recorded on the jobs it runs (required). */
  workerId: string;
  /** Job kinds known from the start (lowercase, digits, dashes); surfaces add theirs with `addKind` (default none). */
  kinds?: readonly string[];
  /** Jobs of one kind this worker runs at once (default 1). */
  concurrency?: number;
  /** Runs of a job whose handler fails, before it is failed (default 2; a stall is not an attempt). */
  attempts?: number;
  /** Wait before a retry (default exponential from 1000 ms: 1 s, 2 s, 4 s...). */
  backoff?: JobBackoff;
  /** Lock time of a running job, ms (renewed every half); a dead worker's job can stall once it expires (default 30 000). */
  lockDurationMs?: number;
  /** How often this worker looks for stalled jobs, ms (default 30 000). */
  stalledIntervalMs?: number;
  /** Stalls a job survives (back to wait); one more fails it (default 1; 0: the first stall fails it). */
  maxStalledCount?: number;
  /** Placement: while this returns true the worker takes no new jobs (checked every fullCheckMs). */
  isFull?: () => boolean;
  /** Default 1000 ms. */
  fullCheckMs?: number;
  /**
   * Whether the cluster's Redis answers now (its coordinator's view). Closed while it does not, BullMQ's
   * connections are disconnected instead of sent QUIT, which ioredis holds until Redis returns: the close
   * would never end. Default: always answers.
   */
  redisReady?: () => boolean;
  logger?: TalkLogger;
}

/** A BullMQ backend's connections, as a close with Redis away drops them. */
interface DroppableBackend {
  connection?: { disconnect(wait?: boolean): Promise<void> };
  blockingConnection?: { disconnect(wait?: boolean): Promise<void> } | undefined;
}

/** How long a close with Redis unreachable waits for BullMQ's connections to close, ms. */
const CLOSE_WHILE_DOWN_MS = 1000;
/** How often a close under way looks whether Redis still answers, ms. */
const REDIS_CHECK_MS = 100;

/** BullMQ's built-in backoff: `fixed` waits delayMs, `exponential` delayMs * 2^(attempt-1). */
export interface JobBackoff {
  type: "fixed" | "exponential";
  /** At least 1 ms, so every retry passes through BullMQ's delayed state and is seen cluster-wide. */
  delayMs: number;
}

export interface JobInfo<T = unknown> {
  id: string;
  kind: string;
  data: T;
  /** 1 on the first run, 2 on the first retry... */
  attempt: number;
  /**
   * Records the job's progress (any JSON value), readable from every worker
   * through `inspect` (BullMQ: `job.updateProgress`). Absent in one process,
   * where the job's owner is the only reader.
   */
  progress?(value: unknown): Promise<void>;
  /** Appends a line to the job's log, readable from every worker (BullMQ: `job.log`). Absent in one process. */
  log?(line: string): Promise<void>;
}

/** A job as every worker can read it (`inspect`). */
export interface JobRecord<T = unknown> {
  id: string;
  kind: string;
  /** BullMQ's state: waiting, delayed, active, completed, failed... */
  state: string;
  data: T;
  /** The last value given to `JobInfo.progress`, if any. */
  progress: unknown;
  /** Log lines (`JobInfo.log`), oldest first, when asked for (from index `logsFrom` when given). */
  logs: string[];
  /** Why a failed job failed (BullMQ's failedReason; "cancelled: <reason>" for a cancelled one). */
  failedReason?: string;
}

/** A job not finished yet (waiting, delayed or running), as every worker lists it (`list`). */
export interface JobSummary {
  id: string;
  kind: string;
  /** waiting, delayed, prioritized or active. */
  state: string;
  /** Runs so far (0 while it never ran). */
  attempts: number;
  /** Epoch ms it was enqueued. */
  createdAt: number;
  /** Epoch ms its current run started, while active. */
  startedAt?: number;
  /** The worker running it, while active. */
  workerId?: string;
}

/** The states `list` reads, open jobs only. */
export const OPEN_JOB_STATES = ["active", "waiting", "delayed", "prioritized"] as const;

/** Runs a job. The signal aborts when the job is cancelled from any worker or this worker shuts down. */
export type JobHandler<T = unknown> = (job: JobInfo<T>, signal: AbortSignal) => Promise<unknown>;

export interface EnqueueOptions {
  /** Default: a random UUID. */
  jobId?: string;
  delayMs?: number;
  attempts?: number;
}

export type { JobEvent } from "./job-events.js";

export type CancelOutcome = "removed" | "signalled" | "finished" | "not_found";

const NAMESPACE = "talkgate";

/**
 * BullMQ queues, one per job kind. A worker runs the kinds it registers a
 * handler for (its roles); placement is BullMQ's pull model, and a worker
 * that is draining or full pauses its BullMQ workers so it takes nothing new.
 * Cancelling uses BullMQ's own mechanism: a waiting job is removed, a running
 * one gets `worker.cancelJob()` on whichever worker runs it, reached through
 * BullMQ's Relay topic `jobs.<kind>.cancel` (BullMQ's documented cross-worker
 * cancellation). A cancelled job fails with UnrecoverableError: no retry.
 */
export class JobQueue {
  readonly #opts: Required<Omit<JobQueueOptions, "isFull" | "kinds">> & Pick<JobQueueOptions, "isFull">;
  readonly #connection: ConnectionOptions;
  readonly #bullPrefix: string;
  readonly #kinds: string[];
  /** Kinds added after start, until their queue events are connected. */
  readonly #opening = new Map<string, Promise<void>>();
  readonly #queues = new Map<string, Queue>();
  readonly #queueEvents: QueueEvents[] = [];
  readonly #workers = new Map<string, Worker>();
  readonly #events: JobEvents;
  /**
   * `job`: cluster-wide lifecycle of every job (from BullMQ's QueueEvents; `retried` from the failing worker, over the Relay).
   * `outcome`: transitions that happened on this worker (for logs and metrics: each counted once cluster-wide).
   */
  readonly on: JobEvents["on"];
  readonly #relay: Relay;
  #relaySubscription: RelaySubscription | undefined;
  #fullTimer: NodeJS.Timeout | undefined;
  #accepting = true;
  #pausedForLoad = false;
  #active = 0;
  #state: "starting" | "ready" | "closing" | "closed" = "starting";
  #closing: Promise<void> | undefined;

  constructor(options: JobQueueOptions) {
    this.#kinds = options.kinds?.length ? checkJobKinds(options.kinds) : [];
    const int = checkJobInt;
    this.#opts = {
      redisUrl: options.redisUrl,
      keyPrefix: options.keyPrefix,
      workerId: options.workerId,
      concurrency: int("concurrency", options.concurrency ?? 1, 1),
      attempts: int("attempts", options.attempts ?? 2, 1),
      backoff: {
        type: options.backoff?.type === "fixed" ? "fixed" : "exponential",
        delayMs: int("backoff.delayMs", options.backoff?.delayMs ?? 1000, 1),
      },
      lockDurationMs: int("lockDurationMs", options.lockDurationMs ?? 30_000, 1000),
      stalledIntervalMs: int("stalledIntervalMs", options.stalledIntervalMs ?? 30_000, 100),
      maxStalledCount: int("maxStalledCount", options.maxStalledCount ?? 1, 0),
      fullCheckMs: int("fullCheckMs", options.fullCheckMs ?? 1000, 10),
      isFull: options.isFull,
      redisReady: options.redisReady ?? (() => true),
      logger: options.logger ?? NOOP_LOGGER,
    };
    this.#bullPrefix = new RedisKeys(options.keyPrefix).bullPrefix;
    // BullMQ's blocking connections must retry forever (its documented requirement).
    const { host, port, db, username, password, tls } = parseRedisUrl(options.redisUrl);
    this.#connection = {
      host,
      port,
      db,
      username,
      password,
      tls,
      maxRetriesPerRequest: null,
      retryStrategy: reconnectDelay,
    };
    this.#events = new JobEvents(options.workerId, this.#opts.logger);
    this.on = this.#events.on.bind(this.#events);
    this.#relay = new Relay({
      connection: this.#connection,
      prefix: this.#bullPrefix,
      namespace: NAMESPACE,
      nodeId: `${options.workerId}-jobs`,
    });
    this.#relay.on("error", (err: Error) => this.#opts.logger.debug({ err: err.message }, "job relay error"));
  }

  /** Jobs this worker is running now (for drain). */
  get activeJobs(): number {
    return this.#active;
  }

  async start(): Promise<void> {
    if (this.#state !== "starting") throw new TalkError("invalid_state", `The job queue is ${this.#state}.`);
    await Promise.all(this.#kinds.map((kind) => this.#openKind(kind)));
    await this.#relay.waitUntilReady();
    // `jobs.<kind>.cancel` reaches the worker running a job; `jobs.<kind>.retried`
    // tells every worker which attempt failed and why (see #reportOutcome).
    this.#relaySubscription = await this.#relay.subscribe(`jobs.*.*`, (message) => {
      const [, encodedKind = "", action] = message.topic.split(".");
      const kind = decodeURIComponent(encodedKind);
      if (action === "cancel") {
        const { jobId, reason } = message.data as { jobId: string; reason: string };
        this.#workers.get(kind)?.cancelJob(jobId, reason);
      } else if (action === "retried") {
        const { jobId, reason, attempt } = message.data as RetriedMessage;
        this.#events.job("retried", kind, jobId, { reason, attempt });
      }
    });
    if (this.#opts.isFull) {
      this.#fullTimer = setInterval(() => void this.#checkLoad(), this.#opts.fullCheckMs);
      this.#fullTimer.unref();
    }
    this.#state = "ready";
  }

  /**
   * Makes `kind` known on this worker: its BullMQ queue and queue events are
   * opened (now, or at start). Idempotent. Kinds are named by the surfaces
   * that own them, never here.
   */
  addKind(kind: string): void {
    if (this.#kinds.includes(kind)) return;
    checkJobKinds([kind]);
    this.#kinds.push(kind);
    if (this.#state !== "ready") return;
    this.#opening.set(
      kind,
      this.#openKind(kind).catch((err: unknown) =>
        this.#opts.logger.debug({ err, kind }, "job queue of a new kind not ready"),
      ),
    );
  }

  /** Opens the queue and queue events of one kind; resolves when both are connected. */
  async #openKind(kind: string): Promise<void> {
    const queue = new Queue(kind, { connection: this.#connection, prefix: this.#bullPrefix });
    queue.on("error", (err: Error) => this.#opts.logger.debug({ err: err.message, kind }, "job queue error"));
    this.#queues.set(kind, queue);
    const events = new QueueEvents(kind, { connection: this.#connection, prefix: this.#bullPrefix });
    events.on("error", (err: Error) =>
      this.#opts.logger.debug({ err: err.message, kind }, "job events error"),
    );
    const emit = (type: JobEvent["type"], jobId: string, reason?: string, attempt?: number): void =>
      this.#events.job(type, kind, jobId, { reason, attempt });
    events.on("active", ({ jobId }) => emit("active", jobId));
    events.on("completed", ({ jobId }) => emit("completed", jobId));
    events.on("failed", ({ jobId, failedReason }) => emit("failed", jobId, failedReason));
    events.on("stalled", ({ jobId }) => emit("stalled", jobId));
    this.#queueEvents.push(events);
    await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
  }

  async enqueue<T>(
    kind: string,
    data: T,
    options: EnqueueOptions = {},
  ): Promise<{ id: string; kind: string }> {
    this.#assertReady();
    const queue = this.#queue(kind);
    await this.#opening.get(kind);
    const id = options.jobId ?? randomUUID();
    await queue.add(kind, data, {
      jobId: id,
      attempts: options.attempts ?? this.#opts.attempts,
      backoff: { type: this.#opts.backoff.type, delay: this.#opts.backoff.delayMs },
      ...(options.delayMs ? { delay: options.delayMs } : {}),
      removeOnComplete: { age: 3600, count: 1000 },
      removeOnFail: { age: 24 * 3600, count: 1000 },
    });
    return { id, kind };
  }

  /** Runs jobs of `kind` on this worker. One handler per kind. */
  process<T>(kind: string, handler: JobHandler<T>): void {
    this.#assertReady();
    this.#queue(kind);
    if (this.#workers.has(kind))
      throw new TalkError("invalid_state", `A handler for jobs of kind ${kind} is already registered.`);
    // Three declared parameters: BullMQ only creates the job's AbortController for a processor that takes the signal.
    const processor = async (
      job: Job<T>,
      token: string | undefined,
      signal: AbortSignal | undefined,
    ): Promise<unknown> => {
      if (!this.#accepting || this.#pausedForLoad) {
        // Fetched in the instant before the pause took effect: hand it back
        // untouched (BullMQ's moveToWait + WaitingError, no attempt spent).
        await job.moveToWait(token);
        throw new WaitingError();
      }
      const jobSignal = signal ?? new AbortController().signal;
      this.#active++;
      try {
        const info: JobInfo<T> = {
          id: job.id ?? "",
          kind,
          data: job.data,
          attempt: job.attemptsMade + 1,
          progress: (value) => job.updateProgress(value as object),
          log: async (line) => {
            await job.log(line);
          },
        };
        return await handler(info, jobSignal);
      } catch (err) {
        if (jobSignal.aborted)
          throw new UnrecoverableError(`cancelled: ${String(jobSignal.reason ?? "cancelled")}`);
        throw err;
      } finally {
        this.#active--;
      }
    };
    const worker = new Worker<T>(kind, processor, {
      connection: this.#connection,
      prefix: this.#bullPrefix,
      concurrency: this.#opts.concurrency,
      lockDuration: this.#opts.lockDurationMs,
      stalledInterval: this.#opts.stalledIntervalMs,
      maxStalledCount: this.#opts.maxStalledCount,
      name: this.#opts.workerId,
      autorun: this.#accepting && !this.#pausedForLoad,
    });
    worker.on("error", (err: Error) =>
      this.#opts.logger.debug({ err: err.message, kind }, "job worker error"),
    );
    watchWorkerOutcomes(worker, kind, (outcome) => this.#reportOutcome(outcome));
    this.#workers.set(kind, worker);
  }

  /**
   * Counts an outcome of a run on this worker and, for a retry, tells every
   * worker. Only the failing worker knows the attempt and reason for sure:
   * BullMQ's cluster-wide `delayed` event carries the job id alone, and by the
   * time another worker reads the job a short backoff may have let it run
   * again (it then read the next attempt and its reason).
   */
  #reportOutcome(outcome: JobOutcome): void {
    this.#events.outcome(outcome);
    if (outcome.outcome !== "retried") return;
    const message: RetriedMessage = {
      jobId: outcome.jobId,
      attempt: outcome.attempt,
      reason: outcome.reason,
    };
    void this.#relay
      .publish(`jobs.${outcome.kind}.retried`, message)
      .catch((err: unknown) =>
        this.#opts.logger.debug({ err, kind: outcome.kind, jobId: outcome.jobId }, "job retry not published"),
      );
  }

  /** Reads a job of any kind from any worker (its data, state, progress and, with `logs`, its log lines). */
  async inspect<T = unknown>(
    jobId: string,
    options: { logs?: boolean; logsFrom?: number } = {},
  ): Promise<JobRecord<T> | undefined> {
    this.#assertReady();
    for (const [kind, queue] of this.#queues) {
      const job = await queue.getJob(jobId);
      if (!job) continue;
      const state = await job.getState();
      // logsFrom: only the lines from that index on (a follower reading what is new).
      const from = Math.max(0, Math.floor(options.logsFrom ?? 0));
      const logs = options.logs ? (await queue.getJobLogs(jobId, from, -1, true)).logs : [];
      return {
        id: jobId,
        kind,
        state,
        data: job.data as T,
        progress: job.progress,
        logs,
        ...(state === "failed" && job.failedReason ? { failedReason: job.failedReason } : {}),
      };
    }
    return undefined;
  }

  /** Open jobs of every kind (running first, then waiting and delayed), up to `limit` per kind. */
  async list(limit = 100): Promise<JobSummary[]> {
    this.#assertReady();
    const out: JobSummary[] = [];
    for (const [kind, queue] of this.#queues) {
      for (const state of OPEN_JOB_STATES) {
        const jobs = await queue.getJobs([state], 0, limit - 1, true);
        for (const job of jobs) {
          if (!job?.id) continue;
          out.push({
            id: job.id,
            kind,
            state,
            attempts: job.attemptsMade,
            createdAt: job.timestamp,
            ...(state === "active" && job.processedOn ? { startedAt: job.processedOn } : {}),
            ...(state === "active" && job.processedBy ? { workerId: job.processedBy } : {}),
          });
        }
      }
    }
    return out;
  }

  /**
   * Cancels a job from any worker: removes it if it has not started, aborts
   * its handler's signal on the worker running it otherwise.
   */
  async cancel(jobId: string, reason = "cancelled"): Promise<CancelOutcome> {
    this.#assertReady();
    for (const [kind, queue] of this.#queues) {
      const job = await queue.getJob(jobId);
      if (!job) continue;
      const state = await job.getState();
      if (state === "active") {
        await this.#relay.publish(`jobs.${kind}.cancel`, { jobId, reason });
        return "signalled";
      }
      if (
        state === "waiting" ||
        state === "delayed" ||
        state === "prioritized" ||
        state === "waiting-children"
      ) {
        await job.remove();
        return "removed";
      }
      return "finished";
    }
    return "not_found";
  }

  /** Stops taking new jobs (drain); running jobs continue. */
  async pause(): Promise<void> {
    this.#accepting = false;
    this.#pauseWorkers();
    await new Promise((resolve) => setImmediate(resolve));
  }

  async resume(): Promise<void> {
    this.#accepting = true;
    if (!this.#pausedForLoad) this.#resumeWorkers();
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    this.#state = "closing";
    if (this.#fullTimer) clearInterval(this.#fullTimer);
    // Redis gone: nothing can be finished or handed back, and an orderly close waits for it to return
    // (ioredis holds the QUIT; BullMQ's disconnect waits for an 'end' a reconnecting client never emits).
    // The close then gets a moment, and what is still open is disconnected (#dropConnections). Redis may also
    // go while an orderly close is under way (a pool's Redis stopped by the same signal): that is watched.
    const downAtStart = this.#opts.redisReady() === false;
    const steps = this.#closeSteps(downAtStart);
    const closed = steps.then(() => true);
    let finished = downAtStart ? false : await Promise.race([closed, this.#redisGone()]);
    if (!finished) {
      finished = await Promise.race([closed, wait(CLOSE_WHILE_DOWN_MS, false, { ref: false })]);
      if (!finished) {
        this.#dropConnections();
        this.#opts.logger.warn(
          { workerId: this.#opts.workerId, waitedMs: CLOSE_WHILE_DOWN_MS },
          "job queue closed with Redis unreachable: its connections were dropped",
        );
      }
    }
    this.#events.clear();
    this.#state = "closed";
  }

  /**
   * The close could not finish with Redis away: BullMQ's steps wait on commands ioredis holds until Redis
   * returns, and their clients would reconnect for as long as the process lives (to whatever listens on that
   * port later). Disconnecting them stops that; the steps still waiting then fail, which nobody awaits.
   */
  #dropConnections(): void {
    const backends: (DroppableBackend | undefined)[] = [
      ...[...this.#workers.values(), ...this.#queueEvents, ...this.#queues.values()].map((o) => o.backend),
      // The Relay keeps its backend private (bullmq 6.7): reached by shape, a no-op if that changes.
      (this.#relay as unknown as { backend?: DroppableBackend }).backend,
    ];
    for (const backend of backends)
      for (const connection of [backend?.connection, backend?.blockingConnection])
        void connection?.disconnect(false).catch(() => undefined);
  }

  /** Resolves false once Redis stops answering (checked every REDIS_CHECK_MS) while the close runs. */
  #redisGone(): Promise<false> {
    return new Promise((resolve) => {
      const timer = setInterval(() => {
        if (this.#state !== "closing") clearInterval(timer);
        else if (this.#opts.redisReady() === false) {
          clearInterval(timer);
          resolve(false);
        }
      }, REDIS_CHECK_MS);
      timer.unref();
    });
  }

  async #closeSteps(down: boolean): Promise<void> {
    const settle = async (what: string, task: Promise<unknown>): Promise<void> => {
      await task.catch((err: unknown) =>
        this.#opts.logger.debug({ err, what }, "job queue close step failed"),
      );
    };
    // Workers first (they finish or give up their jobs; with Redis gone, at once), then what only observes.
    await Promise.all([...this.#workers.values()].map((w) => settle("worker", w.close(down))));
    await settle("relay subscription", this.#relaySubscription?.unsubscribe() ?? Promise.resolve());
    await settle("relay", this.#relay.close());
    await Promise.all(
      [...this.#queueEvents, ...this.#queues.values()].map((q) => settle("queue", q.close())),
    );
  }

  async #checkLoad(): Promise<void> {
    const full = this.#opts.isFull?.() ?? false;
    if (full === this.#pausedForLoad) return;
    this.#pausedForLoad = full;
    this.#opts.logger.info(
      { workerId: this.#opts.workerId, full },
      full ? "job intake paused: worker full" : "job intake resumed: worker has room",
    );
    if (full) this.#pauseWorkers();
    else if (this.#accepting) this.#resumeWorkers();
  }

  /**
   * pause(false), not pause(true): only it interrupts the blocking fetch
   * already waiting in Redis, which would otherwise still hand this worker
   * the next job. Not awaited: it settles when the running jobs end, and that
   * wait belongs to the drain, not to "stop taking jobs".
   */
  #pauseWorkers(): void {
    for (const worker of this.#workers.values()) {
      void worker
        .pause(false)
        .catch((err: unknown) => this.#opts.logger.debug({ err }, "job worker pause failed"));
    }
  }

  #resumeWorkers(): void {
    for (const worker of this.#workers.values()) {
      if (!worker.isRunning())
        void worker.run().catch((err: unknown) => this.#opts.logger.debug({ err }, "job worker stopped"));
      else void worker.resume();
    }
  }

  #queue(kind: string): Queue {
    const queue = this.#queues.get(kind);
    if (!queue) throw new TalkError("invalid_params", `Unknown job kind ${JSON.stringify(kind)}.`);
    return queue;
  }

  #assertReady(): void {
    if (this.#state !== "ready") throw new TalkError("invalid_state", `The job queue is ${this.#state}.`);
  }
}
