import { ReplyError, type Redis } from "ioredis";
import type { TalkLogger } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";
import type { SessionLostEvent } from "./coordinator.js";
import type { RedisKeys } from "./redis-connection.js";

/** A subscriber as the reader sees it: where it is, and how to hand it an event. */
export interface StreamSubscriber {
  readonly lastSeq: number;
  deliver(event: TalkEvent): void;
}

export interface EventStreamContext {
  /** Shared command connection: XADD, CLIENT UNBLOCK. */
  commands: Redis;
  /** Dedicated connection: only ever runs the blocking XREAD. */
  reader: Redis;
  keys: RedisKeys;
  /** Entries kept per session stream (XADD MAXLEN ~). */
  retention: number;
  /** Events held while Redis is down; the oldest are dropped beyond this. */
  maxPending: number;
  /** Longest XREAD block, ms: also the worst-case delay for a subscription whose wake-up was missed. */
  blockMs: number;
  onSessionLost(event: SessionLostEvent): void;
  logger: TalkLogger;
}

type XReadReply = [key: string, entries: [id: string, fields: string[]][]][];

const BATCH = 256;
/**
 * After a batch failed on the connection, the next try: late enough that a socket closed under the batch has
 * been noticed (the status leaves "ready" and the reconnect's flush takes over), soon enough that events held
 * on a connection that stayed up do not wait for the next publish.
 */
const RETRY_AFTER_CONNECTION_ERROR_MS = 250;

/** An event queued for Redis: what the XADD needs. */
interface QueuedEvent {
  readonly sessionId: string;
  readonly seq: number;
  readonly line: string;
}

/**
 * Session events over Redis Streams, one stream per session whose entry ids
 * are the events' seq (`<seq>-0`). That makes replay-from-afterSeq a plain
 * XREAD from `<afterSeq>-0`, makes a re-sent event a harmless duplicate-id
 * error, and lets a subscriber resume after any reconnect from the last seq it
 * saw. One dedicated connection blocks on every stream this worker reads,
 * plus the lifecycle stream that carries session-lost notices.
 */
export class EventStream {
  readonly #ctx: EventStreamContext;
  readonly #subscribers = new Map<string, Set<StreamSubscriber>>();
  readonly #keyToSession = new Map<string, string>();
  /** Events waiting for Redis, as their JSON (the session's own line when it came with one). */
  readonly #queue: QueuedEvent[] = [];
  #lifecycleCursor = "0-0";
  #readerClientId: string | undefined;
  #blocked = false;
  #flushScheduled = false;
  #flushing = false;
  #retryTimer: NodeJS.Timeout | undefined;
  #dropped = 0;
  #closed = false;
  #loop: Promise<void> | undefined;
  #wakeReady: (() => void) | undefined;

  constructor(ctx: EventStreamContext) {
    this.#ctx = ctx;
    ctx.reader.on("close", () => {
      this.#readerClientId = undefined;
    });
    ctx.reader.on("ready", () => this.#wakeReady?.());
  }

  /** Events dropped because Redis stayed down longer than maxPending events. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Starts reading; session-lost notices from before this moment are not replayed. */
  async start(): Promise<void> {
    const last = (await this.#ctx.commands.xrevrange(this.#ctx.keys.lifecycle, "+", "-", "COUNT", 1))[0];
    if (last) this.#lifecycleCursor = last[0];
    this.#loop = this.#readLoop();
  }

  publish(event: TalkEvent, line: string = JSON.stringify(event)): void {
    if (this.#closed) return;
    if (this.#queue.length >= this.#ctx.maxPending) {
      this.#queue.shift();
      this.#dropped++;
    }
    this.#queue.push({ sessionId: event.sessionId, seq: event.seq, line });
    this.#scheduleFlush();
  }

  subscribe(sessionId: string, subscriber: StreamSubscriber): () => void {
    let set = this.#subscribers.get(sessionId);
    if (!set) {
      set = new Set();
      this.#subscribers.set(sessionId, set);
      this.#keyToSession.set(this.#ctx.keys.events(sessionId), sessionId);
    }
    set.add(subscriber);
    this.#wake();
    const owned = set;
    return () => {
      if (!owned.delete(subscriber) || owned.size > 0) return;
      this.#subscribers.delete(sessionId);
      this.#keyToSession.delete(this.#ctx.keys.events(sessionId));
      this.#wake();
    };
  }

  /** Sends what was held while Redis was down, in order. */
  flush(): Promise<void> {
    return this.#flush();
  }

  /** Stops reading; with `flush`, tries once to send held events first (a crash skips it). */
  async close(flush = true): Promise<void> {
    if (flush) await this.#flush().catch(() => undefined);
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    this.#wakeReady?.();
    this.#wake();
    this.#subscribers.clear();
    await this.#loop;
  }

  #scheduleFlush(): void {
    if (this.#flushScheduled || this.#flushing) return;
    this.#flushScheduled = true;
    // Batching on the next turn turns a burst of events into one pipeline round trip.
    setImmediate(() => {
      this.#flushScheduled = false;
      void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    const { commands, keys, retention, logger } = this.#ctx;
    if (this.#flushing || commands.status !== "ready") return;
    this.#flushing = true;
    try {
      while (this.#queue.length > 0 && commands.status === "ready") {
        const batch = this.#queue.splice(0, BATCH);
        const pipeline = commands.pipeline();
        for (const event of batch) {
          pipeline.xadd(
            keys.events(event.sessionId),
            "MAXLEN",
            "~",
            String(retention),
            `${event.seq}-0`,
            "e",
            event.line,
          );
        }
        let results: [Error | null, unknown][];
        try {
          results = (await pipeline.exec()) ?? [];
        } catch {
          // The whole batch failed on the connection (closed, or ioredis gave up on it).
          this.#queue.unshift(...batch);
          this.#retryLater();
          return;
        }
        const retry: QueuedEvent[] = [];
        results.forEach(([err], i) => {
          const event = batch[i] as QueuedEvent;
          if (!err || /equal or smaller/i.test(err.message)) return; // sent, or sent before a reconnect
          // Only Redis's own answer refuses an event. Any other error is the connection's, and the status can
          // still say "ready" then: a socket closed under a batch ("Stream isn't writeable") is noticed a turn
          // later. Such events go again after the reconnect (the coordinator flushes), with the next publish, or
          // on the retry timer, whichever comes first: never in a loop on the stale status.
          if (err instanceof ReplyError)
            logger.warn({ err, sessionId: event.sessionId, seq: event.seq }, "event not published");
          else retry.push(event);
        });
        if (retry.length > 0) {
          this.#queue.unshift(...retry);
          this.#retryLater();
          return;
        }
      }
    } finally {
      this.#flushing = false;
    }
    if (this.#queue.length > 0 && commands.status === "ready") this.#scheduleFlush();
  }

  #retryLater(): void {
    if (this.#retryTimer || this.#closed) return;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      void this.#flush();
    }, RETRY_AFTER_CONNECTION_ERROR_MS);
    this.#retryTimer.unref();
  }

  async #readLoop(): Promise<void> {
    const { reader, keys, logger } = this.#ctx;
    while (!this.#closed) {
      if (reader.status !== "ready") {
        await new Promise<void>((resolve) => {
          this.#wakeReady = resolve;
          if (reader.status === "ready" || this.#closed) resolve();
        });
        this.#wakeReady = undefined;
        continue;
      }
      try {
        this.#readerClientId ??= String(await reader.call("CLIENT", "ID"));
      } catch {
        await delay(50);
        continue;
      }
      const streams = [keys.lifecycle];
      const ids = [this.#lifecycleCursor];
      /** Where this read starts, per session: what it returns follows that seq. */
      const from = new Map<string, number>();
      for (const [sessionId, set] of this.#subscribers) {
        const start = Math.min(...[...set].map((s) => s.lastSeq));
        from.set(sessionId, start);
        streams.push(keys.events(sessionId));
        ids.push(`${start}-0`);
      }
      let reply: XReadReply | null;
      this.#blocked = true;
      try {
        const args = [
          "COUNT",
          String(BATCH),
          "BLOCK",
          String(this.#ctx.blockMs),
          "STREAMS",
          ...streams,
          ...ids,
        ];
        // The typed xread, not call(): ioredis 6 speaks RESP3, and only xread reshapes its map reply.
        const xread = reader.xread.bind(reader) as unknown as (...a: string[]) => Promise<XReadReply | null>;
        reply = await xread(...args);
      } catch (err) {
        if (!this.#closed) logger.debug({ err }, "stream read failed; resuming when Redis is back");
        await delay(50);
        continue;
      } finally {
        this.#blocked = false;
      }
      if (reply) this.#dispatch(reply, from);
    }
  }

  #dispatch(reply: XReadReply, from: ReadonlyMap<string, number>): void {
    for (const [key, entries] of reply) {
      if (key === this.#ctx.keys.lifecycle) {
        for (const [id, fields] of entries) {
          this.#lifecycleCursor = id;
          const f = fieldMap(fields);
          this.#ctx.onSessionLost({
            type: "session-lost",
            sessionId: f.sid ?? "",
            workerId: f.owner ?? "",
            at: Number(f.at ?? Date.now()),
          });
        }
        continue;
      }
      const sessionId = this.#keyToSession.get(key);
      const set = sessionId === undefined ? undefined : this.#subscribers.get(sessionId);
      if (!set) continue;
      // A subscriber that came while this read was out, from before where the read started (a replay from 0
      // while the others were at 9), would take its first entry (10) as the next and skip the ones before:
      // it is left to the next read, which starts from its position.
      const start = from.get(sessionId as string) ?? Number.POSITIVE_INFINITY;
      const covered = [...set].filter((s) => s.lastSeq >= start);
      for (const [, fields] of entries) {
        const raw = fieldMap(fields).e;
        if (raw === undefined) continue;
        let event: TalkEvent;
        try {
          event = JSON.parse(raw) as TalkEvent;
        } catch {
          continue;
        }
        for (const subscriber of covered) subscriber.deliver(event);
      }
    }
  }

  /** Interrupts the blocking read so a changed subscription set takes effect now. */
  #wake(): void {
    if (!this.#blocked || this.#readerClientId === undefined || this.#ctx.commands.status !== "ready") return;
    this.#ctx.commands.call("CLIENT", "UNBLOCK", this.#readerClientId).catch(() => undefined);
  }
}

function fieldMap(fields: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < fields.length; i += 2) out[fields[i] as string] = fields[i + 1] as string;
  return out;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
