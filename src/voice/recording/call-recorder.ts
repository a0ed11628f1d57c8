/**
 * One call's recording: a two-channel 16-bit WAV file (channel 1 the caller
 * as received, channel 2 the assistant as played), time-aligned on one clock
 * (RecordingTimeline) and written every `flushIntervalMs` (WavFileWriter), so
 * a crash loses about the last second at most.
 *
 * The adapter hands it PCM: caller audio as it arrives, assistant audio as it
 * goes to the line, what the far end confirmed played, and clears. It knows
 * nothing of carriers, marks or sockets.
 *
 * A file that cannot be written (a full disk, permissions) stops the
 * recording, logs it and reports it once through `onFailure`; it never throws
 * into the call.
 */
import { TalkError, toTalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import { RecordingTimeline } from "./recording-timeline.js";
import { WavFileWriter } from "./wav-file-writer.js";

export interface CallRecorderOptions {
  /** The file (created or truncated). */
  path: string;
  /** Sample rate of both tracks (the line's PCM). */
  sampleRate: number;
  /** Samples are written this often, ms. Default 500 (with the caller's lag: at most ~1 s lost in a crash). */
  flushIntervalMs?: number;
  /** Caller audio arriving up to this late still joins the audio before it, ms. Default 500. */
  callerLagMs?: number;
  /** Clock in ms (monotonic). Default performance.now. */
  now?: () => number;
  /** Called once when the file cannot be written; the recording has stopped. */
  onFailure?(error: TalkError): void;
  logger: TalkLogger;
}

export type CallRecorderState = "recording" | "failed" | "closed";

/** What a finished recording holds. */
export interface CallRecordingSummary {
  state: "complete" | "failed";
  durationMs: number;
  bytes: number;
  error?: { code: string; message: string };
}

export class CallRecorder {
  readonly path: string;
  readonly #o: CallRecorderOptions;
  readonly #timeline: RecordingTimeline;
  readonly #now: () => number;
  readonly #startedAt: number;
  readonly #timer: NodeJS.Timeout;
  readonly #file: Promise<WavFileWriter | undefined>;
  #state: CallRecorderState = "recording";
  /** Writes run one after the other; a flush asked while one waits is the same flush. */
  #writes: Promise<void> = Promise.resolve();
  #flushQueued = false;
  #error: TalkError | undefined;
  #closing: Promise<CallRecordingSummary> | undefined;

  constructor(options: CallRecorderOptions) {
    const interval = options.flushIntervalMs ?? 500;
    if (!Number.isInteger(interval) || interval < 50 || interval > 10_000)
      throw new TalkError("config_invalid", "flushIntervalMs must be an integer in 50..10000.");
    this.#o = options;
    this.path = options.path;
    this.#timeline = new RecordingTimeline({
      sampleRate: options.sampleRate,
      ...(options.callerLagMs !== undefined ? { callerLagMs: options.callerLagMs } : {}),
    });
    this.#now = options.now ?? (() => performance.now());
    this.#startedAt = this.#now();
    const format = { sampleRate: options.sampleRate, channels: 2 };
    this.#file = WavFileWriter.create(options.path, format).catch((err: unknown) => {
      this.#fail(err);
      return undefined;
    });
    this.#timer = setInterval(() => void this.flush(), interval);
    this.#timer.unref();
  }

  /** Resolves true once the file (and its directory) exists with its header, false when it could not be made. */
  get opened(): Promise<boolean> {
    return this.#file.then((file) => file !== undefined);
  }

  get state(): CallRecorderState {
    return this.#state;
  }

  /** Caller audio as received (the line's PCM). */
  caller(pcm: Int16Array): void {
    if (this.#state === "recording") this.#timeline.caller(pcm, this.#position());
  }

  /** Assistant audio as it goes to the line; returns the position it ends at (for `confirm`). */
  assistant(pcm: Int16Array): number {
    if (this.#state === "recording") this.#timeline.assistant(pcm, this.#position());
    return this.#timeline.assistantEnd;
  }

  /** The end of the assistant audio so far (what a playback acknowledgement sent now covers). */
  get assistantEnd(): number {
    return this.#timeline.assistantEnd;
  }

  /** The far end confirmed the assistant audio before `position` played. */
  confirm(position: number): void {
    this.#timeline.confirm(position);
  }

  /** The line was cleared: the assistant audio sent and not yet played is not in the recording. */
  cut(): void {
    if (this.#state === "recording") this.#timeline.cut(this.#position());
  }

  /** Writes what can no longer change. Resolves when written (or failed: see state). */
  flush(): Promise<void> {
    if (this.#state !== "recording" || this.#flushQueued) return this.#writes;
    this.#flushQueued = true;
    return this.#write(() => {
      this.#flushQueued = false;
      return this.#timeline.take(this.#timeline.finalPosition(this.#position()));
    });
  }

  /** Writes the rest (assistant audio never played left out) and closes the file. Idempotent. */
  close(): Promise<CallRecordingSummary> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<CallRecordingSummary> {
    clearInterval(this.#timer);
    if (this.#state === "recording") {
      const now = this.#position();
      await this.#write(() => this.#timeline.takeRest(now));
    }
    const file = await this.#file;
    let bytes = 0;
    if (file) {
      bytes = file.dataBytes;
      await file.close().catch((err: unknown) => this.#fail(err));
    }
    const failed = this.#state === "failed";
    this.#state = failed ? "failed" : "closed";
    const durationMs = Math.round((bytes / 4 / this.#o.sampleRate) * 1000);
    const error = this.#error;
    return {
      state: failed ? "failed" : "complete",
      durationMs,
      bytes,
      ...(error ? { error: { code: error.code, message: error.message } } : {}),
    };
  }

  #write(samples: () => Int16Array): Promise<void> {
    this.#writes = this.#writes.then(async () => {
      const file = await this.#file;
      if (!file || this.#state === "failed") return;
      try {
        await file.append(samples());
      } catch (err) {
        this.#fail(err);
      }
    });
    return this.#writes;
  }

  #position(): number {
    return Math.floor(((this.#now() - this.#startedAt) * this.#o.sampleRate) / 1000);
  }

  #fail(err: unknown): void {
    if (this.#state === "failed") return;
    this.#state = "failed";
    clearInterval(this.#timer);
    const cause = err as NodeJS.ErrnoException;
    const reason = typeof cause?.code === "string" ? cause.code : toTalkError(err).code;
    this.#error = new TalkError(
      "recording_failed",
      `The call recording could not be written (${reason}); recording stopped, the call goes on.`,
      { cause: err, details: { reason } },
    );
    this.#o.logger.error(
      { err: cause?.message ?? String(err), reason, path: this.path },
      "recording: the file could not be written, recording stopped",
    );
    void this.#file.then((file) => file?.close().catch(() => {}));
    try {
      this.#o.onFailure?.(this.#error);
    } catch (listenerErr) {
      this.#o.logger.warn({ err: listenerErr }, "recording: the failure listener threw");
    }
  }
}
