/**
 * The trusted pipeline options of every session (persona, brain, barge-in,
 * realtime model and voice), assembled once from the configuration, and the
 * one controller factory built over them.
 */
import type { TalkgateConfig } from "../config/index.js";
import type { TalkLogger } from "../core/index.js";
import type { BrainOptions } from "../voice/index.js";
import {
  sessionControllerFactory,
  type ControllerFactoryBase,
  type SessionControllerFactory,
} from "../voice/index.js";
import type { PipelineOptions } from "../voice/index.js";
import type { FaultSpeech } from "../voice/index.js";
import { faultOptions, resilientResolver, type SessionProviderWrap } from "./faults.js";
import { createEchoCanceller, echoCancellerAvailable } from "../codecs/index.js";
import type { EchoCancellationOptions, EchoCancellerFactory } from "../voice/index.js";
import { createNoiseSuppressor, noiseSuppressorAvailable } from "../codecs/index.js";
import { createRnnoiseSuppressor, loadRnnoise } from "../codecs/index.js";
import { createSileroVad } from "../codecs/index.js";
import { sileroModel, sileroVadAvailable } from "../codecs/index.js";
import { TalkError } from "../core/index.js";
import type { AppProviders } from "./providers.js";
import type { AppTools } from "./tools.js";
import type { BargeInOptions } from "../voice/index.js";
import { loadPronunciations } from "./pronunciations.js";

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
    maxToolRounds: config.agent.maxToolRounds,
    toolErrorText: config.agent.toolErrorText,
  };
}

/**
 * talk.input.silenceTimeoutMs as the pipelines take it (a multiple of 10
 * between 100 and 10 000): the silence after speech that ends a user turn
 * where nobody else ends it (a transcription session's captions).
 */
export function silenceTimeoutOf(config: TalkgateConfig): number {
  return Math.min(10_000, Math.max(100, Math.round(config.talk.input.silenceTimeoutMs / 10) * 10));
}

/** The options every session starts from; a surface overrides per controller (SessionControllerRequest.options). */
export function basePipelineOptions(config: TalkgateConfig, brain: BrainOptions): PipelineOptions {
  return {
    persona: config.agent.persona,
    brain,
    interruptOnSpeech: config.talk.input.interruptOnSpeech,
    outputDeltaIntervalMs: config.talk.output.deltaEventIntervalMs,
    inputAppendedIntervalMs: config.talk.input.appendedEventIntervalMs,
    providerAppendMs: config.talk.input.providerAppendMs,
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
  observe?: SessionProviderWrap,
): AppPipelines {
  // One place: the gateway, telephony and the meeting bots start from these options.
  const base = Object.freeze({
    // STT, TTS and agent as chains: retried, timed and failed over by talk.faults; each provider observed.
    providers: resilientResolver(config, providers.registry, providers.pipeline, logger, observe),
    tools: tools.pipeline,
    options: basePipelineOptions(config, brain),
    logger,
    faults: { options: faultOptions(config), speech: faultSpeech },
    echo: echoCancellation(config, logger),
    turns: {
      bargeIn: bargeIn(config, logger),
      endOfTurn: config.talk.input.endOfTurn,
      turnEnd: config.talk.input.turnEnd,
    },
    input: inputProcessing(config, logger),
  });
  return { brain, base, createController: sessionControllerFactory(base) };
}

/** talk.input.bargeIn with the pronunciation dictionary its matchBySound reads. */
function bargeIn(config: TalkgateConfig, logger: TalkLogger): BargeInOptions {
  const { pronunciations, ...rest } = config.talk.input.bargeIn;
  // Only a leg that holds its answer for words judges them: no dictionary read otherwise.
  if (!rest.confirmWithWords) return rest;
  const pronounce = loadPronunciations({ matchBySound: rest.matchBySound, pronunciations }, logger);
  return { ...rest, ...(pronounce ? { pronounce } : {}) };
}

/** talk.input.echoCancellation with the codecs' canceller (libspeexdsp); none, and a warning, when its binding is not built. */
export function echoCancellation(
  config: TalkgateConfig,
  logger: TalkLogger,
): { options: EchoCancellationOptions; create?: EchoCancellerFactory; realtime: boolean } {
  const { realtime, doubleTalk, residualVad, ...rest } = config.talk.input.echoCancellation;
  // Measured (docs/notes/performance-history.md, "Double talk told by coherence"): with words confirming the barge-in,
  // the test lets more backchannels and noise bursts reach the recognizer, which mishears them as words
  // (6 -> 10 of 16 backchannels cut); so unless set, it is on only where words do not decide.
  const options = {
    ...rest,
    doubleTalk: doubleTalk ?? !config.talk.input.bargeIn.confirmWithWords,
    residualVad: residualVad ?? true,
  };
  if (!options.enabled) return { options, realtime };
  // The residual's detector is the Silero VAD. Unset, a process that cannot load it runs without it (the
  // coherence test alone, as before the detector was the default); set true, it is refused at start, as
  // talk.input.vad is.
  if (residualVad === undefined && !sileroVadAvailable()) {
    logger.warn(
      {},
      "talk.input.echoCancellation.residualVad: the Silero model cannot be loaded here; phone legs tell double talk by coherence alone",
    );
    options.residualVad = false;
  } else if (options.residualVad)
    try {
      sileroModel();
    } catch (err) {
      throw new TalkError(
        "config_invalid",
        `talk.input.echoCancellation.residualVad is on but the Silero model cannot be loaded: ${(err as Error).message}`,
        { cause: err },
      );
    }
  if (!echoCancellerAvailable()) {
    logger.warn(
      {},
      "talk.input.echoCancellation: the libspeexdsp binding is not built (scripts/setup.sh); phone legs run without echo cancellation",
    );
    return { options, realtime };
  }
  return { options, realtime, create: (o) => createEchoCanceller({ ...o, frameMs: 20 }) };
}

/**
 * talk.input.vad and talk.input.noiseSuppression with the codecs' detector and suppressor. The Silero model
 * is loaded now, so a process configured for it and missing its packages is refused at start; a missing
 * libspeexdsp binding only warns (legs run without suppression), as echo cancellation does.
 */
export function inputProcessing(
  config: TalkgateConfig,
  logger: TalkLogger,
): NonNullable<ControllerFactoryBase["input"]> {
  const { vad, noiseSuppression } = config.talk.input;
  let detector: NonNullable<ControllerFactoryBase["input"]>["vad"];
  if (vad === "silero") {
    try {
      sileroModel();
    } catch (err) {
      throw new TalkError(
        "config_invalid",
        `talk.input.vad is "silero" but the model cannot be loaded: ${(err as Error).message}`,
        { cause: err },
      );
    }
    detector = (o) => createSileroVad(o);
  }
  let createSuppressor: NonNullable<ControllerFactoryBase["input"]>["createSuppressor"];
  if (noiseSuppression.enabled && noiseSuppression.engine === "rnnoise")
    createSuppressor = (o) => createRnnoiseSuppressor({ sampleRate: o.sampleRate });
  else if (noiseSuppression.enabled) {
    if (noiseSuppressorAvailable()) createSuppressor = (o) => createNoiseSuppressor({ ...o, frameMs: 20 });
    else
      logger.warn(
        {},
        "talk.input.noiseSuppression: the libspeexdsp binding is not built (scripts/setup.sh); legs run without noise suppression",
      );
  }
  return {
    vad: detector,
    noiseSuppression: { enabled: noiseSuppression.enabled, suppressDb: noiseSuppression.suppressDb },
    createSuppressor,
  };
}

/** Loads what inputProcessing needs asynchronously (RNNoise's WebAssembly), before it runs; refused naming the key. */
export async function prepareInputProcessing(config: TalkgateConfig): Promise<void> {
  const { noiseSuppression } = config.talk.input;
  if (!noiseSuppression.enabled || noiseSuppression.engine !== "rnnoise") return;
  try {
    await loadRnnoise();
  } catch (err) {
    throw new TalkError(
      "config_invalid",
      `talk.input.noiseSuppression.engine is "rnnoise" but it cannot be loaded: ${(err as Error).message}`,
      { cause: err },
    );
  }
}
