import type { TalkLogger } from "../../core/index.js";
import type { TalkSession } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import { durationMs } from "../../core/index.js";

/** What the reporter needs: narrow, no back-reference to the pipeline. */
export interface InputAudioEventsContext {
  session: TalkSession;
  /** Format of the audio counted: the session's input format (what the client or the leg appended). */
  format: AudioFormat;
  /** Audio per event, ms of audio (PipelineOptions.inputAppendedIntervalMs); 0 reports every append. */
  intervalMs: number;
  logger: TalkLogger;
}

/**
 * `input.audio.appended`: how much caller audio reached the realtime provider
 * or the recognizer, as metadata (`bytes`, `durationMs` in the session's
 * input format). A phone line delivers a frame every 20 ms; one event per
 * frame would be 50 events a second for nothing the transport does not carry
 * already, so appends are coalesced in audio time: an event is emitted once
 * `intervalMs` of audio is pending, and what is left is reported when the
 * turn changes and by `flush()` (the end of a turn, the session's close), so
 * the byte counts add up to what was appended. Audio time rather than the
 * wall clock: the number of events follows the audio (at most one per
 * `intervalMs` of it), whether it arrives in real time from a phone or in
 * bursts from a client. The event carries the turn the audio was captured
 * in, when one was capturing; between turns it has none (the type is not
 * turn-bound).
 */
export class InputAudioEvents {
  readonly #ctx: InputAudioEventsContext;
  #bytes = 0;
  #turnId: string | undefined;

  constructor(ctx: InputAudioEventsContext) {
    this.#ctx = ctx;
  }

  /** `bytes` of input (in the session's input format) were appended to the provider or recognizer. */
  appended(bytes: number): void {
    if (bytes <= 0) return;
    const turn = this.#ctx.session.activeTurn;
    const turnId = turn?.state === "active" ? turn.id : undefined;
    if (this.#bytes > 0 && turnId !== this.#turnId) this.flush();
    this.#turnId = turnId;
    this.#bytes += bytes;
    const ms = durationMs(this.#ctx.format, this.#bytes);
    // A format without a known byte rate (none a pipeline takes today) cannot be measured: each append is reported.
    if (ms >= this.#ctx.intervalMs || ms === 0) this.flush();
  }

  /** Reports what is pending (nothing when nothing is); never throws. */
  flush(): void {
    const bytes = this.#bytes;
    if (bytes === 0) return;
    const turnId = this.#turnId;
    this.#bytes = 0;
    this.#turnId = undefined;
    const { session, format, logger } = this.#ctx;
    if (session.state !== "active") return;
    const ms = durationMs(format, bytes);
    try {
      session.emit({
        type: "input.audio.appended",
        ...(turnId !== undefined ? { turnId } : {}),
        payload: { bytes, ...(ms > 0 ? { durationMs: ms } : {}) },
      });
    } catch (err) {
      // Metadata only: a refused event never breaks the audio path.
      logger.debug({ err, sessionId: session.id }, "input.audio.appended not emitted");
    }
  }
}
