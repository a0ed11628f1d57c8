import { afterEach, describe, expect, it } from "vitest";
import { type JobEvent, JobQueue, type JobQueueOptions } from "../../src/cluster/job-queue.js";
import { eventually } from "../support/cluster-contract.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";

describe("JobQueue (BullMQ on the shared Redis)", () => {
  const keyPrefix = uniquePrefix("jobs");
  const open: JobQueue[] = [];
  const queue = async (workerId: string, extra: Partial<JobQueueOptions> = {}): Promise<JobQueue> => {
    const q = new JobQueue({ redisUrl: SHARED_REDIS_URL, keyPrefix, workerId, kinds: ["bot-launch", "outbound-call"], ...extra });
    open.push(q);
    await q.start();
    return q;
  };

  afterEach(async () => {
    await Promise.allSettled(open.splice(0).map((q) => q.close()));
    await deleteKeys(SHARED_REDIS_URL, keyPrefix);
  });

  it("a job cancelled from worker B aborts the handler's signal on worker A, and fails without a retry", async () => {
    const a = await queue("worker-a");
    const b = await queue("worker-b");
    const events: JobEvent[] = [];
    b.on("job", (e) => events.push(e));
    let started = 0;
    let abortReason: unknown;
    a.process("bot-launch", async (_job, signal) => {
      started++;
      await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
      abortReason = signal.reason;
      throw new Error("bot stopped");
    });
    const { id } = await b.enqueue("bot-launch", { meetingUrl: "https://meet.example/abc" });
    await eventually(() => started === 1 && a.activeJobs === 1, 10_000, "the job to start on A");
    expect(await b.cancel(id, "user hung up")).toBe("signalled");
    await eventually(() => events.some((e) => e.type === "failed" && e.jobId === id), 10_000, "the failed event on B");
    expect(abortReason).toBe("user hung up");
    expect(events.find((e) => e.type === "failed" && e.jobId === id)?.reason).toBe("cancelled: user hung up");
    await new Promise((r) => setTimeout(r, 300));
    expect(started).toBe(1);
    expect(a.activeJobs).toBe(0);
  });

  it("cancelling a job that has not started removes it, so it never runs", async () => {
    const b = await queue("worker-b");
    const { id } = await b.enqueue("outbound-call", { to: "+15550100" }, { delayMs: 60_000 });
    expect(await b.cancel(id)).toBe("removed");
    expect(await b.cancel(id)).toBe("not_found");
  });

  it("a paused (draining) worker takes no new jobs; a ready one does", async () => {
    const draining = await queue("worker-draining");
    const ready = await queue("worker-ready");
    const ranOn: string[] = [];
    draining.process("outbound-call", async () => ranOn.push("draining"));
    await draining.pause();
    ready.process("outbound-call", async () => ranOn.push("ready"));
    for (let i = 0; i < 3; i++) await ready.enqueue("outbound-call", { i });
    await eventually(() => ranOn.length === 3, 10_000, "three jobs to run");
    expect(ranOn).toEqual(["ready", "ready", "ready"]);
  });

  it("a full worker stops taking jobs until its load drops", async () => {
    let full = true;
    const a = await queue("worker-full", { isFull: () => full, fullCheckMs: 20 });
    const ran: number[] = [];
    await new Promise((r) => setTimeout(r, 100));
    a.process("outbound-call", async (job) => ran.push((job.data as { i: number }).i));
    await a.enqueue("outbound-call", { i: 1 });
    await new Promise((r) => setTimeout(r, 500));
    expect(ran).toEqual([]);
    full = false;
    await eventually(() => ran.length === 1, 10_000, "the job to run once the worker has room");
  });

  it("refuses unknown kinds and a second handler for a kind", async () => {
    const a = await queue("worker-a");
    await expect(a.enqueue("teleport", {})).rejects.toMatchObject({ code: "invalid_params" });
    a.process("bot-launch", async () => undefined);
    expect(() => a.process("bot-launch", async () => undefined)).toThrow(/already registered/);
    expect(() => new JobQueue({ redisUrl: SHARED_REDIS_URL, keyPrefix, workerId: "x", kinds: ["Bad Kind"] })).toThrow(/kinds/);
  });
});
