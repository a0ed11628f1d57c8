import type { AppJobs, Coordinator } from "../cluster/index.js";

/**
 * What the operations surface needs from the cluster, and nothing more: the
 * worker registry, the session directory, the two command tables (session
 * verbs to a session's owner, worker commands to a worker), the job queue's
 * listing and cancel, and this worker's drain. The composition root fills it.
 */
export interface OpsCluster {
  readonly workerId: string;
  listWorkers: Coordinator["listWorkers"];
  locate: Coordinator["locate"];
  sendCommand: Coordinator["sendCommand"];
  sendWorkerCommand: Coordinator["sendWorkerCommand"];
  onWorkerCommand: Coordinator["onWorkerCommand"];
  /** A session's events from any worker (read-only follows). */
  subscribeEvents: Coordinator["subscribeEvents"];
  /** Called with the id of each session whose worker was lost; returns the removal. */
  onSessionLost(listener: (sessionId: string) => void): () => void;
  readonly jobs: Pick<AppJobs, "list" | "cancel">;
  /**
   * Starts this worker's drain (new sessions and jobs refused, marked
   * draining) without exiting; resolves once it is marked. Idempotent.
   */
  startDrain(): Promise<void>;
}
