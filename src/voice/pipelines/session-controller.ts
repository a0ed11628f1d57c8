import { TalkError } from "../../core/index.js";
import { sameAudioFormat, type AudioFormat } from "../../core/index.js";
import { NOOP_LOGGER } from "../../core/index.js";
import type { TalkOutputHold, TalkSessionController, TalkTextInput } from "./controller-types.js";
import {
  assertPcmFormat,
  assertRealtimeFormat,
  DEFAULT_INPUT_FORMAT,
  DEFAULT_OUTPUT_FORMAT,
  resolvePipelineOptions,
  type SessionControllerDeps,
} from "./pipeline-options.js";
import { RealtimeRelayPipeline } from "./realtime-relay-pipeline.js";
import { SttTtsPipeline } from "./stt-tts-pipeline.js";
import { TranscriptionPipeline } from "./transcription-pipeline.js";
import { replyPathProblem } from "./reply-path-check.js";

/** A controller; `ready` resolves once its provider work can take audio (at once except for realtime). */
export interface SessionController extends TalkSessionController {
  readonly ready: Promise<void>;
  /** The format appendAudio takes: the requested input format, or the passthrough format when chosen. */
  readonly inputFormat: AudioFormat;
  /**
   * Optional (a pipeline whose agent answers the caller's words): the caller of the active turn `turnId`
   * has gone quiet after `text` (the running words) long enough that the turn may be over; the answer to
   * `text` may be started now, unheard until the turn ends with these words (prepared-answer.ts).
   */
  prepareAnswer?(turnId: string, text: string): void;
  /**
   * Optional: the caller of the active turn `turnId` has paused (the leg's gate heard no voice for
   * PAUSE_MS; `paused` true): the turn's recognizer may give its running words now, and they are its final
   * ones unless the caller's voice comes back first (`paused` false). SttStream.pause / resume.
   */
  callerPause?(turnId: string, paused: boolean): void;
}

/** True for controllers that take text input and verbatim speech (realtime and stt-tts). */
export function hasTextInput(
  controller: TalkSessionController,
): controller is TalkSessionController & TalkTextInput {
  const c = controller as Partial<TalkTextInput>;
  return typeof c.say === "function" && typeof c.sendUserText === "function";
}

/** True for controllers whose answer can be held and resumed (stt-tts). */
export function canHoldOutput(
  controller: TalkSessionController,
): controller is TalkSessionController & TalkOutputHold {
  const c = controller as Partial<TalkOutputHold>;
  return typeof c.holdOutput === "function" && typeof c.resumeOutput === "function";
}

/**
 * Creates the controller of a Gateway-owned session, picking the pipeline by
 * the session's mode: realtime -> provider relay, stt-tts -> STT, agent, TTS,
 * transcription -> STT only. Options and formats are validated here, so a bad
 * configuration fails at session creation, not on the first audio frame.
 */
export function createSessionController(deps: SessionControllerDeps): SessionController {
  const { session, providers } = deps;
  if (session.owner !== "gateway") {
    throw new TalkError("use_talk_client_create", "Client-owned sessions have no Gateway controller.");
  }
  const options = resolvePipelineOptions(deps.options);
  const logger = deps.logger ?? NOOP_LOGGER;
  const input = deps.inputFormat ?? DEFAULT_INPUT_FORMAT;
  const output = deps.outputFormat ?? DEFAULT_OUTPUT_FORMAT;

  switch (session.mode) {
    case "stt-tts": {
      const inputFormat = assertPcmFormat(input, "inputFormat");
      const outputFormat = assertPcmFormat(output, "outputFormat");
      return new SttTtsPipeline({
        session,
        providers,
        options,
        logger,
        inputFormat,
        outputFormat,
        sink: deps.sink,
        tools: deps.tools,
        faults: deps.faults,
      });
    }
    case "transcription":
      return new TranscriptionPipeline({
        session,
        providers,
        options,
        logger,
        inputFormat: assertPcmFormat(input, "inputFormat"),
      });
    case "realtime": {
      const provider = providers.realtime(session);
      if (!provider)
        throw new TalkError("provider_not_found", "No realtime provider is configured for this session.");
      if (!provider.connect) {
        throw new TalkError(
          "capability_unsupported",
          `Provider ${provider.id} cannot be driven over a gateway relay.`,
        );
      }
      // Latched here for the session's life (seed 003): who hears the caller and who plans replies.
      const replyPath = options.brain.replyPath;
      const native = replyPath === "native";
      const stt = native ? undefined : providers.stt(session);
      const agent = replyPath === "brain" ? providers.agent(session) : undefined;
      const problem = replyPathProblem(replyPath, provider, { stt, agent });
      if (problem)
        throw new TalkError("capability_unsupported", problem.message, {
          details: { field: "replyPath", reason: problem.reason },
        });
      // talk.input.turnEnd "talkgate": refused on a provider that says it cannot take turns it does not detect.
      if (native && deps.turns === "leg" && provider.capabilities.ownerTurns === false)
        throw new TalkError(
          "capability_unsupported",
          `Provider ${provider.id} cannot leave the end of the caller's turn to talkgate.`,
          { details: { field: "turnEnd", reason: "provider_turns_only" } },
        );
      // Encoded audio passes through only when the provider carries it both ways (one format per call leg).
      const both = (provider.capabilities.inputFormats ?? []).filter((f) =>
        (provider.capabilities.outputFormats ?? []).some((o) => sameAudioFormat(o, f)),
      );
      // Chosen once per session: the adapter's encoded format when the provider carries it both ways;
      // never when the local STT hears the caller (it takes PCM16).
      const passthrough = native ? deps.passthrough : undefined;
      const carried = passthrough !== undefined && both.some((f) => sameAudioFormat(f, passthrough));
      const inputFormat = carried
        ? passthrough
        : native
          ? assertRealtimeFormat(input, "inputFormat", both)
          : assertPcmFormat(input, "inputFormat");
      const outputFormat = carried ? passthrough : assertRealtimeFormat(output, "outputFormat", both);
      return new RealtimeRelayPipeline({
        stt,
        agent,
        session,
        provider,
        tools: deps.tools,
        options,
        logger,
        inputFormat,
        outputFormat,
        sink: deps.sink,
        speechOverOutput: deps.speechOverOutput,
        turns: deps.turns ?? "pipeline",
        faults: deps.faults,
      });
    }
  }
}
