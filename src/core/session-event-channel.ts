import { EventSequencer } from "./event-sequencer.js";
import type { CorrelationState } from "./event-sequencer.js";
import type { TalkLogger } from "./logger.js";
import { ReplayBuffer, replayAgeBound } from "./replay-buffer.js";
import type { TalkEventListener } from "./session-types.js";
import type { TalkEvent, TalkEventInitOf, TalkEventOf, TalkEventType } from "./talk-events.js";
import type { TalkBrain, TalkMode, TalkTransport } from "./talk-types.js";

/** Where a session's events go besides its own subscribers. */
export interface SessionEventSinks {
  /**
   * Durable sink: handed the event before any listener sees it (its disk write may come later: the
   * session log writes in batches, runtime.sessionLogFlushMs).
   */
  log?: { append(event: TalkEvent, line?: string): void; close(): void };
  /** Runtime-wide fan-out (subscribeAll). */
  onEvent?: (event: TalkEvent, line: string) => void;
}

export interface SessionEventChannelOptions {
  id: string;
  mode: TalkMode;
  transport: TalkTransport;
  brain: TalkBrain;
  provider?: string;
  source?: string;
  replayLimit: number;
  /** Serialized bytes kept for replay besides replayLimit events (default: no byte bound). */
  replayMaxBytes?: number;
  /** Events older than this leave the ring beyond its newest 100, ms (0 or absent: no age bound). */
  replayMaxAgeMs?: number;
  logger: TalkLogger;
  hooks?: SessionEventSinks;
}

/**
 * One session's event path: sequence (seq, envelope, stale-turn drop), keep
 * for replay, write to the durable log, then fan out to subscribers and the
 * runtime. A listener or hook that throws is logged and cannot break it.
 */
export class SessionEventChannel {
  readonly #sessionId: string;
  readonly #sequencer: EventSequencer;
  readonly #replay: ReplayBuffer<TalkEvent>;
  readonly #listeners = new Set<TalkEventListener>();
  readonly #sinks: SessionEventSinks;
  readonly #logger: TalkLogger;

  constructor(options: SessionEventChannelOptions) {
    this.#sessionId = options.id;
    this.#sinks = options.hooks ?? {};
    this.#logger = options.logger;
    this.#replay = new ReplayBuffer<TalkEvent>(
      options.replayLimit,
      options.replayMaxBytes,
      replayAgeBound(options.replayMaxAgeMs),
    );
    this.#sequencer = new EventSequencer({
      sessionId: options.id,
      mode: options.mode,
      transport: options.transport,
      brain: options.brain,
      ...(options.provider !== undefined ? { provider: options.provider } : {}),
      ...(options.source !== undefined ? { source: options.source } : {}),
    });
  }

  get lastSeq(): number {
    return this.#sequencer.lastSeq;
  }
  get droppedStale(): number {
    return this.#sequencer.droppedStale;
  }

  publish<T extends TalkEventType>(
    init: TalkEventInitOf<T>,
    correlation: CorrelationState,
  ): TalkEventOf<T> | undefined {
    const typed = this.#sequencer.sequence(init, correlation);
    if (!typed) return undefined;
    // TalkEventOf<T> is one member of the TalkEvent union; TypeScript cannot see that for a generic T.
    const event = typed as TalkEvent;
    // Serialized once: its length bounds the replay ring in bytes, the durable log writes it, and the
    // listeners get it (the cluster's event stream sends or measures it instead of serializing again).
    const line = JSON.stringify(event);
    this.#replay.push(event, line.length);
    this.#sinks.log?.append(event, line);
    for (const listener of this.#listeners) {
      try {
        listener(event, line);
      } catch (err) {
        this.#logger.error(
          { err, sessionId: this.#sessionId, type: event.type },
          "talk event listener threw",
        );
      }
    }
    try {
      this.#sinks.onEvent?.(event, line);
    } catch (err) {
      this.#logger.error({ err, sessionId: this.#sessionId, type: event.type }, "runtime event hook threw");
    }
    return typed;
  }

  replay(afterSeq: number): { events: TalkEvent[]; complete: boolean } {
    return this.#replay.replay(afterSeq);
  }

  subscribe(listener: TalkEventListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** After the last event: drops the subscribers and closes the durable log (a failure is logged). */
  close(): void {
    this.#listeners.clear();
    try {
      this.#sinks.log?.close();
    } catch (err) {
      this.#logger.warn({ err, sessionId: this.#sessionId }, "session log close failed");
    }
  }
}
