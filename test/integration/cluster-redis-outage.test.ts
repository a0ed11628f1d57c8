import { randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import type { TalkError } from "../../src/core/errors.js";
import { JobQueue } from "../../src/cluster/job-queue.js";
import { RedisCoordinator } from "../../src/cluster/redis-coordinator.js";
import { eventually, nextEvent, rejection, talkEvent } from "../support/cluster-contract.js";
import { ThrowawayRedis } from "../support/cluster-redis.js";

describe("Redis outage (a throwaway redis-server, killed and restarted empty)", () => {
  let redis: ThrowawayRedis | undefined;
  const coordinators: RedisCoordinator[] = [];

  afterEach(async () => {
    await Promise.allSettled(coordinators.splice(0).map((c) => c.close()));
    await redis?.stop();
    redis = undefined;
  });

  /** A started coordinator on the throwaway Redis, closed after the test; leases of 2 s, heartbeats every 200 ms. */
  async function coordinator(keyPrefix: string, workerId: string): Promise<RedisCoordinator> {
    const c = new RedisCoordinator({
      redisUrl: redis!.url,
      keyPrefix,
      workerId,
      leaseTtlSec: 2,
      heartbeatMs: 200,
    });
    coordinators.push(c);
    await c.start();
    return c;
  }

  it("keeps local calls working, fails cross-worker operations fast, and restores leases, commands and subscriptions when Redis returns", async () => {
    redis = await ThrowawayRedis.start();
    const a = await coordinator("outage:", "worker-a");
    const b = await coordinator("outage:", "worker-b");
    const sid = `s-${randomUUID()}`;
    await a.claim(sid);
    const applied: string[] = [];
    a.onCommand((_sessionId, command) => {
      applied.push(command.verb);
      return "ok";
    });
    const seen: number[] = [];
    b.subscribeEvents(sid, 0, (e) => seen.push(e.seq));
    for (let seq = 1; seq <= 5; seq++) a.publishEvent(talkEvent(sid, seq));
    await eventually(() => seen.length === 5, 5000, "events before the outage");

    const down = nextEvent(b, "connection", 5000, (e) => e.status === "reconnecting");
    await redis.stop();
    await down;

    // The owner still commands its own session and keeps emitting events: nothing local waits on Redis.
    expect(await a.sendCommand(sid, { verb: "cancelOutput" })).toBe("ok");
    for (let seq = 6; seq <= 10; seq++) a.publishEvent(talkEvent(sid, seq));
    // Another worker's cross-worker operations fail at once with a clear, retryable error.
    const err: TalkError = await rejection(b.sendCommand(sid, { verb: "cancelTurn" }));
    expect(err.code).toBe("owner_unreachable");
    expect(err.retryable).toBe(true);
    expect((await rejection(b.locate(sid))).code).toBe("owner_unreachable");
    expect(b.ready()).toMatchObject({ ok: true, detail: { redis: "reconnecting" } });
    // A new call on A during the outage still runs; its lease is written later.
    const during = `s-${randomUUID()}`;
    expect(await a.claim(during)).toEqual({ workerId: "worker-a", synced: false });

    const back = nextEvent(b, "connection", 10_000, (e) => e.status === "ready");
    await redis.start(); // empty: no persistence, every key is gone
    await back;

    await eventually(
      async () => (await b.locate(sid).catch(() => undefined))?.workerId === "worker-a",
      10_000,
      "the lease to be restored",
    );
    await eventually(
      async () => (await b.locate(during).catch(() => undefined))?.workerId === "worker-a",
      10_000,
      "the outage claim to be written",
    );
    expect(await b.sendCommand(sid, { verb: "cancelTurn" })).toBe("ok");
    expect(applied).toEqual(["cancelOutput", "cancelTurn"]);
    for (let seq = 11; seq <= 15; seq++) a.publishEvent(talkEvent(sid, seq));
    await eventually(() => seen.length === 15, 10_000, "events held during the outage and after it").catch(
      (err: Error) => {
        throw new Error(`${err.message}; seen: ${seen.join(",")}`);
      },
    );
    expect(seen).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
    expect(a.ownedSessions).toBe(2);
  });

  it("counts Redis as back only once the owner's subscriber has re-subscribed: a command sent then is heard", async () => {
    redis = await ThrowawayRedis.start();
    const a = await coordinator("sub:", "worker-a");
    const b = await coordinator("sub:", "worker-b");
    const sid = `s-${randomUUID()}`;
    await a.claim(sid);
    a.onCommand(() => "ok");
    // Only A's subscriber drops (its commands connection stays): A cannot hear commands until it re-subscribes.
    const admin = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      const away = nextEvent(a, "connection", 5000, (e) => e.status === "reconnecting");
      const back = nextEvent(a, "connection", 10_000, (e) => e.status === "ready");
      expect(await admin.call("CLIENT", "KILL", "TYPE", "pubsub")).toBeGreaterThan(0);
      await away;
      expect(a.ready()).toMatchObject({ detail: { redis: "reconnecting" } });
      // A call that starts now is held locally (ioredis waits 50 ms or more before reconnecting): its lease is
      // written once A hears commands again, so no worker sends it one A would miss.
      const during = `s-${randomUUID()}`;
      expect(await a.claim(during)).toEqual({ workerId: "worker-a", synced: false });
      expect(await b.locate(during)).toBeUndefined();
      await back;
      // Said ready only after a PING behind the re-subscription: the command channel has its listener again.
      expect(await b.sendCommand(sid, { verb: "cancelTurn" })).toBe("ok");
      await eventually(async () => (await b.locate(during))?.workerId === "worker-a", 5000, "the held lease");
      expect(await b.sendCommand(during, { verb: "cancelTurn" })).toBe("ok");
    } finally {
      admin.disconnect();
    }
  });

  /**
   * A job queue on a throwaway Redis with one job running `handler`; `down()` stops that Redis and
   * tells the queue so (its coordinator's view, `redisReady`).
   */
  async function queueWithRunningJob(
    keyPrefix: string,
    handler: Parameters<JobQueue["process"]>[1],
  ): Promise<{ queue: JobQueue; down: () => Promise<void> }> {
    const server = (redis = await ThrowawayRedis.start());
    let up = true;
    const queue = new JobQueue({
      redisUrl: server.url,
      keyPrefix,
      workerId: "worker-a",
      kinds: ["bot-launch"],
      redisReady: () => up,
    });
    await queue.start();
    let started = false;
    queue.process("bot-launch", (job, signal) => {
      started = true;
      return handler(job, signal);
    });
    await queue.enqueue("bot-launch", {});
    await eventually(() => started, 10_000, "the job to start");
    return {
      queue,
      down: async () => {
        await server.stop();
        up = false;
      },
    };
  }

  it("closes a job queue while Redis is down instead of waiting for it to return", async () => {
    const { queue, down } = await queueWithRunningJob(
      "outage-jobs:",
      (_job, signal) =>
        new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true })),
    );
    await down();
    // Before, the close waited on ioredis's queued QUIT (and BullMQ's wait for an 'end' that a
    // reconnecting client never emits) until Redis came back: this test timed out.
    await queue.close();
    // And its connections stop: before, they reconnected for the process's life (every 500 ms at most),
    // to whatever listened on the port next.
    expect(await connectionsTo(redis!.port, 1500)).toBe(0);
  }, 30_000);

  it("closes a job queue whose Redis goes while the close is under way", async () => {
    // A job that never ends on its own: an orderly close waits for it.
    const { queue, down } = await queueWithRunningJob("outage-jobs-mid:", () => new Promise<void>(() => {}));
    const closing = queue.close();
    await new Promise((r) => setTimeout(r, 300));
    await down();
    // Before, the close (begun with Redis up) waited for the job and then for Redis: this timed out.
    await closing;
    expect(await connectionsTo(redis!.port, 1500)).toBe(0);
  }, 30_000);
});

/** How many connections arrive at `port` (where a stopped Redis listened) within `ms`. */
async function connectionsTo(port: number, ms: number): Promise<number> {
  let count = 0;
  const server = createServer((socket) => {
    count++;
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", resolve);
  });
  await new Promise((r) => setTimeout(r, ms));
  await new Promise((r) => server.close(r));
  return count;
}
