/**
 * The trusted pipeline options of every session (persona, brain, barge-in,
 * realtime model and voice), assembled once from the configuration, and the
 * one controller factory built over them.
 */
import type { TalkgateConfig } from "../config/config-schema.js";
import type { TalkLogger } from "../core/logger.js";
import type { BrainOptions } from "../core/pipelines/brain-options.js";
import {
  sessionControllerFactory,
  type ControllerFactoryBase,
  type SessionControllerFactory,
} from "../core/pipelines/controller-factory.js";
import type { PipelineOptions } from "../core/pipelines/pipeline-options.js";
import type { FaultSpeech } from "../core/faults/prerendered-speech.js";
import { faultOptions, resilientResolver } from "./faults.js";
import type { AppProviders } from "./providers.js";
import type { AppTools } from "./tools.js";

/** agent.* as the brain sees it. */
export function brainOptions(config: TalkgateConfig): BrainOptions {
  return {
    chunker: config.agent.chunker,
    ttsPrefetch: config.agent.ttsPrefetch,
    progressCueMs: config.agent.progressCueMs,
    progressCueText: config.agent.progressCueText,
    consultTimeoutMs: config.agent.consultTimeoutMs,
    apologyText: config.agent.apologyText,
    progressive: config.agent.realtime.progressive,
    replyPath: config.agent.realtime.replyPath,
  };
}

/** The options every session starts from; a surface overrides per controller (SessionControllerRequest.options). */
export function basePipelineOptions(config: TalkgateConfig, brain: BrainOptions): PipelineOptions {
  return {
    persona: config.agent.persona,
    brain,
    interruptOnSpeech: config.talk.input.interruptOnSpeech,
    outputDeltaIntervalMs: config.talk.output.deltaEventIntervalMs,
    ...(config.talk.realtime?.model ? { realtimeModel: config.talk.realtime.model } : {}),
    ...(config.talk.realtime?.voice ? { realtimeVoice: config.talk.realtime.voice } : {}),
  };
}

export interface AppPipelines {
  /** agent.* as the brain sees it (also in `base.options.brain`). */
  readonly brain: BrainOptions;
  /** What the factory was made of (for inspection; every surface builds through `createController`). */
  readonly base: Readonly<ControllerFactoryBase> & { readonly tools: AppTools["pipeline"] };
  readonly createController: SessionControllerFactory;
}

/** The one controller factory: validates the options now (config_invalid at start-up). */
export function buildPipelines(
  config: TalkgateConfig,
  providers: AppProviders,
  tools: AppTools,
  brain: BrainOptions,
  logger: TalkLogger,
  faultSpeech?: FaultSpeech,
): AppPipelines {
  // One place: the gateway, telephony and the meeting bots start from these options.
  const base = Object.freeze({
    // STT, TTS and agent as chains: retried, timed and failed over by talk.faults.
    providers: resilientResolver(config, providers.registry, providers.pipeline, logger),
    tools: tools.pipeline,
    options: basePipelineOptions(config, brain),
    logger,
    faults: { options: faultOptions(config), speech: faultSpeech },
  });
  return { brain, base, createController: sessionControllerFactory(base) };
}
