/**
 * The latencies a Talk API client feels, measured where the Gateway hands
 * the answer to the client's socket and emitted as `latency.metrics` on the
 * session (source "gateway"), once per answered turn:
 *
 * - `turn_end_to_transcript`: the user's turn ended (`input.audio.committed`,
 *   or the realtime provider's `input.audio.speech_stopped`) -> the user's
 *   final transcript (`transcript.done`).
 * - `turn_end_to_first_text`: -> the answer's first words (`output.text.delta`).
 * - `turn_end_to_first_audio`: -> the answer's first `talk.audio` frame sent.
 *
 * Times are `performance.now()` (monotonic, sub-millisecond).
 */
import type { TalkEvent, TalkSession } from "../core/index.js";

type Mark = "transcript" | "text" | "audio";

const NAMES: Record<Mark, string> = {
  transcript: "turn_end_to_transcript",
  text: "turn_end_to_first_text",
  audio: "turn_end_to_first_audio",
};

/** Turns remembered at once (a session answers one at a time; a few cover overlaps). */
const MAX_TURNS = 8;

export class SessionLatency {
  readonly #session: TalkSession;
  /** turnId -> when it ended and which figures were already emitted. */
  readonly #turns = new Map<string, { endedAt: number; done: Set<Mark> }>();

  constructor(session: TalkSession) {
    this.#session = session;
  }

  /** Feeds every event of the session. */
  observe(event: TalkEvent): void {
    const turnId = event.turnId;
    if (!turnId) return;
    switch (event.type) {
      case "input.audio.committed":
      case "input.audio.speech_stopped":
        if (this.#turns.has(turnId)) return;
        this.#turns.set(turnId, { endedAt: performance.now(), done: new Set() });
        if (this.#turns.size > MAX_TURNS) this.#turns.delete(this.#turns.keys().next().value as string);
        return;
      case "transcript.done":
        if ((event.payload as { role?: string }).role !== "assistant") this.#mark(turnId, "transcript");
        return;
      case "output.text.delta":
        this.#mark(turnId, "text");
        return;
      case "turn.cancelled":
        this.#turns.delete(turnId);
        return;
    }
  }

  /** An audio frame of `turnId` went to the client. */
  audioSent(turnId: string): void {
    this.#mark(turnId, "audio");
    if (this.#turns.get(turnId)?.done.has("audio")) this.#turns.delete(turnId);
  }

  #mark(turnId: string, mark: Mark): void {
    const turn = this.#turns.get(turnId);
    if (!turn || turn.done.has(mark) || this.#session.state !== "active") return;
    turn.done.add(mark);
    const ms = Math.round((performance.now() - turn.endedAt) * 10) / 10;
    // After the event being delivered, so every subscriber sees the session's events in seq order.
    queueMicrotask(() => {
      if (this.#session.state !== "active") return;
      this.#session.emit({
        type: "latency.metrics",
        turnId,
        source: "gateway",
        payload: { name: NAMES[mark], ms },
      });
    });
  }
}
