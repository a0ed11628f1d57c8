// What the pipelines layer offers the Gateway and adapters.
export type {
  DirectToolCall,
  DirectToolResult,
  TalkAudioSink,
  TalkDirectTools,
  TalkSessionController,
  TalkTextInput,
} from "./controller-types.js";
export { hasDirectTools } from "./direct-tools-turns.js";
export { createSessionController, hasTextInput, type SessionController } from "./session-controller.js";
export {
  DEFAULT_PERSONA,
  PIPELINE_DEFAULTS,
  DEFAULT_INPUT_FORMAT,
  DEFAULT_OUTPUT_FORMAT,
  type PipelineOptions,
  type PipelineProviderResolver,
  type PipelineToolDispatcher,
  type SessionControllerDeps,
} from "./pipeline-options.js";
export {
  sessionControllerFactory,
  type ControllerFactoryBase,
  type SessionControllerFactory,
  type SessionControllerRequest,
} from "./controller-factory.js";
