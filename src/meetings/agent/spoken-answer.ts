import type { TalkEvent, TerminalReason } from "../../core/index.js";

/** One answer as the meeting heard it: what goes into the transcript with the bot as speaker. */
export interface SpokenAnswer {
  /** The answering session's turn and output item. */
  turnId: string;
  itemId: string;
  /** Epoch ms the meeting began to hear it. */
  startedAt: number;
  /** The words the meeting heard: the whole answer, or up to where it was cut. */
  text: string;
  /** Cut before its end (barge-in, a new question, the bot leaving); `text` is then the part heard. */
  interrupted: boolean;
  /** Why it was cut (e.g. `barge_in`); only when interrupted. */
  reason?: TerminalReason;
}

interface Segment {
  text: string;
  /** Playout interval on the sink's clock, epoch ms. */
  start: number;
  end: number;
}

interface OpenAnswer {
  turnId: string;
  itemId: string;
  segments: Map<number, Segment>;
}

/**
 * Follows the assistant session's events and the page's playout clock, and
 * reports each answer once it ends, as heard. Each `output.audio.delta` is
 * emitted right after its audio was written to the sink, so the sink's
 * playhead then is where that audio ends in the meeting; the delta's
 * `segment` / `segmentText` say which chunk of the answer it speaks. At the
 * answer's end:
 *
 * - `output.audio.done` (the sink drained: done means heard): every chunk.
 * - `output.audio.cancelled`, or `turn.cancelled` / `session.closed` with the
 *   output still going: the chunks heard in full by then, plus the words of
 *   the chunk being played in proportion to how much of its audio was heard
 *   (whole words only, so never more than was said), marked interrupted.
 *
 * An answer cut before any of it was heard is not reported: nothing was said.
 */
export class SpokenAnswerTracker {
  readonly #playhead: () => number;
  readonly #now: () => number;
  readonly #onSpoken: (answer: SpokenAnswer) => void;
  readonly #open = new Map<string, OpenAnswer>();

  constructor(options: {
    /** The sink's clock: epoch ms until which written audio plays (PageAudioSink.audibleUntil). */
    playhead: () => number;
    onSpoken: (answer: SpokenAnswer) => void;
    now?: () => number;
  }) {
    this.#playhead = options.playhead;
    this.#onSpoken = options.onSpoken;
    this.#now = options.now ?? Date.now;
  }

  observe(event: TalkEvent): void {
    switch (event.type) {
      case "output.audio.delta":
        this.#delta(event);
        break;
      case "output.audio.done":
        if (event.itemId) this.#finish(event.itemId, undefined);
        break;
      case "output.audio.cancelled":
        if (event.itemId) this.#finish(event.itemId, reasonOf(event.payload) ?? "cancelled");
        break;
      case "turn.cancelled":
        for (const open of [...this.#open.values()])
          if (open.turnId === event.turnId) this.#finish(open.itemId, reasonOf(event.payload) ?? "cancelled");
        break;
      case "session.closed":
        for (const itemId of [...this.#open.keys()])
          this.#finish(itemId, reasonOf(event.payload) ?? "cancelled");
        break;
    }
  }

  #delta(event: TalkEvent<"output.audio.delta">): void {
    const { itemId, turnId, payload } = event;
    if (!itemId || !turnId) return;
    const durationMs = payload.durationMs;
    if (!(durationMs > 0)) return;
    let open = this.#open.get(itemId);
    if (!open) {
      open = { turnId, itemId, segments: new Map() };
      this.#open.set(itemId, open);
    }
    const index = payload.segment ?? 0;
    const end = this.#playhead();
    const start = end - durationMs;
    const segment = open.segments.get(index);
    if (!segment) {
      open.segments.set(index, { text: payload.segmentText ?? "", start, end });
    } else {
      segment.start = Math.min(segment.start, start);
      segment.end = Math.max(segment.end, end);
      if (segment.text === "" && payload.segmentText) segment.text = payload.segmentText;
    }
  }

  /** `reason` undefined: the answer played to its end. */
  #finish(itemId: string, reason: TerminalReason | undefined): void {
    const open = this.#open.get(itemId);
    if (!open) return;
    this.#open.delete(itemId);
    const segments = [...open.segments.entries()].sort(([a], [b]) => a - b).map(([, s]) => s);
    const first = segments[0];
    if (!first) return;
    const heardUntil = reason === undefined ? Infinity : this.#now();
    if (first.start >= heardUntil) return; // cut before the meeting heard anything
    const words: string[] = [];
    for (const s of segments) {
      if (s.end <= heardUntil) {
        words.push(s.text.trim());
        continue;
      }
      if (s.start < heardUntil) words.push(heardPrefix(s.text, (heardUntil - s.start) / (s.end - s.start)));
      break;
    }
    const text = words.filter((w) => w !== "").join(" ");
    this.#onSpoken({
      turnId: open.turnId,
      itemId,
      startedAt: first.start,
      text,
      interrupted: reason !== undefined,
      ...(reason !== undefined ? { reason } : {}),
    });
  }
}

/**
 * The words of `text` said in the first `fraction` of its audio (speech rate
 * taken as even across the chunk): whole words only, never a word cut short.
 */
export function heardPrefix(text: string, fraction: number): string {
  const trimmed = text.trim();
  if (fraction >= 1) return trimmed;
  if (!(fraction > 0)) return "";
  const cut = Math.floor(trimmed.length * fraction);
  // A word counts as heard once its last character is within the heard part.
  const next = trimmed.charAt(cut);
  if (next === "" || /\s/.test(next)) return trimmed.slice(0, cut).trimEnd();
  const before = trimmed.slice(0, cut);
  const space = before.search(/\s\S*$/);
  return space < 0 ? "" : before.slice(0, space).trimEnd();
}

function reasonOf(payload: { reason?: unknown }): TerminalReason | undefined {
  return typeof payload.reason === "string" ? payload.reason : undefined;
}
