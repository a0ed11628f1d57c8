import type { TalkLogger } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";
import type { SessionEventListener } from "./coordinator.js";

/**
 * Wraps a subscriber so it sees each seq once and in increasing order, however
 * the backend re-delivers (replay overlapping live events, a re-read after a
 * reconnect). A listener that throws is logged, not allowed to stop delivery.
 */
export interface OrderedListener {
  deliver: (event: TalkEvent) => void;
  /** The highest seq delivered so far (`afterSeq` before the first): where a re-read resumes. */
  readonly lastSeq: number;
}

export function orderedListener(
  afterSeq: number,
  listener: SessionEventListener,
  logger: TalkLogger,
): OrderedListener {
  let lastSeq = afterSeq;
  return {
    deliver(event) {
      if (event.seq <= lastSeq) return;
      lastSeq = event.seq;
      try {
        listener(event);
      } catch (err) {
        logger.error({ err, sessionId: event.sessionId, seq: event.seq }, "event subscriber threw");
      }
    },
    get lastSeq() {
      return lastSeq;
    },
  };
}
