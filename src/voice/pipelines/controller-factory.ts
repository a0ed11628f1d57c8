import type { SessionController } from "./session-controller.js";
import { createSessionController } from "./session-controller.js";
import type {
  PipelineOptions,
  PipelineProviderResolver,
  PipelineToolDispatcher,
  SessionControllerDeps,
} from "./pipeline-options.js";
import { resolvePipelineOptions } from "./pipeline-options.js";
import type { TalkLogger } from "../../core/index.js";
import type { RealtimeToolDefinition } from "../../core/index.js";
import { resolveFaultOptions, type FaultOptions, type ResolvedFaultOptions } from "../../core/index.js";
import type { FaultSpeech } from "../faults/prerendered-speech.js";
import {
  resolveEchoCancellation,
  type EchoCancellationOptions,
  type EchoCancellerFactory,
  type ResolvedEchoCancellation,
} from "../media/echo-guard.js";
import { resolveBargeIn, type BargeInOptions, type ResolvedBargeIn } from "./barge-in-policy.js";
import { resolveEndOfTurn, type EndOfTurnOptions } from "../speech/end-of-turn.js";
import {
  resolveNoiseSuppression,
  type FactoryInput,
  type NoiseSuppressionOptions,
  type NoiseSuppressorFactory,
  type SpeechDetectorFactory,
} from "../media/input-processing.js";
import { resolveRealtimeEcho, resolveTurnEnd, type TurnEnd } from "../media/realtime-turn-options.js";

/**
 * What one controller request may choose: the session, its formats, sink and
 * greeting hook, and per-surface overrides of the trusted pipeline options
 * (e.g. `silenceTimeoutMs: 0` where the surface ends turns itself). Providers
 * may be wrapped (a surface times provider events), never replaced.
 */
export interface SessionControllerRequest extends Pick<
  SessionControllerDeps,
  | "session"
  | "inputFormat"
  | "outputFormat"
  | "passthrough"
  | "sink"
  | "speechOverOutput"
  | "turns"
  | "faults"
> {
  /** Overrides of the base options, for this controller only. */
  options?: PipelineOptions;
  /** Wraps the base provider resolver (e.g. to time a realtime provider's events). */
  wrapProviders?(base: PipelineProviderResolver): PipelineProviderResolver;
  /** Offer the server's tools to this session. Default true. */
  tools?: boolean;
  /**
   * Tools the session's client completes (talk.session.submitToolResult),
   * already checked against policy: offered to the provider beside the
   * server's; a provider call to one waits for the client's result.
   */
  clientTools?: readonly RealtimeToolDefinition[];
}

/** Builds session controllers with the process's providers, tools, logger and options bound once. */
export interface SessionControllerFactory {
  (request: SessionControllerRequest): SessionController;
  /**
   * The trusted options every controller starts from: what a media leg reads
   * for the decisions it makes itself (talk.input.interruptOnSpeech for its
   * local barge-in), so the pipeline and the leg follow one setting.
   */
  readonly options: Readonly<PipelineOptions>;
  /** talk.faults and the lines of the failure path: what a media leg builds its LegFaults from. */
  readonly faults: FactoryFaults;
  /** talk.input.echoCancellation and the canceller a media leg whose adapter supplies the played reference uses. */
  readonly echo: FactoryEcho;
  /** talk.input.bargeIn and talk.input.endOfTurn: what a media leg's local turn-taking follows. */
  readonly turns: FactoryTurns;
  /** talk.input.vad and talk.input.noiseSuppression: the detector and suppressor of every media leg. */
  readonly input: FactoryInput;
}

/** The media legs' barge-in and end-of-turn settings (validated at start). */
export interface FactoryTurns {
  readonly bargeIn: ResolvedBargeIn;
  readonly endOfTurn: Readonly<EndOfTurnOptions>;
  /** talk.input.turnEnd: who ends a realtime phone leg's turns (realtime-turn-options.ts). */
  readonly turnEnd: TurnEnd;
}

/** Echo cancellation of the media legs (talk.input.echoCancellation); no `create`: none (no canceller here). */
export interface FactoryEcho {
  readonly options: ResolvedEchoCancellation;
  readonly create?: EchoCancellerFactory | undefined;
  /** talk.input.echoCancellation.realtime: realtime phone legs cancel too (no passthrough). */
  readonly realtime: boolean;
}

/** The failure path every media leg of the process follows (talk.faults.*). */
export interface FactoryFaults {
  readonly options: ResolvedFaultOptions;
  /** The apology and the goodbye, rendered at start-up; absent: faults are reported, nothing is spoken. */
  readonly speech?: FaultSpeech | undefined;
}

export interface ControllerFactoryBase {
  providers: PipelineProviderResolver;
  tools?: PipelineToolDispatcher | undefined;
  /** Trusted options of every session (persona, brain, interruptOnSpeech...); validated here, once. */
  options: PipelineOptions;
  logger: TalkLogger;
  /** talk.faults (validated here) and the pre-rendered lines. Default: the defaults, no lines. */
  faults?: { options?: FaultOptions; speech?: FaultSpeech | undefined };
  /** talk.input.echoCancellation (validated here) and the canceller (the codecs'). Default: enabled, no canceller. */
  echo?: { options?: EchoCancellationOptions; create?: EchoCancellerFactory | undefined; realtime?: boolean };
  /** talk.input.bargeIn, endOfTurn and turnEnd (validated here). Default: onset barge-in, fixed endpoint, the provider's turns. */
  turns?: { bargeIn?: BargeInOptions; endOfTurn?: EndOfTurnOptions; turnEnd?: TurnEnd };
  /** The legs' speech detector (talk.input.vad) and noise suppression (validated here). Default: the WebRTC VAD, none. */
  input?: {
    vad?: SpeechDetectorFactory | undefined;
    noiseSuppression?: NoiseSuppressionOptions;
    createSuppressor?: NoiseSuppressorFactory | undefined;
  };
}

/** The base tool view, or one that also offers a session's client-completed tools (never the base mutated). */
function withClientTools(
  base: PipelineToolDispatcher | undefined,
  clientTools: readonly RealtimeToolDefinition[] | undefined,
): PipelineToolDispatcher | undefined {
  if (!base || !clientTools || clientTools.length === 0) return base;
  return {
    get definitions() {
      return [...(base.definitions ?? []), ...clientTools];
    },
    definitionsFor: (session) => [
      ...(base.definitionsFor?.(session) ?? base.definitions ?? []),
      ...clientTools,
    ],
    ...(base.progress !== undefined ? { progress: base.progress } : {}),
    handleProviderCall: (session, request) => base.handleProviderCall(session, request),
    dispatch: (session, request) => base.dispatch(session, request),
    submitToolResult: (sessionId, callId, output) => base.submitToolResult(sessionId, callId, output),
  };
}

/**
 * The one controller factory of a process: the composition root makes it
 * once, the gateway and every surface use it, so pipeline options are
 * assembled (and validated, config_invalid) in one place.
 */
export function sessionControllerFactory(base: ControllerFactoryBase): SessionControllerFactory {
  // Validated now, so a bad option fails at start-up rather than on the first call.
  resolvePipelineOptions(base.options);
  const create = (request: SessionControllerRequest): SessionController => {
    const { options, wrapProviders, tools, clientTools, ...rest } = request;
    const offered = tools !== false ? withClientTools(base.tools, clientTools) : undefined;
    return createSessionController({
      ...rest,
      providers: wrapProviders ? wrapProviders(base.providers) : base.providers,
      ...(offered ? { tools: offered } : {}),
      logger: base.logger,
      // brain is merged key by key: a request's replyPath keeps the configured chunker and the rest.
      options: { ...base.options, ...options, brain: { ...base.options.brain, ...options?.brain } },
    });
  };
  const faults: FactoryFaults = Object.freeze({
    options: resolveFaultOptions(base.faults?.options),
    speech: base.faults?.speech,
  });
  const echo: FactoryEcho = Object.freeze({
    options: resolveEchoCancellation(base.echo?.options),
    create: base.echo?.create,
    realtime: resolveRealtimeEcho(base.echo?.realtime),
  });
  const endOfTurn = Object.freeze({ ...base.turns?.endOfTurn });
  resolveEndOfTurn(endOfTurn, 800);
  const turns: FactoryTurns = Object.freeze({
    bargeIn: resolveBargeIn(base.turns?.bargeIn),
    endOfTurn,
    turnEnd: resolveTurnEnd(base.turns?.turnEnd),
  });
  const input: FactoryInput = Object.freeze({
    vad: base.input?.vad,
    noiseSuppression: resolveNoiseSuppression(base.input?.noiseSuppression),
    createSuppressor: base.input?.createSuppressor,
  });
  return Object.assign(create, { options: Object.freeze({ ...base.options }), faults, echo, turns, input });
}
