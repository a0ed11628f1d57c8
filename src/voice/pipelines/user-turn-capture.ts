import type { TalkLogger } from "../../core/index.js";
import type { SttProvider } from "../../core/index.js";
import type { TalkSession, TalkTurn } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import type { ResolvedPipelineOptions } from "./pipeline-options.js";
import { InputAudioEvents } from "./input-audio-events.js";
import { failTurn } from "./pipeline-support.js";
import { PartialTracker, SttCapture } from "./stt-capture.js";

/** What starting a user turn's capture needs from its pipeline. */
export interface UserTurnCaptureDeps {
  session: TalkSession;
  /** Format of the bytes the pipeline writes to the capture. */
  inputFormat: AudioFormat;
  options: Pick<ResolvedPipelineOptions, "language" | "silenceTimeoutMs" | "inputAppendedIntervalMs">;
  logger: TalkLogger;
  /** How a recognizer failure fails the turn. Default failTurn (session.error, turn cancelled). */
  fail?(turnId: string, err: unknown): void;
}

/**
 * Starts the session's capture for `turn` and the speech-to-text behind it,
 * as both STT pipelines do: partials become `transcript.delta` events, the
 * end of speech calls `endTurn` while the turn is still the active one, the
 * audio written to the recognizer is reported in coalesced
 * `input.audio.appended` events, and a recognizer failure fails the turn.
 */
export function startUserTurnCapture(
  deps: UserTurnCaptureDeps,
  stt: SttProvider,
  turn: TalkTurn,
  endTurn: (turnId: string) => Promise<void>,
): SttCapture {
  const { session, logger } = deps;
  session.startCapture(turn.id);
  const partials = new PartialTracker();
  return new SttCapture(
    {
      session,
      stt,
      inputFormat: deps.inputFormat,
      language: deps.options.language,
      silenceTimeoutMs: deps.options.silenceTimeoutMs,
      logger,
      inputEvents: new InputAudioEvents({
        session,
        format: deps.inputFormat,
        intervalMs: deps.options.inputAppendedIntervalMs,
        logger,
      }),
      onPartial: (turnId, text) => {
        const delta = partials.next(text);
        if (!delta) return;
        session.emit({
          type: "transcript.delta",
          turnId,
          payload: { role: "user", text: delta.text, ...(delta.replace ? { replace: true } : {}) },
        });
      },
      onEndOfSpeech: (turnId) => {
        if (session.activeTurn?.id === turnId && session.activeTurn.state === "active") {
          endTurn(turnId).catch((err: unknown) =>
            logger.debug({ err, turnId }, "automatic endTurn lost a race"),
          );
        }
      },
      onError: (turnId, err) => (deps.fail ? deps.fail(turnId, err) : failTurn(session, logger, turnId, err)),
    },
    turn,
  );
}
