import { TalkError, toTalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { TalkSession } from "../../core/index.js";
import type { TerminalReason } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import type { TalkAudioSink } from "./controller-types.js";

/**
 * Checks an appendAudio frame at the boundary. Returns false for an empty
 * frame (nothing to do). Throws session_closed, invalid_audio or payload_too_large.
 */
export function checkAppend(
  session: TalkSession,
  data: unknown,
  format: AudioFormat,
  maxBytes: number,
): data is Uint8Array {
  checkOpen(session);
  if (!(data instanceof Uint8Array)) throw new TalkError("invalid_audio", "Audio must be bytes.");
  // One sample per channel per frame: 2 bytes for PCM16, 1 for G.711 (realtime passthrough).
  const frameBytes = (format.encoding === "pcm16" ? 2 : 1) * format.channels;
  return checkFrame(data.byteLength, frameBytes, format, maxBytes);
}

/**
 * Checks an appendPcm frame: the session's input format must be PCM16 and the
 * frame whole samples of every channel. Returns false for an empty frame.
 */
export function checkAppendPcm(
  session: TalkSession,
  pcm: unknown,
  format: AudioFormat,
  maxBytes: number,
): pcm is Int16Array {
  checkOpen(session);
  if (!(pcm instanceof Int16Array)) throw new TalkError("invalid_audio", "PCM audio must be an Int16Array.");
  if (format.encoding !== "pcm16") {
    throw new TalkError(
      "invalid_audio",
      `The session's input is ${format.encoding}: send it as bytes (appendAudio), not as PCM samples.`,
    );
  }
  return checkFrame(pcm.byteLength, 2 * format.channels, format, maxBytes);
}

function checkOpen(session: TalkSession): void {
  if (session.state !== "active") {
    throw new TalkError("session_closed", undefined, { details: { sessionId: session.id } });
  }
}

/** Size rules of one input frame; false for an empty one. */
function checkFrame(bytes: number, frameBytes: number, format: AudioFormat, maxBytes: number): boolean {
  if (bytes === 0) return false;
  if (bytes > maxBytes) {
    throw new TalkError("payload_too_large", `An audio frame may carry at most ${maxBytes} bytes.`, {
      details: { bytes },
    });
  }
  if (bytes % frameBytes !== 0) {
    throw new TalkError(
      "invalid_audio",
      `${format.encoding} frames are ${frameBytes} bytes; got ${bytes} bytes.`,
    );
  }
  return true;
}

/** The replaceable audio sink of a session; a sink that throws cannot break the pipeline. */
export class SinkSlot {
  #sink: TalkAudioSink | undefined;
  /** The guarded view of #sink, made once per sink: output stages ask for it on every audio chunk. */
  #view: TalkAudioSink | undefined;
  readonly #logger: TalkLogger;
  readonly #sessionId: string;

  constructor(sink: TalkAudioSink | undefined, logger: TalkLogger, sessionId: string) {
    this.#logger = logger;
    this.#sessionId = sessionId;
    this.set(sink);
  }

  set(sink: TalkAudioSink | undefined): void {
    this.#sink = sink;
    this.#view = sink ? this.#guard(sink) : undefined;
  }

  /** A guarded view handed to output stages. */
  readonly current = (): TalkAudioSink | undefined => this.#view;

  #guard(sink: TalkAudioSink): TalkAudioSink {
    return {
      write: (chunk, meta) => {
        try {
          sink.write(chunk, meta);
        } catch (err) {
          this.#logger.warn(
            { err, sessionId: this.#sessionId, turnId: meta.turnId },
            "audio sink write threw",
          );
        }
      },
      clear: (meta) => this.clear(meta),
      drained: (itemId, signal) => this.drained(itemId, signal),
      // What the listener heard (a held answer resumes there); absent when the sink cannot say.
      ...(typeof sink.heardMs === "function"
        ? { heardMs: (itemId: string) => this.#heardMs(sink, itemId) }
        : {}),
    };
  }

  #heardMs(sink: TalkAudioSink, itemId: string): number | undefined {
    try {
      return sink.heardMs?.(itemId);
    } catch (err) {
      this.#logger.warn({ err, sessionId: this.#sessionId }, "audio sink heardMs threw");
      return undefined;
    }
  }

  /** True when the sink confirms playback (drained); otherwise written counts as heard. */
  get confirmsPlayback(): boolean {
    return typeof this.#sink?.drained === "function";
  }

  /** The sink's playback confirmation; resolves at once without one, or when it throws. */
  async drained(itemId: string, signal: AbortSignal): Promise<void> {
    const sink = this.#sink;
    if (!sink?.drained || signal.aborted) return;
    try {
      await sink.drained(itemId, signal);
    } catch (err) {
      this.#logger.warn({ err, sessionId: this.#sessionId, itemId }, "audio sink drained threw");
    }
  }

  /** What the listener heard of the item, when the sink knows; undefined otherwise. */
  heardMs(itemId: string): number | undefined {
    try {
      return this.#sink?.heardMs?.(itemId);
    } catch (err) {
      this.#logger.warn({ err, sessionId: this.#sessionId, itemId }, "audio sink heardMs threw");
      return undefined;
    }
  }

  clear(meta: { turnId: string; itemId?: string; reason: TerminalReason }): void {
    try {
      this.#sink?.clear(meta);
    } catch (err) {
      this.#logger.warn({ err, sessionId: this.#sessionId, turnId: meta.turnId }, "audio sink clear threw");
    }
  }
}

/**
 * Closes the session and clears from the sink the output it was playing
 * (session.close aborts every signal synchronously, so the sink can be
 * cleared at once). Resolves when the session has closed.
 */
export function closeSessionClearingOutput(
  session: TalkSession,
  sink: SinkSlot,
  reason: TerminalReason,
): Promise<void> {
  const output = session.activeOutput;
  const closed = session.close(reason);
  if (output) sink.clear({ turnId: output.turnId, itemId: output.itemId, reason });
  return closed;
}

/**
 * A provider failed a turn: say so with a `session.error` event and cancel
 * the turn with reason "error" (its one terminal event), so clients never
 * wait for an answer that will not come.
 */
export function failTurn(session: TalkSession, logger: TalkLogger, turnId: string, err: unknown): void {
  const error = toTalkError(err, "provider_error");
  logger.warn({ err, sessionId: session.id, turnId, code: error.code }, "pipeline turn failed");
  if (session.state !== "active") return;
  session.emit({ type: "session.error", turnId, payload: { ...error.toJSON() } });
  try {
    session.cancelTurn(turnId, "error");
  } catch (cancelErr) {
    // Already superseded by a newer turn: that turn is not ours to cancel.
    logger.debug({ err: cancelErr, sessionId: session.id, turnId }, "failed turn was already gone");
  }
}

export function isCancellation(err: unknown, signal?: AbortSignal): boolean {
  return (err instanceof TalkError && err.code === "cancelled") || signal?.aborted === true;
}
