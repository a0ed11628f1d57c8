import { randomUUID } from "node:crypto";
import { TalkError } from "./errors.js";
import { TALK_EVENT_TYPES, isTurnBound, isTurnOutput } from "./talk-events.js";
import type { TalkEventInitOf, TalkEventOf, TalkEventType } from "./talk-events.js";
import type { TalkBrain, TalkMode, TalkTransport } from "./talk-types.js";

export interface EventSequencerOptions {
  sessionId: string;
  mode: TalkMode;
  transport: TalkTransport;
  brain: TalkBrain;
  /** Stamped on events that do not name a provider (default: none). */
  provider?: string;
  /** Stamped on events that do not name a source (default: none). */
  source?: string;
  /** Milliseconds since the epoch, for timestamps (default: Date.now). */
  now?: () => number;
  /** Event id generator (default: crypto.randomUUID). */
  newId?: () => string;
}

/** What the sequencer needs to know about the session's turn, capture and output state. */
export interface CorrelationState {
  readonly activeCaptureId: string | undefined;
  readonly activeCaptureTurnId: string | undefined;
  /** Whether output of `turnId` may still be delivered (it is the session's current turn). */
  acceptsOutput(turnId: string): boolean;
  /** Whether `itemId` names an output that was cancelled (its late deltas are stale). */
  isCancelledItem(itemId: string): boolean;
}

/** How deep payloads are searched for binary data; payloads are small, shallow objects. */
const BINARY_SCAN_DEPTH = 4;

function containsBinary(value: unknown, depth: number): boolean {
  if (value === null || typeof value !== "object") return false;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof SharedArrayBuffer)
    return true;
  if (depth <= 0) return false;
  if (Array.isArray(value)) {
    for (const child of value) if (containsBinary(child, depth - 1)) return true;
    return false;
  }
  // for...in over own keys: no array of values per event (payloads are plain objects).
  for (const key in value) {
    if (Object.hasOwn(value, key) && containsBinary((value as Record<string, unknown>)[key], depth - 1))
      return true;
  }
  return false;
}

/** Per event type, the rules `sequence` applies: computed once instead of string tests per event. */
const TYPE_RULES: ReadonlyMap<string, { turnBound: boolean; turnOutput: boolean }> = new Map(
  TALK_EVENT_TYPES.map((type) => [type, { turnBound: isTurnBound(type), turnOutput: isTurnOutput(type) }]),
);

/**
 * ISO-8601 timestamps at millisecond resolution, formatted once a second: the date and time up to the
 * second are kept and only the milliseconds are written per event (`Date#toISOString` costs about half a
 * microsecond, a session emits several events a second).
 */
export class IsoTimestamps {
  #second = Number.NaN;
  #prefix = "";

  format(instant: number): string {
    // A Date keeps whole milliseconds, truncated toward zero (an injected clock may give fractions).
    const ms = Math.trunc(instant);
    const second = Math.floor(ms / 1000);
    if (second !== this.#second) {
      const iso = new Date(ms).toISOString();
      // Every year toISOString writes ends in ".mmmZ".
      this.#prefix = iso.slice(0, iso.length - 4);
      this.#second = second;
    }
    const millis = ms - second * 1000;
    return `${this.#prefix}${millis < 10 ? "00" : millis < 100 ? "0" : ""}${millis}Z`;
  }
}

/** Shared by every sequencer of the process: they read the same clock (an injected clock only misses the cache). */
const TIMESTAMPS = new IsoTimestamps();

/**
 * Turns producer-supplied event fields into full envelopes: one per session,
 * it owns the session's `seq` and enforces the correlation rules of seed 001.
 * Stale output (a turn that is no longer current, or a cancelled output item)
 * is dropped and counted instead of delivered.
 */
export class EventSequencer {
  readonly #options: Required<Omit<EventSequencerOptions, "provider" | "source">> &
    Pick<EventSequencerOptions, "provider" | "source">;
  #seq = 0;
  #droppedStale = 0;

  constructor(options: EventSequencerOptions) {
    if (typeof options.sessionId !== "string" || options.sessionId.length === 0) {
      throw new TalkError("config_invalid", "EventSequencer needs a sessionId.");
    }
    this.#options = { now: Date.now, newId: randomUUID, ...options };
  }

  /** Highest seq handed out so far (0 before the first event). */
  get lastSeq(): number {
    return this.#seq;
  }

  /** Events dropped because they were output of a stale turn or cancelled item. */
  get droppedStale(): number {
    return this.#droppedStale;
  }

  /**
   * Builds the envelope for `init`, or returns undefined when the event is
   * stale output. Throws `invalid_params` for an unknown type, a turn-bound
   * event without a turnId, or a payload that carries raw audio bytes.
   */
  sequence<T extends TalkEventType>(
    init: TalkEventInitOf<T>,
    state: CorrelationState,
  ): TalkEventOf<T> | undefined {
    const rules = TYPE_RULES.get(init.type);
    if (rules === undefined) {
      throw new TalkError("invalid_params", `Unknown talk event type "${String(init.type)}".`);
    }
    if (rules.turnBound && !init.turnId) {
      throw new TalkError("invalid_params", `Event "${init.type}" is turn-bound and needs a turnId.`, {
        details: { type: init.type },
      });
    }
    if (containsBinary(init.payload, BINARY_SCAN_DEPTH)) {
      // The transport already carries the audio; events carry metadata only.
      throw new TalkError(
        "invalid_params",
        `Event "${init.type}" payload carries binary data; send metadata only.`,
      );
    }
    if (rules.turnOutput && init.turnId !== undefined) {
      const staleItem =
        init.itemId !== undefined &&
        init.type !== "output.audio.cancelled" &&
        state.isCancelledItem(init.itemId);
      if (!state.acceptsOutput(init.turnId) || staleItem) {
        this.#droppedStale += 1;
        return undefined;
      }
    }

    const o = this.#options;
    let captureId = init.captureId;
    if (
      captureId === undefined &&
      state.activeCaptureId !== undefined &&
      (init.turnId === undefined || init.turnId === state.activeCaptureTurnId)
    ) {
      captureId = state.activeCaptureId;
    }
    this.#seq += 1;
    // Built field by field in the contract's order, leaving absent fields out of the JSON (assigned in
    // order rather than spread from temporary objects: this runs for every event of every session).
    const event: Record<string, unknown> = { id: o.newId(), type: init.type, sessionId: o.sessionId };
    if (init.turnId !== undefined) event.turnId = init.turnId;
    if (captureId !== undefined) event.captureId = captureId;
    event.seq = this.#seq;
    event.timestamp = TIMESTAMPS.format(o.now());
    event.mode = o.mode;
    event.transport = o.transport;
    event.brain = o.brain;
    const provider = init.provider ?? o.provider;
    if (provider !== undefined) event.provider = provider;
    if (init.final !== undefined) event.final = init.final;
    if (init.callId !== undefined) event.callId = init.callId;
    if (init.itemId !== undefined) event.itemId = init.itemId;
    if (init.parentId !== undefined) event.parentId = init.parentId;
    const source = init.source ?? o.source;
    if (source !== undefined) event.source = source;
    event.payload = init.payload;
    return event as unknown as TalkEventOf<T>;
  }
}
