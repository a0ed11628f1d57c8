import { randomUUID } from "node:crypto";
import { TalkError } from "./errors.js";
import { TALK_EVENT_TYPE_SET, isTurnBound, isTurnOutput } from "./talk-events.js";
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
  const children = Array.isArray(value) ? value : Object.values(value);
  return children.some((child) => containsBinary(child, depth - 1));
}

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
    if (!TALK_EVENT_TYPE_SET.has(init.type)) {
      throw new TalkError("invalid_params", `Unknown talk event type "${String(init.type)}".`);
    }
    if (isTurnBound(init.type) && !init.turnId) {
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
    if (isTurnOutput(init.type) && init.turnId !== undefined) {
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
    // Built field by field in the contract's order, leaving absent fields out of the JSON.
    const event: TalkEventOf<T> = {
      id: o.newId(),
      type: init.type,
      sessionId: o.sessionId,
      ...(init.turnId !== undefined ? { turnId: init.turnId } : {}),
      ...(captureId !== undefined ? { captureId } : {}),
      seq: this.#seq,
      timestamp: new Date(o.now()).toISOString(),
      mode: o.mode,
      transport: o.transport,
      brain: o.brain,
      ...((init.provider ?? o.provider) !== undefined ? { provider: init.provider ?? o.provider } : {}),
      ...(init.final !== undefined ? { final: init.final } : {}),
      ...(init.callId !== undefined ? { callId: init.callId } : {}),
      ...(init.itemId !== undefined ? { itemId: init.itemId } : {}),
      ...(init.parentId !== undefined ? { parentId: init.parentId } : {}),
      ...((init.source ?? o.source) !== undefined ? { source: init.source ?? o.source } : {}),
      payload: init.payload,
    };
    return event;
  }
}
