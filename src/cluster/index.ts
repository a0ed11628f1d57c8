// What the cluster layer offers the composition root, gateway and adapters.
export type * from "./coordinator.js";
export { WORKER_COMMAND_VERBS, WORKER_COMMANDS } from "./worker-command.js";
export { SESSION_COMMAND_VERBS, SESSION_COMMANDS, sessionCommandHandler } from "./session-command.js";
export type { CoordinatorOptions } from "./coordinator-options.js";
export { createCoordinator, type CreateCoordinatorOptions } from "./create-coordinator.js";
export { InProcessCoordinator, type InProcessCoordinatorOptions } from "./in-process-coordinator.js";
export { InProcessHub } from "./in-process-hub.js";
export {
  MAX_SETTING_BYTES,
  type SettingListener,
  type SettingRecord,
  type SharedSettings,
} from "./shared-settings.js";
export { SharedSetting, type SharedSettingSpec } from "./shared-setting.js";
// Types only: the Redis backends are loaded on demand (create-coordinator.ts, job-scheduler.ts).
export type { RedisCoordinator, RedisCoordinatorOptions } from "./redis-coordinator.js";
export type {
  JobQueue,
  JobQueueOptions,
  JobHandler,
  JobInfo,
  JobEvent,
  JobBackoff,
  EnqueueOptions,
  CancelOutcome,
} from "./job-queue.js";
export type { JobOutcome, JobOutcomeType } from "./job-outcome.js";
export { JobMetrics } from "./job-metrics.js";
export {
  Drainer,
  ActiveCounter,
  drainOnSignals,
  type ActiveWork,
  type DrainInputs,
  type DrainOptions,
  type DrainResult,
} from "./drain.js";
export { SessionBinder, type SessionBinderInputs } from "./session-binder.js";
export { InProcessJobQueue, type InProcessJobQueueOptions } from "./in-process-job-queue.js";
export {
  createJobScheduler,
  appJobs,
  type AppJobs,
  type JobPlacement,
  type JobScheduler,
  type CreateJobSchedulerOptions,
  type JobSettings,
} from "./job-scheduler.js";
// Offered to other layers (scripts/rewrite-layer-imports.ts).
export type { JobRecord, JobSummary } from "./job-queue.js";
export { InProcessOneTimeClaims, RedisOneTimeClaims, type OneTimeClaims } from "./one-time-claims.js";
