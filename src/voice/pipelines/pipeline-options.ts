import type { ToolCallOutcome, ToolCallRequest } from "../../core/index.js";
import { TalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type {
  AgentProvider,
  RealtimeProvider,
  RealtimeToolDefinition,
  SttProvider,
  TtsProvider,
} from "../../core/index.js";
import type { TalkOutput, TalkSession } from "../../core/index.js";
import { sameAudioFormat, type AudioFormat } from "../../core/index.js";
import { PCM16_16K, PCM16_24K } from "../../core/index.js";
import type { TalkAudioSink } from "./controller-types.js";
import type { ConsultProgressChannel } from "../../core/index.js";
import type { FaultHandler, ResolvedFaultOptions } from "../../core/index.js";
import { resolveBrainOptions, type BrainOptions, type ResolvedBrainOptions } from "./brain-options.js";

/**
 * Tunables of the session pipelines. Everything here comes from trusted
 * configuration (talk.* config), never from request parameters: the persona
 * and instructions in particular are built by the Gateway.
 */
export interface PipelineOptions {
  /** System message of every agent consult (stt-tts). Default DEFAULT_PERSONA. */
  persona?: string;
  /** Instructions of a realtime provider session. Default: the persona. */
  instructions?: string;
  /** Transcript entries (user and assistant) sent to the agent besides the new one. Default 10. */
  historyEntries?: number;
  /** TTS voice; default: the TTS provider's own default. */
  voice?: string;
  /** TTS speaking rate, 1.0 = normal. Default 1. */
  speed?: number;
  /** Language hint passed to STT. Default: none (the provider's default). */
  language?: string;
  /** Realtime model; default: the provider's. */
  realtimeModel?: string;
  /** Realtime voice; default: the provider's. */
  realtimeVoice?: string;
  /**
   * Ends the user turn automatically after this much non-speech audio following
   * speech, measured in audio time by the codecs VAD (talk.input.silenceTimeoutMs).
   * A multiple of 10 between 100 and 10 000, or 0 to rely on explicit endTurn only.
   * Default 0.
   */
  silenceTimeoutMs?: number;
  /**
   * Speech while assistant audio plays interrupts it (talk.input.interruptOnSpeech): read by the media
   * leg's one BargeInPolicy, for every trigger. Default true.
   */
  interruptOnSpeech?: boolean;
  /** Largest appendAudio frame accepted, bytes. Default 65 536 (about 2 s of 16 kHz PCM16). */
  maxAppendBytes?: number;
  /**
   * Audio held while the pipeline cannot take it yet (the realtime provider is
   * connecting, a transcription turn is finalizing), ms; older audio is dropped. Default 2000.
   */
  heldAudioMs?: number;
  /**
   * `output.audio.delta` events of one output item are coalesced to at most one
   * per this many ms (the first chunk is reported at once; the rest is reported
   * before `output.audio.done` or a cancellation, so the byte counts always add
   * up). A realtime provider streams 20 ms chunks: one event (sequenced, fanned
   * out, logged) per chunk was the largest cost of a relayed call after the
   * sockets. 0 reports every chunk. Default 200 (talk.output.deltaEventIntervalMs).
   */
  outputDeltaIntervalMs?: number;
  /**
   * `input.audio.appended` events (caller audio that reached the realtime
   * provider or the recognizer) are coalesced to one per this many ms of
   * audio (input-audio-events.ts; what is left is reported when the turn
   * changes or ends). 0 reports every append. Default 1000
   * (talk.input.appendedEventIntervalMs): each event costs its whole path
   * (envelope, JSON line, session log, replay, listeners), and at 200 ms these
   * metadata events were 7.5% of a relaying server's CPU (docs/performance.md).
   */
  inputAppendedIntervalMs?: number;
  /**
   * The caller's audio goes to a realtime provider in pieces of this
   * many ms (one append per piece, not per 20 ms phone frame; the provider
   * hears the oldest frame of a piece up to this much minus 20 ms later). 0
   * sends every frame as it comes. Default 60 (talk.input.providerAppendMs).
   */
  providerAppendMs?: number;
  /** How answers are chunked and spoken, progress cue, consult timeout, realtime reply path (brain-options.ts). */
  brain?: BrainOptions;
}

/**
 * The leg's answer to speech over an answer: "interrupted"; "kept" (the policy keeps the answer playing,
 * a protected greeting: the speech is real, and gets a turn of its own once that answer is over);
 * "deferred" (the leg's own gate on echo-cancelled audio decides: the provider's speech may be echo).
 */
export type SpeechOverOutput = (output: TalkOutput) => "interrupted" | "kept" | "deferred";

export const DEFAULT_PERSONA =
  "You are a helpful voice assistant on a live call. Answer briefly, in plain spoken sentences without markup.";

export const PIPELINE_DEFAULTS: Readonly<
  Required<
    Omit<PipelineOptions, "voice" | "language" | "realtimeModel" | "realtimeVoice" | "instructions" | "brain">
  >
> = Object.freeze({
  persona: DEFAULT_PERSONA,
  historyEntries: 10,
  speed: 1,
  silenceTimeoutMs: 0,
  interruptOnSpeech: true,
  maxAppendBytes: 65_536,
  heldAudioMs: 2000,
  outputDeltaIntervalMs: 200,
  inputAppendedIntervalMs: 1000,
  providerAppendMs: 60,
});

export type ResolvedPipelineOptions = typeof PIPELINE_DEFAULTS &
  Pick<PipelineOptions, "voice" | "language" | "realtimeModel" | "realtimeVoice"> & {
    instructions: string;
    brain: ResolvedBrainOptions;
  };

export function resolvePipelineOptions(options: PipelineOptions = {}): ResolvedPipelineOptions {
  const defined = Object.fromEntries(
    Object.entries(options).filter(([, v]) => v !== undefined),
  ) as PipelineOptions;
  const o = { ...PIPELINE_DEFAULTS, ...defined };
  const bad = (field: string, why: string): never => {
    throw new TalkError("config_invalid", `PipelineOptions.${field} ${why}`);
  };
  if (typeof o.persona !== "string" || o.persona.trim() === "") bad("persona", "must be a non-empty string");
  if (!Number.isInteger(o.historyEntries) || o.historyEntries < 0)
    bad("historyEntries", "must be a non-negative integer");
  if (!Number.isFinite(o.speed) || o.speed <= 0) bad("speed", "must be a positive number");
  if (
    !Number.isInteger(o.silenceTimeoutMs) ||
    (o.silenceTimeoutMs !== 0 &&
      (o.silenceTimeoutMs < 100 || o.silenceTimeoutMs > 10_000 || o.silenceTimeoutMs % 10 !== 0))
  ) {
    bad("silenceTimeoutMs", "must be 0 or a multiple of 10 between 100 and 10000");
  }
  if (!Number.isInteger(o.maxAppendBytes) || o.maxAppendBytes < 2)
    bad("maxAppendBytes", "must be an integer >= 2");
  if (!Number.isInteger(o.heldAudioMs) || o.heldAudioMs < 0)
    bad("heldAudioMs", "must be a non-negative integer");
  if (
    !Number.isInteger(o.outputDeltaIntervalMs) ||
    o.outputDeltaIntervalMs < 0 ||
    o.outputDeltaIntervalMs > 10_000
  )
    bad("outputDeltaIntervalMs", "must be an integer between 0 and 10000");
  if (
    !Number.isInteger(o.inputAppendedIntervalMs) ||
    o.inputAppendedIntervalMs < 0 ||
    o.inputAppendedIntervalMs > 10_000
  )
    bad("inputAppendedIntervalMs", "must be an integer between 0 and 10000");
  if (!Number.isInteger(o.providerAppendMs) || o.providerAppendMs < 0 || o.providerAppendMs > 500)
    bad("providerAppendMs", "must be an integer between 0 and 500");
  return { ...o, instructions: o.instructions ?? o.persona, brain: resolveBrainOptions(options.brain) };
}

/**
 * How a pipeline finds its providers. Narrow on purpose: the lead's provider
 * registry/resolver implements it; pipelines never see the registry itself.
 * Returning undefined means "none configured" (provider_not_found when needed).
 */
export interface PipelineProviderResolver {
  stt(session: TalkSession): SttProvider | undefined;
  tts(session: TalkSession): TtsProvider | undefined;
  agent(session: TalkSession): AgentProvider | undefined;
  realtime(session: TalkSession): RealtimeProvider | undefined;
}

/**
 * The narrow part of core's ToolDispatcher a pipeline uses: the one dispatch
 * path for provider tool calls (policy, correlation, terminal tool events).
 */
export interface PipelineToolDispatcher {
  /** Tools offered to a realtime provider session (from trusted config and policy). Default none. */
  readonly definitions?: RealtimeToolDefinition[];
  /**
   * The tools one session can use: `definitions` without those its surface
   * cannot serve (the call tools outside a phone call). Default: `definitions`.
   */
  definitionsFor?(session: TalkSession): RealtimeToolDefinition[];
  /** Where agent_consult reports progress, for realtime progressive speech (agent.realtime.progressive). */
  readonly progress?: ConsultProgressChannel;
  handleProviderCall(session: TalkSession, request: ToolCallRequest): Promise<ToolCallOutcome>;
  /** Runs a server tool (an agent's function call): a name not registered ends tool_not_found, never waits for a client. */
  dispatch(session: TalkSession, request: ToolCallRequest): Promise<ToolCallOutcome>;
  submitToolResult(sessionId: string, callId: string, output: string): void;
}

export interface SessionControllerDeps {
  session: TalkSession;
  providers: PipelineProviderResolver;
  tools?: PipelineToolDispatcher;
  options?: PipelineOptions;
  logger?: TalkLogger;
  /**
   * Format of appendAudio data. Default PCM16_16K. PCM16 for every mode; a
   * realtime session may also use an encoded format (g711_ulaw 8 kHz) that its
   * provider declares in both inputFormats and outputFormats: that audio then
   * passes through to the provider untouched (no transcoding on the hot path).
   */
  inputFormat?: AudioFormat;
  /** Format written to the audio sink. Default PCM16_24K. Same rule as inputFormat. */
  outputFormat?: AudioFormat;
  /**
   * An encoded format the adapter can hand over as is both ways (u-law 8 kHz
   * from a phone line). A realtime session whose provider carries it in both
   * directions uses it for input and output instead of inputFormat and
   * outputFormat (no transcoding on the hot path); any other session ignores
   * it. The controller's `inputFormat` says which was chosen.
   */
  passthrough?: AudioFormat;
  /** Where assistant audio goes; replaceable with setAudioSink. Default: none (audio is dropped, events still flow). */
  sink?: TalkAudioSink;
  /**
   * Speech the pipeline heard while `output` plays (a realtime provider's
   * speech_started, the local STT path's VAD onset): a trigger handed to the
   * media leg, whose one BargeInPolicy decides and which carries the
   * interruption out (the controller's `interrupt`). Absent (a pipeline with
   * no leg, in unit tests): speech interrupts.
   */
  speechOverOutput?: SpeechOverOutput;
  /**
   * Who ends the caller's turns. "leg": the media leg's VAD and endpoint (talk.input.turnEnd "talkgate",
   * stt-tts calls): a realtime provider's turn detection is off for the whole session (`autoRespond:
   * false`), the leg's startTurn / endTurn commit the caller's audio and ask for each answer. Default
   * "pipeline": the provider's turn detection (realtime), the pipeline's silence timer, the client's verbs.
   */
  turns?: "pipeline" | "leg";
  /**
   * The one failure path of the media leg that owns this session: provider
   * failures are reported to it (after the pipeline's own retries) instead of
   * closing the session, and a realtime session reconnects when it says so.
   * Absent (a client's gateway session): a fatal provider failure closes the
   * session with reason "error".
   */
  faults?: PipelineFaults;
}

/** A media leg's failure path as a pipeline sees it. */
export interface PipelineFaults {
  handler: FaultHandler;
  options: ResolvedFaultOptions;
}

export const DEFAULT_INPUT_FORMAT = PCM16_16K;
export const DEFAULT_OUTPUT_FORMAT = PCM16_24K;

/**
 * Pipelines convert PCM16 only; adapters decode and encode carrier codecs at
 * the edge, except for realtime passthrough (see passthroughFormat).
 */
export function assertPcmFormat(format: AudioFormat, what: string): AudioFormat {
  if (
    format.encoding !== "pcm16" ||
    (format.channels !== 1 && format.channels !== 2) ||
    !Number.isInteger(format.sampleRate)
  ) {
    throw new TalkError(
      "config_invalid",
      `${what} must be PCM16 mono or stereo, got ${format.encoding}/${format.sampleRate}/${format.channels}`,
    );
  }
  return format;
}

/**
 * An encoded format (g711) a realtime provider carries natively in both
 * directions: the relay pipeline forwards it as bytes without converting.
 * Anything else encoded is refused: core transcodes only PCM16.
 */
export function assertRealtimeFormat(
  format: AudioFormat,
  what: string,
  accepted: readonly AudioFormat[] | undefined,
): AudioFormat {
  if (format.encoding === "pcm16") return assertPcmFormat(format, what);
  if (accepted?.some((f) => sameAudioFormat(f, format))) return format;
  throw new TalkError(
    "capability_unsupported",
    `${what} ${format.encoding}/${format.sampleRate} passes through only to a realtime provider that declares it; decode to PCM16 at the edge otherwise.`,
  );
}
