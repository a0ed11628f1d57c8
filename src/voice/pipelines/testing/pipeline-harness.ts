import type { AudioChunk } from "../../../core/index.js";
import { audioByteLength } from "../../../core/index.js";
import type { TalkEvent, TalkEventType } from "../../../core/index.js";
import type { TalkSession } from "../../../core/index.js";
import type { TerminalReason } from "../../../core/index.js";
import type { TalkAudioSink } from "../controller-types.js";

/** Test helpers for pipelines: an event recorder and a recording sink. Not part of the layer's API. */

export class EventLog {
  readonly events: TalkEvent[] = [];
  readonly #waiters: { type: TalkEventType; resolve: (e: TalkEvent) => void }[] = [];

  constructor(session: TalkSession) {
    session.subscribe((event) => {
      this.events.push(event);
      for (const w of [...this.#waiters]) {
        if (w.type === event.type) {
          this.#waiters.splice(this.#waiters.indexOf(w), 1);
          w.resolve(event);
        }
      }
    });
  }

  /** The first event of `type`, already seen or still to come. */
  next(type: TalkEventType): Promise<TalkEvent> {
    const seen = this.events.find((e) => e.type === type);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.#waiters.push({ type, resolve }));
  }

  ofType(type: TalkEventType): TalkEvent[] {
    return this.events.filter((e) => e.type === type);
  }

  types(): TalkEventType[] {
    return this.events.map((e) => e.type);
  }
}

export type SinkEntry =
  | { kind: "write"; chunk: AudioChunk; turnId: string; itemId: string }
  | { kind: "clear"; turnId: string; itemId?: string; reason: TerminalReason };

export class RecordingSink implements TalkAudioSink {
  readonly entries: SinkEntry[] = [];
  #onFirstWrite: (() => void) | undefined;
  /** Resolves on the first write (in the same tick, before the matching delta event). */
  readonly firstWrite = new Promise<void>((resolve) => (this.#onFirstWrite = resolve));

  write(chunk: AudioChunk, meta: { turnId: string; itemId: string }): void {
    this.entries.push({ kind: "write", chunk, ...meta });
    this.#onFirstWrite?.();
    this.#onFirstWrite = undefined;
  }

  clear(meta: { turnId: string; itemId?: string; reason: TerminalReason }): void {
    this.entries.push({ kind: "clear", ...meta });
  }

  get writes(): Extract<SinkEntry, { kind: "write" }>[] {
    return this.entries.filter((e): e is Extract<SinkEntry, { kind: "write" }> => e.kind === "write");
  }

  get bytes(): number {
    return this.writes.reduce((n, w) => n + audioByteLength(w.chunk), 0);
  }
}
