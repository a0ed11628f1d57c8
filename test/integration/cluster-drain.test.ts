import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { ActiveCounter, Drainer } from "../../src/cluster/drain.js";
import { JobQueue } from "../../src/cluster/job-queue.js";
import { RedisCoordinator } from "../../src/cluster/redis-coordinator.js";
import { eventually } from "../support/cluster-contract.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";

describe("drain on a Redis worker", () => {
  const keyPrefix = uniquePrefix("drain");
  const closers: (() => Promise<void>)[] = [];

  afterEach(async () => {
    await Promise.allSettled(closers.splice(0).map((close) => close()));
    await deleteKeys(SHARED_REDIS_URL, keyPrefix);
  });

  it("marks the worker draining cluster-wide, pauses its jobs, and resolves only when the running call ends", async () => {
    const a = new RedisCoordinator({ redisUrl: SHARED_REDIS_URL, keyPrefix, workerId: "worker-a" });
    const b = new RedisCoordinator({ redisUrl: SHARED_REDIS_URL, keyPrefix, workerId: "worker-b" });
    const jobs = new JobQueue({
      redisUrl: SHARED_REDIS_URL,
      keyPrefix,
      workerId: "worker-a",
      kinds: ["outbound-call"],
    });
    closers.push(
      () => a.close(),
      () => b.close(),
      () => jobs.close(),
    );
    await Promise.all([a.start(), b.start(), jobs.start()]);
    const ran: string[] = [];
    jobs.process("outbound-call", async () => ran.push("a"));

    const calls = new ActiveCounter();
    const sid = `call-${randomUUID()}`;
    await a.claim(sid);
    const endCall = calls.begin();

    const drainer = new Drainer({
      stopAccepting: () => jobs.pause(),
      markDraining: () => a.setWorkerState("draining"),
      work: calls,
    });
    let result: unknown;
    const draining = drainer.drain().then((r) => (result = r));

    await eventually(
      async () => (await b.listWorkers()).find((w) => w.id === "worker-a")?.state === "draining",
      5000,
      "A listed as draining",
    );
    await expect(a.claim(`call-${randomUUID()}`)).rejects.toMatchObject({ code: "shutting_down" });
    await jobs.enqueue("outbound-call", {});
    await new Promise((r) => setTimeout(r, 300));
    expect(ran).toEqual([]);
    expect(result).toBeUndefined();
    // The running call still takes commands while draining.
    a.onCommand(() => "still here");
    expect(await b.sendCommand(sid, { verb: "cancelOutput" })).toBe("still here");

    await a.release(sid);
    endCall();
    await draining;
    expect(result).toMatchObject({ drained: true, remaining: 0 });
  });
});
