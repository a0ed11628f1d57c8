import { TalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { AgentProvider, RealtimeVoiceSession, SttProvider } from "../../core/index.js";
import type { TalkSession, TalkTurn } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import { DEFAULT_LOCAL_END_OF_SPEECH_MS, LocalSpeechTurns } from "./local-speech-turns.js";
import type {
  PipelineToolDispatcher,
  ResolvedPipelineOptions,
  SpeechOverOutput,
} from "./pipeline-options.js";
import type { ProgressiveSpeech } from "./progressive-speech.js";
import { LocalReplies } from "./realtime-local-replies.js";

/** What a realtime session's outboard ASR needs from its pipeline: narrow, no back-reference to it. */
export interface RealtimeLocalPathContext {
  session: TalkSession;
  path: "bridge" | "brain";
  stt?: SttProvider | undefined;
  agent?: AgentProvider | undefined;
  tools: PipelineToolDispatcher | undefined;
  options: ResolvedPipelineOptions;
  /** PCM16: what the caller's samples arrive as. */
  inputFormat: AudioFormat;
  logger: TalkLogger;
  /** The VAD heard speech over the answer that plays: the media leg decides and interrupts (true) or not. */
  speechOverOutput: SpeechOverOutput;
  speech: ProgressiveSpeech;
  voice(): RealtimeVoiceSession | undefined;
  /** A provider response is in progress. */
  responding(): boolean;
  /** bridge: the caller's words join the conversation a reconnected provider session is given. */
  remember(text: string): void;
}

/**
 * Reply paths bridge and brain: the caller's audio goes to the local STT
 * (LocalSpeechTurns), whose transcripts LocalReplies answers. Speech the
 * local VAD hears while the assistant answers is a trigger for the media
 * leg as on the native path (its one BargeInPolicy decides), and a turn of
 * its own.
 */
export function createLocalPath(ctx: RealtimeLocalPathContext): LocalSpeechTurns {
  const { session, stt, options } = ctx;
  if (!stt)
    throw new TalkError("capability_unsupported", `Reply path "${ctx.path}" needs an STT provider.`, {
      details: { field: "replyPath", reason: "no_stt_provider" },
    });
  const replies = new LocalReplies({
    session,
    path: ctx.path,
    voice: ctx.voice,
    speech: ctx.speech,
    agent: ctx.agent,
    tools: ctx.tools,
    options,
    logger: ctx.logger,
    remember: ctx.remember,
  });
  return new LocalSpeechTurns({
    session,
    stt,
    inputFormat: ctx.inputFormat,
    language: options.language,
    endOfSpeechMs: options.silenceTimeoutMs || DEFAULT_LOCAL_END_OF_SPEECH_MS,
    inputAppendedIntervalMs: options.inputAppendedIntervalMs,
    logger: ctx.logger,
    speechStarted: () => speechStarted(ctx),
    heard: (turn, text) => replies.heard(turn, text),
  });
}

/**
 * The local VAD heard the caller start speaking: what plays is interrupted
 * when the leg's barge-in policy says so (else the speech is only noted and
 * not captured), a response under way is cancelled, and the speech gets a
 * turn of its own, superseding the previous one (its consult stops).
 */
function speechStarted(ctx: RealtimeLocalPathContext): TalkTurn | undefined {
  const { session } = ctx;
  const output = session.activeOutput;
  if (output && ctx.speechOverOutput(output) !== "interrupted") {
    session.emit({ type: "input.audio.speech_started", turnId: output.turnId, payload: {} });
    return undefined;
  }
  if (!output && ctx.responding()) ctx.voice()?.cancelResponse();
  const current = session.activeTurn;
  const turn = current?.state === "active" ? current : session.startTurn({ reason: "barge_in" });
  session.emit({ type: "input.audio.speech_started", turnId: turn.id, payload: {} });
  return turn;
}
