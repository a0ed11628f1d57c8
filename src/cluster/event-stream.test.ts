import { EventEmitter } from "node:events";
import { ReplyError, type Redis } from "ioredis";
import { describe, expect, it, vi } from "vitest";
import type { TalkEvent, TalkLogger } from "../core/index.js";
import { recordingLogger } from "../core/testing/recording-logger.js";
import { EventStream } from "./event-stream.js";
import { orderedListener } from "./ordered-listener.js";
import { RedisKeys } from "./redis-connection.js";

const keys = new RedisKeys("es-test:");
const quiet = { debug() {}, info() {}, warn() {}, error() {} } as never;

type Entries = [id: string, fields: string[]][];
const entry = (seq: number): Entries[number] => [
  `${seq}-0`,
  ["e", JSON.stringify({ sessionId: "s1", seq, type: "turn.started", payload: {} })],
];

/**
 * A reader connection whose XREADs the test answers one by one: each call is recorded with its
 * stream ids and waits until the test replies to it, as a blocking XREAD waits for Redis.
 */
function scriptedRedis() {
  const reads: { ids: string[]; reply(result: [string, Entries][] | null): void }[] = [];
  let readArrived: (() => void) | undefined;
  const reader = Object.assign(new EventEmitter(), {
    status: "ready",
    call: async () => 7, // CLIENT ID
    xread: (...args: string[]) =>
      new Promise((resolve) => {
        const streams = args.slice(args.indexOf("STREAMS") + 1);
        reads.push({ ids: streams.slice(streams.length / 2), reply: resolve });
        readArrived?.();
      }),
  });
  const commands = {
    status: "ready",
    xrevrange: async () => [],
    call: async () => 0, // CLIENT UNBLOCK: the scripted read is answered by the test, not unblocked
  };
  const nextRead = async (count: number) => {
    while (reads.length < count) await new Promise<void>((r) => (readArrived = r));
    return reads[count - 1]!;
  };
  return { reader: reader as unknown as Redis, commands: commands as unknown as Redis, nextRead };
}

/** An EventStream on the scripted connections. */
/**
 * Gives `redis` a pipeline whose XADDs are recorded by seq and whose exec answers with `exec(seqs)`: one
 * [error, reply] per event, or a rejection for the whole batch.
 */
function scriptPipeline(
  redis: ReturnType<typeof scriptedRedis>,
  exec: (seqs: number[]) => Promise<[Error | null, unknown][]>,
): void {
  const pipeline = () => {
    const seqs: number[] = [];
    return {
      xadd: (...args: string[]) => seqs.push(Number.parseInt(args[4]!, 10)),
      exec: () => exec(seqs),
    };
  };
  Object.assign(redis.commands, { pipeline });
}

const event = (seq: number) =>
  ({ sessionId: "s1", seq, type: "turn.started", payload: {} }) as unknown as TalkEvent;

function streamOn(redis: ReturnType<typeof scriptedRedis>, logger: TalkLogger = quiet): EventStream {
  return new EventStream({
    commands: redis.commands,
    reader: redis.reader,
    keys,
    retention: 1000,
    maxPending: 100,
    blockMs: 2000,
    onSessionLost: () => {},
    logger,
  });
}

describe("EventStream", () => {
  it("a subscriber that comes while a read is out gets its replay from its own position, not that read's entries first", async () => {
    const redis = scriptedRedis();
    const stream = streamOn(redis);
    await stream.start();
    const first: number[] = [];
    const late: number[] = [];
    stream.subscribe(
      "s1",
      orderedListener(0, (e: TalkEvent) => first.push(e.seq), quiet),
    );
    // The first subscriber's replay: 1..9; the next read waits from 9 for what comes next.
    (await redis.nextRead(1)).reply(null); // the read issued before anyone subscribed
    const replay = await redis.nextRead(2);
    expect(replay.ids).toEqual(["0-0", "0-0"]);
    replay.reply([[keys.events("s1"), [1, 2, 3, 4, 5, 6, 7, 8, 9].map(entry)]]);
    const live = await redis.nextRead(3);
    expect(live.ids[1]).toBe("9-0");
    // A second watcher of the session arrives while that read is out; then event 10 comes back on it.
    stream.subscribe(
      "s1",
      orderedListener(0, (e: TalkEvent) => late.push(e.seq), quiet),
    );
    live.reply([[keys.events("s1"), [entry(10)]]]);
    // The next read starts from the late subscriber's position and hands it everything, in order.
    const catchUp = await redis.nextRead(4);
    expect(catchUp.ids[1]).toBe("0-0");
    expect(late).toEqual([]);
    catchUp.reply([[keys.events("s1"), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(entry)]]);
    await redis.nextRead(5);
    expect(late).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(first).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const closing = stream.close(false);
    (await redis.nextRead(5)).reply(null);
    await closing;
  });

  it("an event whose XADD failed on the connection is sent again, even while the status still says ready; one Redis refused is not", async () => {
    const redis = scriptedRedis();
    // Each flush's batch: the seqs sent, answered from `answers` (one error or null per event, in order).
    const sent: number[][] = [];
    const answers: (Error | null)[][] = [];
    scriptPipeline(redis, async (seqs) => {
      sent.push(seqs);
      const errs = answers.shift() ?? [];
      return seqs.map((_, i) => [errs[i] ?? null, "ok"]);
    });
    const logger = recordingLogger();
    const stream = streamOn(redis, logger);
    // The socket closed under the batch before ioredis noticed: its status is still "ready".
    const closed = new Error("Stream isn't writeable and enableOfflineQueue options is false");
    answers.push([closed, closed]);
    stream.publish(event(1));
    stream.publish(event(2));
    await stream.flush();
    expect(sent).toEqual([[1, 2]]);
    // Redis back (the coordinator flushes on reconnect): both go again, in order; Redis refuses 3 itself.
    answers.push([
      null,
      null,
      new ReplyError("WRONGTYPE Operation against a key holding the wrong kind of value"),
    ]);
    stream.publish(event(3));
    await stream.flush();
    expect(sent).toEqual([
      [1, 2],
      [1, 2, 3],
    ]);
    expect(logger.warnings).toEqual(["event not published"]);
    await stream.flush();
    expect(sent).toHaveLength(2);
  });
  it("a batch whose whole pipeline failed on the connection is sent again on a timer, not in a loop on the stale status", async () => {
    const redis = scriptedRedis();
    const attempts: number[][] = [];
    let delivered = false;
    // The socket is gone for 100 ms from the first try while ioredis's status still says "ready": every exec then
    // rejects (measured from the first try, not the test's start, so a slow start cannot skip the failure).
    let brokenUntil: number | undefined;
    scriptPipeline(redis, async (seqs) => {
      attempts.push(seqs);
      brokenUntil ??= Date.now() + 100;
      if (Date.now() < brokenUntil) throw new Error("Connection is closed.");
      delivered = true;
      return seqs.map(() => [null, "ok"]);
    });
    const stream = streamOn(redis);
    stream.publish(event(1));
    stream.publish(event(2));
    // No publish and no reconnect follow: the retry alone sends them, after the one failed try.
    await vi.waitFor(() => expect(delivered).toBe(true), { timeout: 5_000 });
    expect(attempts).toEqual([
      [1, 2],
      [1, 2],
    ]);
    await stream.close(false);
  });
});
