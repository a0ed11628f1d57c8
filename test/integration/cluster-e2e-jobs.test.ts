import { afterAll, describe, expect, it } from "vitest";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { WorkerProcess } from "../support/cluster-workers.js";
import { within } from "../support/bounded-waits.js";

/** BullMQ jobs between real worker processes: A runs outbound calls (role media), B only schedules (role bot). */

const WAIT = 20_000;
const prefix = uniquePrefix("e2e-jobs");
const workers: WorkerProcess[] = [];

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

describe("jobs across worker processes", () => {
  it("an outbound-call job enqueued and cancelled from worker B runs on worker A and stops there: its handler's signal aborts and it fails as cancelled, without a retry", async () => {
    const common = { redisUrl: SHARED_REDIS_URL, keyPrefix: prefix };
    const [a, b] = (await WorkerProcess.startAll([
      { ...common, workerId: "jobs-a", roles: ["media"] },
      { ...common, workerId: "jobs-b", roles: ["bot"] },
    ])) as [WorkerProcess, WorkerProcess];
    workers.push(a, b);
    const jobId = "call-0001";
    b.send({ cmd: "enqueue", kind: "outbound-call", jobId });
    await within(
      WAIT,
      a.probe("job-started", (l) => l.jobId === jobId),
      "job started on A",
    );
    expect(b.probes("job-started")).toHaveLength(0);

    b.send({ cmd: "cancel", jobId });
    const outcome = await within(
      WAIT,
      b.probe("cancel-result", (l) => l.jobId === jobId),
      "cancel answered on B",
    );
    expect(outcome.outcome).toBe("signalled");
    const aborted = await within(
      WAIT,
      a.probe("job-aborted", (l) => l.jobId === jobId),
      "job aborted on A",
    );
    expect(aborted.reason).toContain("test cancel");
    const failed = await within(
      WAIT,
      b.probe("job-event", (l) => l.jobId === jobId && l.type === "failed"),
      "failure seen cluster-wide on B",
    );
    expect(String(failed.reason)).toMatch(/^cancelled: /);
    expect(a.probes("job-started").filter((l) => l.jobId === jobId)).toHaveLength(1);
  });
});
