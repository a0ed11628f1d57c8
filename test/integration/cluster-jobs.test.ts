import { afterEach, describe, expect, it } from "vitest";
import type { JobOutcome } from "../../src/cluster/job-outcome.js";
import { type JobEvent, JobQueue, type JobQueueOptions } from "../../src/cluster/job-queue.js";
import { eventually } from "../support/cluster-contract.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";

describe("JobQueue (BullMQ on the shared Redis)", () => {
  const keyPrefix = uniquePrefix("jobs");
  const open: JobQueue[] = [];
  const queue = async (workerId: string, extra: Partial<JobQueueOptions> = {}): Promise<JobQueue> => {
    const q = new JobQueue({
      redisUrl: SHARED_REDIS_URL,
      keyPrefix,
      workerId,
      kinds: ["bot-launch", "outbound-call"],
      ...extra,
    });
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
    await eventually(
      () => events.some((e) => e.type === "failed" && e.jobId === id),
      10_000,
      "the failed event on B",
    );
    expect(abortReason).toBe("user hung up");
    expect(events.find((e) => e.type === "failed" && e.jobId === id)?.reason).toBe("cancelled: user hung up");
    await new Promise((r) => setTimeout(r, 300));
    expect(started).toBe(1);
    expect(a.activeJobs).toBe(0);
  });

  it("lists open jobs from any worker: the running one with its worker, a waiting and a delayed one; not a finished one", async () => {
    const a = await queue("worker-a");
    const b = await queue("worker-b");
    let release: (() => void) | undefined;
    a.process("bot-launch", async (_job, signal) => {
      // The second job runs once the first ends: it waits for its signal (cancel or close).
      await new Promise<void>((resolve) => {
        release ??= resolve;
        signal.addEventListener("abort", () => resolve(), { once: true });
      });
    });
    const running = await b.enqueue("bot-launch", { n: 1 });
    await eventually(() => release !== undefined, 10_000, "the job to start on A");
    const waiting = await b.enqueue("bot-launch", { n: 2 });
    const delayed = await b.enqueue("outbound-call", { n: 3 }, { delayMs: 60_000 });
    const listed = await b.list();
    const byId = new Map(listed.map((j) => [j.id, j]));
    expect(byId.get(running.id)).toMatchObject({ kind: "bot-launch", state: "active", workerId: "worker-a" });
    expect(byId.get(running.id)?.startedAt).toBeGreaterThan(0);
    expect(byId.get(waiting.id)).toMatchObject({ kind: "bot-launch", state: "waiting", attempts: 0 });
    expect(byId.get(delayed.id)).toMatchObject({ kind: "outbound-call", state: "delayed" });
    release?.();
    await eventually(
      async () => !(await b.list()).some((j) => j.id === running.id),
      10_000,
      "the finished job to leave the list",
    );
    expect(await b.cancel(waiting.id)).not.toBe("not_found");
  });

  it("a failing handler is retried after the backoff: every worker sees retried (attempt, reason), the running worker reports each outcome once", async () => {
    const a = await queue("worker-a", { attempts: 2, backoff: { type: "fixed", delayMs: 5 } });
    const b = await queue("worker-b");
    const seen: JobEvent[] = [];
    b.on("job", (e) => seen.push(e));
    const outcomesA: JobOutcome[] = [];
    const outcomesB: JobOutcome[] = [];
    a.on("outcome", (o) => outcomesA.push(o));
    b.on("outcome", (o) => outcomesB.push(o));
    a.process<{ fail: number }>("outbound-call", async (job) => {
      if (job.attempt <= job.data.fail) throw new Error(`line busy ${job.attempt}`);
      return "answered";
    });
    const once = await a.enqueue("outbound-call", { fail: 1 });
    const always = await a.enqueue("outbound-call", { fail: 9 });
    await eventually(
      () => seen.some((e) => e.type === "completed" && e.jobId === once.id),
      10_000,
      "the retried job to complete",
    );
    await eventually(
      () => seen.some((e) => e.type === "failed" && e.jobId === always.id),
      10_000,
      "the other to fail",
    );
    await eventually(() => outcomesA.length === 4, 10_000, "four outcomes on A");
    await eventually(() => seen.filter((e) => e.type === "retried").length === 2, 10_000, "two retries on B");
    expect(seen.filter((e) => e.type === "retried").map((e) => [e.jobId, e.attempt, e.reason])).toEqual([
      [once.id, 1, "line busy 1"],
      [always.id, 1, "line busy 1"],
    ]);
    expect(seen.find((e) => e.type === "failed")?.reason).toBe("line busy 2");
    expect(outcomesA.map((o) => [o.jobId, o.outcome, o.attempt])).toEqual([
      [once.id, "retried", 1],
      [always.id, "retried", 1],
      [once.id, "completed", 2],
      [always.id, "failed", 2],
    ]);
    expect(outcomesB).toEqual([]);
  });

  it("a job enqueued with a delay is not reported as retried", async () => {
    const a = await queue("worker-a");
    const seen: JobEvent[] = [];
    a.on("job", (e) => seen.push(e));
    a.process("outbound-call", async () => "done");
    const { id } = await a.enqueue("outbound-call", {}, { delayMs: 10 });
    await eventually(
      () => seen.some((e) => e.type === "completed" && e.jobId === id),
      10_000,
      "the job to complete",
    );
    expect(seen.filter((e) => e.type === "retried")).toEqual([]);
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
    expect(
      () => new JobQueue({ redisUrl: SHARED_REDIS_URL, keyPrefix, workerId: "x", kinds: ["Bad Kind"] }),
    ).toThrow(/kinds/);
  });
});
