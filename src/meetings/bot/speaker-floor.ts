import type { TalkLogger } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import { CAPTURE_RATE } from "./capture-rate.js";
import type { Utterance } from "./utterance-segmenter.js";

/** What the floor feeds: the bot's transcription leg, whose turns the floor decides. */
export interface CaptionInput {
  startTurn(): { id: string };
  endTurn(turnId: string): Promise<void>;
  appendAudio(pcm: Int16Array, format: AudioFormat): void;
}

/** The captured audio as it reaches the floor. */
export const CAPTURE_FORMAT: AudioFormat = Object.freeze({
  encoding: "pcm16",
  sampleRate: CAPTURE_RATE,
  channels: 1,
});

export interface SpeakerFloorContext {
  input: CaptionInput;
  /** Largest appendAudio frame, bytes. */
  maxAppendBytes: number;
  /** Utterances waiting for the floor longer than this much audio in total are dropped, oldest first, ms. */
  maxQueuedMs: number;
  /** A turn now carries this utterance (for speaker attribution). */
  onTurn(turnId: string, utterance: Utterance): void;
  logger: TalkLogger;
}

/**
 * Gives one utterance at a time the bot's transcription session: a turn per
 * utterance, so every transcript line has exactly one speaker. Participants
 * who talk over each other wait their turn (their audio is buffered, bounded
 * by maxQueuedMs) instead of being mixed into one line under a wrong name.
 */
export class SpeakerFloor {
  readonly #ctx: SpeakerFloorContext;
  readonly #queue: Utterance[] = [];
  #holder: Utterance | undefined;
  #idle: (() => void)[] = [];
  #closed = false;

  constructor(ctx: SpeakerFloorContext) {
    this.#ctx = ctx;
  }

  offer(utterance: Utterance): void {
    if (this.#closed) return;
    this.#queue.push(utterance);
    this.#trim();
    this.#next();
  }

  /** Resolves once no utterance holds or waits for the floor (every caption turn has ended). */
  whenIdle(): Promise<void> {
    if (!this.#holder && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  close(): void {
    this.#closed = true;
    this.#queue.length = 0;
    this.#settleIdle();
  }

  #settleIdle(): void {
    const waiters = this.#idle;
    this.#idle = [];
    for (const resolve of waiters) resolve();
  }

  #trim(): void {
    let total = this.#queue.reduce((ms, u) => ms + u.durationMs, 0);
    while (total > this.#ctx.maxQueuedMs && this.#queue.length > 1) {
      const dropped = this.#queue.shift()!;
      total -= dropped.durationMs;
      this.#ctx.logger.warn(
        { trackId: dropped.trackId, ms: dropped.durationMs },
        "meeting: utterance dropped while waiting for the floor",
      );
    }
  }

  #next(): void {
    if (this.#closed || this.#holder) return;
    const utterance = this.#queue.shift();
    if (!utterance) {
      this.#settleIdle();
      return;
    }
    const { input } = this.#ctx;
    let turnId: string;
    try {
      turnId = input.startTurn().id;
    } catch (err) {
      // The session is closing, or the previous turn is still active: retry on the next utterance.
      this.#ctx.logger.debug({ err }, "meeting: could not start a caption turn");
      this.#queue.length = 0;
      this.#settleIdle();
      return;
    }
    this.#holder = utterance;
    this.#ctx.onTurn(turnId, utterance);
    utterance.read(
      (chunk) => this.#append(chunk),
      () => {
        input
          .endTurn(turnId)
          .catch((err: unknown) =>
            this.#ctx.logger.debug({ err, turnId }, "meeting: caption turn did not end cleanly"),
          )
          .finally(() => {
            this.#holder = undefined;
            this.#next();
          });
      },
    );
  }

  #append(chunk: Int16Array): void {
    if (this.#closed) return;
    const max = Math.max(1, Math.floor(this.#ctx.maxAppendBytes / 2));
    try {
      for (let offset = 0; offset < chunk.length; offset += max) {
        this.#ctx.input.appendAudio(chunk.subarray(offset, offset + max), CAPTURE_FORMAT);
      }
    } catch (err) {
      this.#ctx.logger.debug({ err }, "meeting: caption audio dropped");
    }
  }
}
