import { afterAll, describe, expect, it } from "vitest";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { type LogLine, WorkerProcess } from "../support/cluster-workers.js";
import { within } from "../support/bounded-waits.js";

/**
 * BullMQ's stalled-job rules between real worker processes: the worker running
 * a long outbound-call job is killed with SIGKILL, and the other worker's
 * stalled check (short settings from config `cluster.jobs`) finds the job.
 */

const WAIT = 20_000;
/** Four worker processes start at once: slow on a loaded machine (bounded, not a latency check). */
const TEST_TIMEOUT = 60_000;
const KIND = "outbound-call";
const SHORT = { lockDurationMs: 1000, stalledIntervalMs: 1000 };
const prefixes: string[] = [];
const workers: WorkerProcess[] = [];

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await Promise.all(prefixes.map((p) => deleteKeys(SHARED_REDIS_URL, p)));
});

/** Two media workers sharing a fresh prefix; one of them runs `jobId`, which hangs until cancelled. */
async function runLongJob(
  label: string,
  maxStalledCount: number,
  jobId: string,
): Promise<{ runner: WorkerProcess; survivor: WorkerProcess }> {
  const keyPrefix = uniquePrefix(label);
  prefixes.push(keyPrefix);
  const spec = { redisUrl: SHARED_REDIS_URL, keyPrefix, jobs: { ...SHORT, maxStalledCount } };
  const [a, b] = (await WorkerProcess.startAll([
    { ...spec, workerId: `${label}-a` },
    { ...spec, workerId: `${label}-b` },
  ])) as [WorkerProcess, WorkerProcess];
  workers.push(a, b);
  a.send({ cmd: "enqueue", kind: KIND, jobId });
  const started = (w: WorkerProcess): Promise<WorkerProcess> =>
    w.probe("job-started", (l) => l.jobId === jobId).then(() => w);
  const runner = await within(WAIT, Promise.race([started(a), started(b)]), "the job to start");
  return { runner, survivor: runner === a ? b : a };
}

const isOutcome =
  (jobId: string, outcome: string) =>
  (l: LogLine): boolean =>
    l.msg === `job ${outcome}` && l.jobId === jobId && l.outcome === outcome;

describe("stalled jobs of a dead worker", () => {
  it.concurrent(
    "a job whose worker is killed with SIGKILL stalls, is reported as stalled, and runs again on the other worker",
    async () => {
      const jobId = "stall-retry-1";
      const { runner, survivor } = await runLongJob("e2e-stall-retry", 1, jobId);
      runner.kill("SIGKILL");
      await runner.exited;

      await within(
        WAIT,
        survivor.probe("job-event", (l) => l.jobId === jobId && l.type === "stalled"),
        "the stalled event on the survivor",
      );
      const rerun = await within(
        WAIT,
        survivor.probe("job-started", (l) => l.jobId === jobId),
        "the job to run again on the survivor",
      );
      // A stall is not an attempt: the rerun is still attempt 1.
      expect(rerun.attempt).toBe(1);
      // A structured warning from the worker whose stalled check moved the job.
      const logged = await within(WAIT, survivor.next(isOutcome(jobId, "stalled")), "the stalled log line");
      expect(logged).toMatchObject({ kind: KIND, workerId: survivor.spec.workerId, level: 40 });
      expect(await survivor.metric("talkgate_jobs_total", { kind: KIND, outcome: "stalled" })).toBe(1);
      expect(survivor.probes("job-event").some((l) => l.jobId === jobId && l.type === "failed")).toBe(false);
    },
    TEST_TIMEOUT,
  );

  it.concurrent(
    "with maxStalledCount 0 the stalled job of a killed worker is failed visibly instead of running again",
    async () => {
      const jobId = "stall-fail-1";
      const { runner, survivor } = await runLongJob("e2e-stall-fail", 0, jobId);
      runner.kill("SIGKILL");
      await runner.exited;

      await within(
        WAIT,
        survivor.probe("job-event", (l) => l.jobId === jobId && l.type === "stalled"),
        "the stalled event on the survivor",
      );
      const failed = await within(
        WAIT,
        survivor.probe("job-event", (l) => l.jobId === jobId && l.type === "failed"),
        "the failed event on the survivor",
      );
      expect(failed.reason).toBe("job stalled more than allowable limit");
      const logged = await within(WAIT, survivor.next(isOutcome(jobId, "failed")), "the failed log line");
      expect(logged).toMatchObject({
        reason: "job stalled more than allowable limit",
        workerId: survivor.spec.workerId,
        level: 40,
      });
      expect(survivor.probes("job-started").filter((l) => l.jobId === jobId)).toHaveLength(0);
      expect(await survivor.metric("talkgate_jobs_total", { kind: KIND, outcome: "stalled" })).toBe(1);
      expect(await survivor.metric("talkgate_jobs_total", { kind: KIND, outcome: "failed" })).toBe(1);
    },
    TEST_TIMEOUT,
  );
});
