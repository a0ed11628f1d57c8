// The operations surface: cluster-wide admin API (and, next to it, metrics, traces, usage and the console).
export { opsPlugin, type OpsPluginOptions, type OpsSurface } from "./ops-plugin.js";
export type { OpsCluster } from "./ops-cluster.js";
export type { SessionSummary } from "./live-sessions.js";
export {
  AdminService,
  ADMIN_CLOSE_REASON,
  type SessionListing,
  type WorkerSummary,
} from "./admin-service.js";
export { ProviderProbes } from "./provider-probes.js";
export { UsageEvents } from "./usage-events.js";
export {
  observedProvider,
  observedProviders,
  type ProviderCall,
  type ProviderCallKind,
  type ProviderCallTrace,
  type ProviderCallUnits,
  type ProviderObserver,
} from "./provider-probe.js";
export { OpsMetrics } from "./ops-metrics.js";
export { createTraceProvider } from "./trace-provider.js";
export { SessionTracer } from "./session-tracer.js";
export { traceLogMixin } from "./trace-log.js";
export { UsageLedger } from "./usage-ledger.js";
export { usageCsv, type UsageRecord, type ProviderUsage } from "./usage-record.js";
export { RetentionSweeper, type RetentionRule } from "./retention.js";
export {
  MemoryTrimmer,
  nativeMemoryBinding,
  nativeMemoryUnavailable,
  registerNativeMemoryMetrics,
  type MallocInfo,
  type MemoryTrimStats,
  type NativeMemoryBinding,
} from "./native-memory.js";
