// The public surface of the Talk runtime. Adapters, gateway and providers import from here.
export * from "./talk-types.js";
export * from "./errors.js";
export * from "./talk-events.js";
export * from "./provider-types.js";
export * from "./session-types.js";
export * from "./logger.js";
export * from "./abortable.js";
export * from "./event-sequencer.js";
export * from "./replay-buffer.js";
export * from "./session-log.js";
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
export { MediaLeg } from "./media/media-leg.js";
export { CallControlRegistry } from "./tools/call-control.js";
export type { MediaLegAdapter } from "./media/media-leg.js";
export type {
  NoiseSuppressorFactory,
  NoiseSuppressorPort,
  SpeechDetectorFactory,
  SpeechDetectorOptions,
} from "./media/input-processing.js";
export { FAULT_DEFAULTS, FAULT_LIMITS, type FaultOptions, type FaultPolicy } from "./faults/fault-options.js";
export { PrerenderedSpeech, type FaultSpeech } from "./faults/prerendered-speech.js";
export type { SessionControllerFactory } from "./pipelines/controller-factory.js";
export type { BargeInOptions } from "./pipelines/barge-in-policy.js";
export type { Pronounce } from "./speech/sounds-like.js";
export type { PipelineProviderResolver } from "./pipelines/pipeline-options.js";
export type { TalkAudioSink, TalkSessionController } from "./pipelines/controller-types.js";
export { hasDirectTools } from "./pipelines/direct-tools-turns.js";
export type { DirectToolCall, DirectToolResult } from "./pipelines/controller-types.js";
export type { CallControl, CollectDigitsRequest, CollectedDigits } from "./tools/call-control.js";
export {
  CallRecorder,
  type CallRecorderOptions,
  type CallRecordingSummary,
} from "./media/recording/call-recorder.js";
export {
  listRecordings,
  openRecording,
  recordingName,
  recordingsDir,
  writeRecordingInfo,
  RECORDING_NAME,
  type RecordingEntry,
  type RecordingInfo,
} from "./media/recording/recording-files.js";
