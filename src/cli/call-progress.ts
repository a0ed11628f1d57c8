/**
 * What `talkgate call` knows of the call from its `talk.event` stream: whether an answer is
 * pending or playing, whether the greeting has played, whether the session closed, and the
 * transcript lines to print. One place reads the events; the call loop only asks it questions.
 */
import type { TalkEvent } from "../core/index.js";

/** Printed for a caller turn the recognizer heard no words in (so the call does not wait for an answer). */
export const NO_WORDS = "(no words heard)";

export interface CallProgressIo {
  stdout: (line: string) => void;
  stderr: (line: string) => void;
}

export class CallProgress {
  /** Assistant outputs started since the call began (the greeting is the first). */
  answersStarted = 0;
  /** Assistant outputs that ended (done or cancelled). */
  answersEnded = 0;
  /** A caller turn ended and its answer has not come or ended yet (STT and the agent may take seconds). */
  awaitingAnswer = false;
  sessionClosed = false;
  lastEventAt = performance.now();

  constructor(
    private readonly io: CallProgressIo,
    private readonly debug = false,
  ) {}

  /** Assistant outputs started and not yet done or cancelled. */
  get outputs(): number {
    return Math.max(0, this.answersStarted - this.answersEnded);
  }

  observe(e: TalkEvent): void {
    this.lastEventAt = performance.now();
    if (this.debug) this.io.stderr(`event ${e.type} ${JSON.stringify(e.payload).slice(0, 120)}`);
    switch (e.type) {
      case "turn.ended":
        this.awaitingAnswer = true;
        break;
      case "turn.cancelled":
      case "session.error":
        this.awaitingAnswer = false;
        break;
      case "output.audio.started":
        this.answersStarted++;
        break;
      case "output.audio.done":
      case "output.audio.cancelled":
        this.awaitingAnswer = false;
        this.answersEnded++;
        if (e.type === "output.audio.cancelled") this.io.stdout("(assistant interrupted)");
        break;
      case "transcript.done":
        this.#transcript(e);
        break;
      case "output.text.done":
        this.io.stdout(`assistant: ${String(e.payload.text ?? "")}`);
        break;
      case "latency.metrics":
        this.io.stderr(`latency ${String(e.payload.name)}: ${String(e.payload.ms)} ms`);
        break;
      case "session.closed":
        this.sessionClosed = true;
        this.io.stderr(`session closed: ${String(e.payload.reason)}`);
        break;
    }
  }

  #transcript(e: TalkEvent<"transcript.done">): void {
    const text = String(e.payload.text ?? "").trim();
    if (e.payload.role !== "user") {
      this.io.stdout(`assistant: ${text}`);
      return;
    }
    // A turn with no words gets no answer: say so, and stop waiting for one.
    if (!text) this.awaitingAnswer = false;
    this.io.stdout(`caller: ${text || NO_WORDS}`);
  }
}
