// The public surface of the voice engine (media legs, pipelines, speech, faults, recording), which stands on
// the Talk model (src/core) and the codecs. Surfaces and the composition root import from here.
export { MediaLeg } from "./media/media-leg.js";
export type { MediaLegAdapter } from "./media/media-leg.js";
export { ClientLeg, startClientLeg } from "./media/client-leg.js";
export { LineReference } from "./media/line-reference.js";
export type {
  NoiseSuppressorFactory,
  NoiseSuppressorPort,
  SpeechDetectorFactory,
  SpeechDetectorOptions,
} from "./media/input-processing.js";
export { PrerenderedSpeech, type FaultSpeech } from "./faults/prerendered-speech.js";
export type { SessionControllerFactory } from "./pipelines/controller-factory.js";
export type { BargeInOptions } from "./pipelines/barge-in-policy.js";
export type { Pronounce } from "./speech/sounds-like.js";
export type { PipelineProviderResolver } from "./pipelines/pipeline-options.js";
export type { TalkAudioSink, TalkSessionController } from "./pipelines/controller-types.js";
export { hasDirectTools } from "./pipelines/direct-tools-turns.js";
export type { DirectToolCall, DirectToolResult } from "./pipelines/controller-types.js";
export {
  CallRecorder,
  type CallRecorderOptions,
  type CallRecordingSummary,
} from "./recording/call-recorder.js";
export {
  listRecordings,
  openRecording,
  recordingName,
  recordingsDir,
  writeRecordingInfo,
  RECORDING_NAME,
  type RecordingEntry,
  type RecordingInfo,
} from "./recording/recording-files.js";
// Offered to other layers (scripts/rewrite-layer-imports.ts).
export { ResilientAgent, ResilientStt, ResilientTts } from "./faults/resilient-providers.js";
export { resolveBrainOptions } from "./pipelines/brain-options.js";
export { sessionControllerFactory } from "./pipelines/controller-factory.js";
export { replyPathProblem } from "./pipelines/reply-path-check.js";
export { AGENT_CONSULT_TOOL, createAgentConsultTool } from "./tools/agent-consult-tool.js";
export { SessionTranscripts } from "./tools/session-transcripts.js";
export type { ResilienceOptions } from "./faults/resilient-providers.js";
export type { EchoCancellationOptions, EchoCancellerFactory } from "./media/echo-guard.js";
export type { BrainOptions } from "./pipelines/brain-options.js";
export type { ControllerFactoryBase } from "./pipelines/controller-factory.js";
export type { PipelineOptions, PipelineToolDispatcher } from "./pipelines/pipeline-options.js";
export { sessionLogFiles, flushSessionLogs, type SessionLogFilesOptions } from "./recording/session-log.js";
