/**
 * Where the outbound calls of this worker stand, by carrier call id: live
 * calls placed here, calls placed here that ended (bounded, oldest dropped
 * first, so late callbacks and status reads still find them), and terminal
 * statuses that came for a call id not known yet while a dial here waited
 * for the carrier's answer. Calls placed by other workers are read from
 * their job record.
 */
import type { AppJobs } from "../../cluster/index.js";
import type { JobRecord } from "../../cluster/index.js";
import type { MachineDetectionStatus } from "../amd/amd-types.js";
import type { CallSession } from "../call-session.js";
import { OUTBOUND_CALL_JOB, type CallJobData, type OutboundCallStatus } from "./call-request.js";

export interface CallStatusStoreOptions {
  /** Ended calls remembered. Default 1000. */
  maxEnded?: number;
  /** Early terminal statuses kept at most (and for at most 120 s). */
  maxEarly: number;
  /** Job records, for calls placed as jobs (any worker); absent in one process. */
  jobs?: Pick<AppJobs, "inspect"> | undefined;
}

const EARLY_TTL_MS = 120_000;

export class CallStatusStore {
  readonly #maxEnded: number;
  readonly #maxEarly: number;
  readonly #jobs: Pick<AppJobs, "inspect"> | undefined;
  /** Live calls placed by this worker. */
  readonly #placed = new Map<
    string,
    { call: CallSession; jobId: string | undefined; amd: { status(): MachineDetectionStatus } | undefined }
  >();
  readonly #ended = new Map<string, OutboundCallStatus>();
  readonly #early = new Map<string, { status: string; at: number }>();

  constructor(options: CallStatusStoreOptions) {
    this.#maxEnded = options.maxEnded ?? 1000;
    this.#maxEarly = options.maxEarly;
    this.#jobs = options.jobs;
  }

  /** A call placed here is live. */
  placed(
    callId: string,
    call: CallSession,
    jobId: string | undefined,
    amd?: { status(): MachineDetectionStatus },
  ): void {
    this.#placed.set(callId, { call, jobId, amd });
  }

  /** A call placed here ended. */
  ended(callId: string, status: OutboundCallStatus): void {
    this.#placed.delete(callId);
    this.#ended.set(callId, status);
    if (this.#ended.size > this.#maxEnded) this.#ended.delete(this.#ended.keys().next().value as string);
  }

  hasEnded(callId: string): boolean {
    return this.#ended.has(callId);
  }

  /** Keeps a terminal status for a call id not known yet (a dial may be about to learn it). */
  keepEarly(callId: string, status: string): void {
    const now = Date.now();
    for (const [id, e] of this.#early)
      if (now - e.at > EARLY_TTL_MS || this.#early.size >= this.#maxEarly) this.#early.delete(id);
    this.#early.set(callId, { status, at: now });
  }

  /** The terminal status that came before the dial of `callId` returned, taken once. */
  takeEarly(callId: string): string | undefined {
    const early = this.#early.get(callId);
    this.#early.delete(callId);
    return early?.status;
  }

  /**
   * A call's status by job id (from any worker, through the job record) or
   * by carrier call id (a call placed by this worker); undefined when unknown.
   */
  async status(id: string): Promise<OutboundCallStatus | undefined> {
    const live = this.#placed.get(id);
    if (live)
      return {
        state: "placed",
        ...(live.jobId ? { jobId: live.jobId } : {}),
        callSid: id,
        sessionId: live.call.session.id,
        ...(live.amd ? { machineDetection: live.amd.status() } : {}),
      };
    const done = this.#ended.get(id);
    if (done) return done;
    if (!this.#jobs) return undefined;
    const record = await this.#jobs.inspect<CallJobData>(id);
    return record?.kind === OUTBOUND_CALL_JOB ? statusOfJob(record) : undefined;
  }
}

/** An outbound-call job's record as a call status: its recorded progress, or its state. */
export function statusOfJob(record: JobRecord<CallJobData>): OutboundCallStatus {
  const p = record.progress;
  const progress =
    typeof p === "object" && p !== null && typeof (p as { state?: unknown }).state === "string"
      ? (p as OutboundCallStatus)
      : undefined;
  if (progress?.state === "ended") return { ...progress, jobId: record.id };
  if (record.state === "failed")
    return {
      ...progress,
      state: "failed",
      jobId: record.id,
      ...(record.failedReason ? { error: record.failedReason } : {}),
    };
  if (progress) return { ...progress, jobId: record.id };
  const state = record.state === "active" ? "dialling" : record.state === "completed" ? "ended" : "queued";
  return { state, jobId: record.id };
}
