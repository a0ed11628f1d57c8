// The public surface of the Talk model (sessions, turns, events, errors, runtime, provider contracts, tool
// policy). The voice engine, adapters, gateway and providers import from here.
export * from "./talk-types.js";
export * from "./errors.js";
export * from "./talk-events.js";
export * from "./provider-types.js";
export * from "./audio-chunk.js";
export * from "./session-types.js";
export * from "./logger.js";
export * from "./abortable.js";
export * from "./event-sequencer.js";
export * from "./replay-buffer.js";
export * from "./join-token-store.js";
export { createTalkRuntime } from "./session-runtime.js";
export * from "./provider-registry.js";
export * from "./provider-resolver.js";
export * from "./provider-outcomes.js";
export * from "./log-limiter.js";
export * from "./talk-catalog.js";
export * from "./tool-registry.js";
export * from "./tool-policy.js";
export * from "./tool-dispatcher.js";
// Offered to other layers (scripts/rewrite-layer-imports.ts).
export { CallControlRegistry } from "./tools/call-control.js";
export { FAULT_DEFAULTS, FAULT_LIMITS, type FaultOptions, type FaultPolicy } from "./fault-options.js";
export type { CallControl, CollectDigitsRequest, CollectedDigits } from "./tools/call-control.js";
// Offered to other layers (scripts/rewrite-layer-imports.ts).
export { resolveFaultOptions } from "./fault-options.js";
export {
  createCollectDigitsTool,
  createEndCallTool,
  createSendDtmfTool,
  createTransferCallTool,
} from "./tools/call-tools.js";
export { ConsultProgressChannel } from "./tools/consult-progress.js";
export { createGetTimeTool } from "./tools/get-time-tool.js";
export { exportToolsForProvider } from "./tools/provider-tool-export.js";
export type {
  FaultDecision,
  FaultHandler,
  ProviderFault,
  ProviderFaultKind,
  ResolvedFaultOptions,
} from "./fault-options.js";
