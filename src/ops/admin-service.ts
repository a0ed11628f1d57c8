import { z } from "zod";
import type { JobSummary, WorkerInfo } from "../cluster/index.js";
import { TalkError, toTalkError } from "../core/index.js";
import type { CallControlRegistry, TalkLogger, TalkRuntime } from "../core/index.js";
import type { LiveSessions, SessionSummary } from "./live-sessions.js";
import type { RecentActivity, RecentError } from "./recent-activity.js";
import type { OpsCluster } from "./ops-cluster.js";
import type { UsageLedger } from "./usage-ledger.js";
import type { UsageRecord } from "./usage-record.js";

/** A worker's session summaries as they arrive from the bus: parsed, never trusted. */
const summarySchema = z.object({
  sessionId: z.string().min(1).max(256),
  workerId: z.string().min(1).max(256),
  surface: z.string().max(64),
  carrier: z.string().max(64).optional(),
  platform: z.string().max(64).optional(),
  mode: z.string().max(64),
  transport: z.string().max(64),
  brain: z.string().max(64),
  provider: z.string().max(128).optional(),
  startedAt: z.number(),
  state: z.string().max(64),
  activity: z.enum(["speaking", "listening", "idle"]),
  counterpart: z.record(z.string(), z.string().max(512)),
  events: z.number(),
  providers: z
    .array(
      z.object({
        kind: z.string().max(32),
        provider: z.string().max(128),
        turnId: z.string().max(128).optional(),
        at: z.number(),
        firstMs: z.number().optional(),
        totalMs: z.number().optional(),
        outcome: z.enum(["ok", "error", "cancelled"]).optional(),
      }),
    )
    .max(64)
    .default([]),
});

/** A worker's recent error as it arrives from the bus. */
const errorSchema = z.object({
  at: z.number(),
  workerId: z.string().min(1).max(256),
  sessionId: z.string().max(256),
  surface: z.string().max(64),
  source: z.string().max(64),
  code: z.string().max(64),
  message: z.string().max(1000),
});

/** A ledger record from another worker: the fields a listing sorts and totals by are checked; the rest is carried. */
const usageSchema = z.looseObject({
  sessionId: z.string().min(1).max(256),
  workerId: z.string().min(1).max(256),
  endedAt: z.string().max(64),
  durationSeconds: z.number(),
  cost: z.object({ total: z.number(), currency: z.string().max(8) }),
});

export interface SessionListing {
  sessions: SessionSummary[];
  /** Workers that did not answer in time (their sessions are missing from the list). */
  unreachable: { workerId: string; code: string }[];
}

export interface WorkerSummary {
  id: string;
  roles: readonly string[];
  state: string;
  draining: boolean;
  /** Sessions it holds leases for. */
  sessions: number;
  cpu: number;
  maxSessions: number;
  /** Jobs it runs now. */
  jobs: number;
  heartbeatAt: number;
  startedAt: number;
}

export interface AdminServiceOptions {
  cluster: OpsCluster;
  live: LiveSessions;
  /** This worker's latest errors (answers listErrors). */
  activity: RecentActivity;
  runtime: TalkRuntime;
  /** Phone calls' controls (hang-up at the carrier), by session. */
  callControls?: CallControlRegistry | undefined;
  /** This worker's usage ledger (answers listUsage). */
  ledger: UsageLedger;
  /** How long a listing waits for each worker, ms (default 2000). */
  listTimeoutMs?: number;
  logger: TalkLogger;
}

/** The reason a session closed by an operator carries (session.closed). */
export const ADMIN_CLOSE_REASON = "admin";

/**
 * The cluster-wide admin operations, the same from any worker: list live
 * sessions (each worker asked for its own, in parallel: the summaries are
 * live state, not a copy written at claim time), close a session where it
 * runs, cancel its output or turn, list and drain workers, list and cancel
 * jobs. Also the worker's own answers to the worker commands.
 */
export class AdminService {
  readonly #o: AdminServiceOptions;
  readonly #off: () => void;

  constructor(options: AdminServiceOptions) {
    this.#o = options;
    this.#off = options.cluster.onWorkerCommand({
      listSessions: () => ({ workerId: options.cluster.workerId, sessions: options.live.list() }),
      drain: async () => {
        options.logger.warn({ workerId: options.cluster.workerId }, "drain requested by an operator");
        await options.cluster.startDrain();
        return { workerId: options.cluster.workerId, draining: true };
      },
      closeSession: ({ sessionId, reason }) => this.#closeHere(sessionId, reason ?? ADMIN_CLOSE_REASON),
      listErrors: () => ({ workerId: options.cluster.workerId, errors: options.activity.errors() }),
      listUsage: async ({ from, to, limit }) => ({
        workerId: options.cluster.workerId,
        records: await options.ledger.list(from, to, limit),
      }),
    });
  }

  async listSessions(signal?: AbortSignal): Promise<SessionListing> {
    const { items, unreachable } = await this.#fromEveryWorker(
      (workerId, options) =>
        this.#o.cluster
          .sendWorkerCommand(workerId, { verb: "listSessions" }, options)
          .then((answer) => answer.sessions),
      summarySchema,
      signal,
    );
    const sessions = items as SessionSummary[];
    sessions.sort((a, b) => a.startedAt - b.startedAt);
    return { sessions, unreachable };
  }

  /** The latest errors of every live worker, newest first (at most 50 per worker). */
  async listErrors(
    signal?: AbortSignal,
  ): Promise<{ errors: RecentError[]; unreachable: SessionListing["unreachable"] }> {
    const { items, unreachable } = await this.#fromEveryWorker(
      (workerId, options) =>
        this.#o.cluster
          .sendWorkerCommand(workerId, { verb: "listErrors" }, options)
          .then((answer) => answer.errors),
      errorSchema,
      signal,
    );
    const errors = items as RecentError[];
    errors.sort((a, b) => b.at - a.at);
    return { errors, unreachable };
  }

  /**
   * Ledger records of sessions that ended between two days (UTC, inclusive)
   * on every live worker. A worker that is gone took its unread ledger with
   * it from this listing (its files stay on its disk).
   */
  async listUsage(
    from: string,
    to: string,
    signal?: AbortSignal,
  ): Promise<{ records: UsageRecord[]; unreachable: SessionListing["unreachable"] }> {
    const { items, unreachable } = await this.#fromEveryWorker(
      (workerId, options) =>
        this.#o.cluster
          .sendWorkerCommand(workerId, { verb: "listUsage", params: { from, to } }, options)
          .then((answer) => answer.records),
      usageSchema,
      signal,
    );
    const records = items as UsageRecord[];
    records.sort((a, b) => a.endedAt.localeCompare(b.endedAt));
    return { records, unreachable };
  }

  /** Asks every live worker in parallel; parses what each answered; names those that did not answer. */
  async #fromEveryWorker(
    ask: (workerId: string, options: { timeoutMs: number; signal?: AbortSignal }) => Promise<unknown[]>,
    schema: z.ZodType,
    signal: AbortSignal | undefined,
  ): Promise<{ items: unknown[]; unreachable: SessionListing["unreachable"] }> {
    const workers = await this.#o.cluster.listWorkers(signal);
    const timeoutMs = this.#o.listTimeoutMs ?? 2000;
    const answers = await Promise.allSettled(
      workers.map((w) => ask(w.id, { timeoutMs, ...(signal ? { signal } : {}) })),
    );
    const items: unknown[] = [];
    const unreachable: SessionListing["unreachable"] = [];
    answers.forEach((answer, i) => {
      const workerId = (workers[i] as WorkerInfo).id;
      if (answer.status === "rejected") {
        unreachable.push({ workerId, code: toTalkError(answer.reason).code });
        return;
      }
      for (const raw of answer.value) {
        const parsed = schema.safeParse(raw);
        if (parsed.success) items.push(parsed.data);
        else this.#o.logger.warn({ workerId }, "admin: a malformed answer item was dropped");
      }
    });
    return { items, unreachable };
  }

  /** Ends a session on the worker that runs it, the way its surface ends it (a call is hung up first). */
  async closeSession(
    sessionId: string,
    reason: string | undefined,
    signal?: AbortSignal,
  ): Promise<{ sessionId: string; closed: true; hungUp: boolean }> {
    const owner = await this.#o.cluster.locate(sessionId, signal);
    if (!owner) throw sessionNotFound(sessionId);
    return this.#o.cluster.sendWorkerCommand(
      owner.workerId,
      { verb: "closeSession", params: { sessionId, ...(reason !== undefined ? { reason } : {}) } },
      signal ? { signal } : {},
    );
  }

  cancel(
    verb: "cancelOutput" | "cancelTurn",
    sessionId: string,
    params: { turnId?: string | undefined; reason?: string | undefined },
    signal?: AbortSignal,
  ): Promise<{ sessionId: string; cancelled: boolean }> {
    const command = {
      verb,
      params: {
        reason: params.reason ?? ADMIN_CLOSE_REASON,
        ...(params.turnId !== undefined ? { turnId: params.turnId } : {}),
      },
    };
    // No peer: a server-internal verb, applied on the owner to any surface's session.
    return this.#o.cluster.sendCommand(sessionId, command, signal ? { signal } : {});
  }

  async listWorkers(signal?: AbortSignal): Promise<{ workers: WorkerSummary[] }> {
    const [workers, jobs] = await Promise.all([
      this.#o.cluster.listWorkers(signal),
      this.#o.cluster.jobs.list().catch((err: unknown) => {
        this.#o.logger.warn({ err }, "admin: jobs could not be listed");
        return [] as JobSummary[];
      }),
    ]);
    const running = new Map<string, number>();
    for (const job of jobs) {
      if (job.state === "active" && job.workerId)
        running.set(job.workerId, (running.get(job.workerId) ?? 0) + 1);
    }
    return {
      workers: workers
        .map((w) => ({
          id: w.id,
          roles: w.roles,
          state: w.state,
          draining: w.state === "draining",
          sessions: w.load.sessions,
          cpu: w.load.cpu,
          maxSessions: w.maxSessions,
          jobs: running.get(w.id) ?? 0,
          heartbeatAt: w.heartbeatAt,
          startedAt: w.startedAt,
        }))
        .sort((a, b) => a.id.localeCompare(b.id)),
    };
  }

  async drainWorker(workerId: string, signal?: AbortSignal): Promise<{ workerId: string; draining: true }> {
    const workers = await this.#o.cluster.listWorkers(signal);
    if (!workers.some((w) => w.id === workerId)) {
      throw new TalkError("worker_not_found", `No live worker ${workerId}.`, { details: { workerId } });
    }
    return this.#o.cluster.sendWorkerCommand(workerId, { verb: "drain" }, signal ? { signal } : {});
  }

  async listJobs(): Promise<{ jobs: JobSummary[] }> {
    return { jobs: await this.#o.cluster.jobs.list() };
  }

  async cancelJob(jobId: string, reason: string | undefined): Promise<{ jobId: string; outcome: string }> {
    const outcome = await this.#o.cluster.jobs.cancel(jobId, reason ?? ADMIN_CLOSE_REASON);
    if (outcome === "not_found") {
      throw new TalkError("session_not_found", `No job ${jobId}.`, { details: { jobId } });
    }
    return { jobId, outcome };
  }

  close(): void {
    this.#off();
  }

  /** The owner's side of closeSession: hang the call up at the carrier when it is one, then close the session. */
  async #closeHere(
    sessionId: string,
    reason: string,
  ): Promise<{ sessionId: string; closed: true; hungUp: boolean }> {
    const session = this.#o.runtime.getSession(sessionId);
    if (!session) throw sessionNotFound(sessionId);
    if (session.state !== "active")
      throw new TalkError("session_closed", undefined, { details: { sessionId } });
    this.#o.logger.info({ sessionId, reason }, "admin: closing a session");
    let hungUp = false;
    const control = this.#o.callControls?.get(sessionId);
    if (control) {
      try {
        await control.hangUp({ afterPlayback: false, reason, signal: AbortSignal.timeout(5000) });
        hungUp = true;
      } catch (err) {
        this.#o.logger.warn(
          { err, sessionId },
          "admin: the carrier hang-up failed; closing the session anyway",
        );
      }
    }
    try {
      await this.#o.cluster.sendCommand(sessionId, { verb: "close", params: { reason } });
    } catch (err) {
      // The hang-up may have closed it first.
      if (toTalkError(err).code !== "session_closed" && toTalkError(err).code !== "session_not_found")
        throw err;
    }
    return { sessionId, closed: true, hungUp };
  }
}

function sessionNotFound(sessionId: string): TalkError {
  return new TalkError("session_not_found", `No live session ${sessionId}.`, { details: { sessionId } });
}
