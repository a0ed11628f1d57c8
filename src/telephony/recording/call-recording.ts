/**
 * A phone call's recording, the same on every carrier: the core recorder
 * (two channels, time-aligned, written every half second) fed from the call's
 * own taps. Caller audio is the line's frames as received; assistant audio is
 * the frames the playout sent on the line, placed as they play, and a
 * `clear` (barge-in) drops what was sent but not yet heard; the carrier's
 * acknowledgements (marks, or the clock for carriers without them) keep what
 * it confirmed played.
 *
 * A file that cannot be written stops the recording with a `session.error`
 * (`recording_failed`) and a log line; the call goes on.
 */
import { join } from "node:path";
import { CallRecorder, recordingName, writeRecordingInfo } from "../../voice/index.js";
import type { TalkLogger, TalkSession } from "../../core/index.js";
import type { RecordingInfo } from "../../voice/index.js";
import { recordsCall, type RecordingPolicy } from "./recording-policy.js";
import type { CallIdentity } from "../call-types.js";
import type { LineAudio } from "../line-audio.js";
import type { PlayoutLine } from "../playout/call-playout.js";

/** The recording of a call that starts now, when the policy records it; undefined otherwise. */
export function startRecording(
  ctx: { recording?: RecordingPolicy | undefined; logger: TalkLogger },
  carrier: { id: string; line: LineAudio },
  call: CallIdentity,
  session: TalkSession,
): CallRecording | undefined {
  const policy = ctx.recording;
  if (!policy || !recordsCall(policy, call)) return undefined;
  return new CallRecording({
    policy,
    session,
    line: carrier.line,
    carrier: carrier.id,
    callId: call.callSid,
    logger: ctx.logger,
  });
}

export interface CallRecordingOptions {
  policy: RecordingPolicy;
  session: TalkSession;
  line: LineAudio;
  /** Names the file: `<carrier>-<callId>.wav`. */
  carrier: string;
  callId: string;
  logger: TalkLogger;
}

export class CallRecording {
  readonly name: string;
  readonly #o: CallRecordingOptions;
  readonly #recorder: CallRecorder;
  /** The sidecar's first write and the `session.updated` that says the call is recorded. */
  #announced: Promise<void> = Promise.resolve();
  readonly #info: RecordingInfo;
  /** Marks sent and not yet acknowledged: name -> end of the assistant audio before the mark. */
  readonly #marks = new Map<string, number>();
  #live: CallRecorder | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: CallRecordingOptions) {
    this.#o = options;
    this.name = recordingName(options.carrier, options.callId);
    const { session } = options;
    this.#info = {
      name: this.name,
      sessionId: session.id,
      startedAt: new Date().toISOString(),
      sampleRate: options.line.pcmFormat.sampleRate,
      channels: ["caller", "assistant"],
      state: "recording",
      metadata: { ...session.metadata },
    };
    this.#recorder = this.#start();
    this.#live = this.#recorder;
  }

  get notice(): string | undefined {
    return this.#o.policy.notice;
  }

  /** Caller audio: one frame in the line's wire format. */
  caller(audio: Uint8Array): void {
    const recorder = this.#live;
    if (!recorder) return;
    try {
      recorder.caller(this.#o.line.toPcm(audio));
    } catch {
      // A payload that is not whole samples: the call drops it too.
    }
  }

  /** The line the playout sends on, tapped: what goes out, the marks and the clears reach the recording. */
  tap(line: PlayoutLine): PlayoutLine {
    const tapped: PlayoutLine = {
      media: (audio) => {
        const recorder = this.#live;
        if (recorder) recorder.assistant(this.#o.line.toPcm(audio));
        line.media(audio);
      },
      mark: (name) => {
        if (this.#live) this.#marks.set(name, this.#live.assistantEnd);
        line.mark(name);
      },
      clear: () => {
        this.#live?.cut();
        this.#marks.clear(); // their echoes acknowledge audio that was dropped
        line.clear();
      },
      dtmf: line.dtmf,
      get bufferedAmount() {
        return line.bufferedAmount;
      },
    };
    if (line.flush) tapped.flush = () => line.flush!();
    return tapped;
  }

  /** The carrier acknowledged a mark: the assistant audio before it played. */
  markPlayed(name: string): void {
    const position = this.#marks.get(name);
    if (position === undefined) return;
    // Acknowledgements come in order: this one covers the marks before it.
    for (const key of this.#marks.keys()) {
      this.#marks.delete(key);
      if (key === name) break;
    }
    this.#live?.confirm(position);
  }

  /** Writes the rest and the sidecar. Idempotent; never rejects (a failure is logged). */
  close(): Promise<void> {
    this.#closing ??= this.#close().catch((err: unknown) =>
      this.#o.logger.warn({ err, recording: this.name }, "recording: closing failed"),
    );
    return this.#closing;
  }

  /**
   * The recorder exists from the call's first frame: its file (and the
   * directory) is opened in the background while the timeline already holds
   * the audio, so the notice's first words are never lost to a slow disk.
   */
  #start(): CallRecorder {
    const { policy, session, logger } = this.#o;
    const recorder = new CallRecorder({
      path: join(policy.dir, `${this.name}.wav`),
      sampleRate: this.#info.sampleRate,
      onFailure: (error) => {
        if (session.state === "active")
          session.emit({ type: "session.error", payload: { ...error.toJSON() }, source: "telephony" });
      },
      logger,
    });
    this.#announced = this.#announce(recorder);
    return recorder;
  }

  /** The sidecar beside the WAV once the recorder has made it (and the directory). */
  async #announce(recorder: CallRecorder): Promise<void> {
    const { session } = this.#o;
    // Not made: the recorder reports recording_failed with the reason; the sidecar is written at the close.
    if (!(await recorder.opened)) return;
    await this.#writeInfo();
    if (session.state === "active" && !this.#closing)
      session.emit({
        type: "session.updated",
        payload: { recording: { state: "recording", name: this.name } },
        source: "telephony",
      });
  }

  async #close(): Promise<void> {
    const recorder = this.#recorder;
    this.#live = undefined;
    await this.#announced;
    const summary = await recorder.close();
    this.#info.state = summary.state;
    this.#info.endedAt = new Date().toISOString();
    this.#info.durationMs = summary.durationMs;
    if (summary.error) this.#info.error = summary.error;
    await this.#writeInfo();
  }

  async #writeInfo(): Promise<void> {
    try {
      await writeRecordingInfo(this.#o.policy.dir, this.#info);
    } catch (err) {
      this.#o.logger.warn(
        { err: (err as Error).message, recording: this.name },
        "recording: the sidecar could not be written",
      );
    }
  }
}
