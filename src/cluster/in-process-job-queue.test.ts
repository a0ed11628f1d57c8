import { afterEach, describe, expect, it } from "vitest";
import { InProcessJobQueue } from "./in-process-job-queue.js";
import type { JobOutcome } from "./job-outcome.js";
import type { JobEvent } from "./job-queue.js";

let queue: InProcessJobQueue | undefined;
afterEach(async () => {
  await queue?.close();
  queue = undefined;
});

async function started(
  options: ConstructorParameters<typeof InProcessJobQueue>[0],
): Promise<InProcessJobQueue> {
  queue = new InProcessJobQueue(options);
  await queue.start();
  return queue;
}

function recorder(q: InProcessJobQueue): {
  events: JobEvent[];
  next(match: (e: JobEvent) => boolean): Promise<JobEvent>;
} {
  const events: JobEvent[] = [];
  let waiters: { match: (e: JobEvent) => boolean; resolve: (e: JobEvent) => void }[] = [];
  q.on("job", (e) => {
    events.push(e);
    waiters = waiters.filter((w) => (w.match(e) ? (w.resolve(e), false) : true));
  });
  return {
    events,
    next: (match) =>
      events.find(match)
        ? Promise.resolve(events.find(match) as JobEvent)
        : new Promise((resolve) => waiters.push({ match, resolve })),
  };
}

describe("InProcessJobQueue", () => {
  it("lists open jobs: the running one first with this worker, then waiting; a finished job leaves the list", async () => {
    const q = await started({ kinds: ["outbound-call"], workerId: "w1" });
    let release: (() => void) | undefined;
    q.process("outbound-call", async () => {
      await new Promise<void>((resolve) => (release = resolve));
    });
    const rec = recorder(q);
    const first = await q.enqueue("outbound-call", { n: 1 });
    await rec.next((e) => e.type === "active");
    const second = await q.enqueue("outbound-call", { n: 2 });
    expect((await q.list()).map((j) => [j.id, j.state, j.workerId])).toEqual([
      [first.id, "active", "w1"],
      [second.id, "waiting", undefined],
    ]);
    release?.();
    await rec.next((e) => e.type === "completed" && e.jobId === first.id);
    expect((await q.list()).map((j) => j.id)).toEqual([second.id]);
  });

  it("cancelling a running job aborts its handler's signal and fails it as cancelled, without a retry", async () => {
    const q = await started({ kinds: ["outbound-call"], attempts: 3, retryDelayMs: 0 });
    const rec = recorder(q);
    let runs = 0;
    q.process("outbound-call", async (_job, signal) => {
      runs += 1;
      await new Promise((_, reject) =>
        signal.addEventListener("abort", () => reject(new Error("aborted")), { once: true }),
      );
    });
    const { id } = await q.enqueue("outbound-call", { to: "+1" });
    await rec.next((e) => e.type === "active");
    expect(q.activeJobs).toBe(1);
    expect(await q.cancel(id, "hung up")).toBe("signalled");
    const failed = await rec.next((e) => e.type === "failed");
    expect(failed.reason).toBe("cancelled: hung up");
    expect(runs).toBe(1);
    expect(q.activeJobs).toBe(0);
    expect(await q.cancel(id)).toBe("not_found");
  });

  it("cancelling a waiting job removes it before it runs; a failing job is retried up to its attempts", async () => {
    const q = await started({ kinds: ["meeting-bot"], attempts: 2, retryDelayMs: 0 });
    const rec = recorder(q);
    const { id } = await q.enqueue("meeting-bot", {});
    expect(await q.cancel(id)).toBe("removed");
    let attempts = 0;
    q.process("meeting-bot", async (job) => {
      attempts = job.attempt;
      throw new Error("no browser");
    });
    await q.enqueue("meeting-bot", {});
    const failed = await rec.next((e) => e.type === "failed");
    expect(failed.reason).toBe("no browser");
    expect(attempts).toBe(2);
    expect(rec.events.filter((e) => e.type === "active")).toHaveLength(2);
  });

  it("reports a retry as a retried event and each run's end once as an outcome (failed, retried, cancelled, completed)", async () => {
    const q = await started({
      kinds: ["outbound-call"],
      attempts: 2,
      backoff: { type: "fixed", delayMs: 1 },
    });
    const rec = recorder(q);
    const outcomes: JobOutcome[] = [];
    q.on("outcome", (o) => outcomes.push(o));
    q.process<{ fail: number }>("outbound-call", async (job, signal) => {
      if (job.attempt <= job.data.fail) throw new Error(`busy ${job.attempt}`);
      if (job.data.fail < 0) await new Promise((resolve) => signal.addEventListener("abort", resolve));
      signal.throwIfAborted();
    });
    const once = await q.enqueue("outbound-call", { fail: 1 });
    await rec.next((e) => e.type === "completed" && e.jobId === once.id);
    const always = await q.enqueue("outbound-call", { fail: 9 });
    await rec.next((e) => e.type === "failed" && e.jobId === always.id);
    const hanging = await q.enqueue("outbound-call", { fail: -1 });
    await rec.next((e) => e.type === "active" && e.jobId === hanging.id);
    await q.cancel(hanging.id, "hung up");
    await rec.next((e) => e.type === "failed" && e.jobId === hanging.id);

    expect(rec.events.filter((e) => e.type === "retried")).toMatchObject([
      { jobId: once.id, attempt: 1, reason: "busy 1" },
      { jobId: always.id, attempt: 1, reason: "busy 1" },
    ]);
    expect(outcomes.map((o) => [o.jobId, o.outcome, o.attempt])).toEqual([
      [once.id, "retried", 1],
      [once.id, "completed", 2],
      [always.id, "retried", 1],
      [always.id, "failed", 2],
      [hanging.id, "cancelled", 1],
    ]);
  });

  it("a paused queue (drain) starts no new job until resumed; unknown kinds and calls after close are refused", async () => {
    const q = await started({ kinds: ["outbound-call"] });
    const rec = recorder(q);
    await q.pause();
    q.process("outbound-call", async () => "done");
    await q.enqueue("outbound-call", {});
    // The pump runs on a microtask: after a macrotask turn, a running queue would have started it.
    await new Promise((r) => setImmediate(r));
    expect(rec.events).toHaveLength(0);
    await q.resume();
    await rec.next((e) => e.type === "completed");
    await expect(q.enqueue("nope", {})).rejects.toMatchObject({ code: "invalid_params" });
    await q.close();
    await expect(q.enqueue("outbound-call", {})).rejects.toMatchObject({ code: "invalid_state" });
  });
});
