import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import type { TalkClient } from "../../src/client/talk-client.js";
import type { WorkerInfo } from "../../src/cluster/coordinator.js";
import { RedisKeys } from "../../src/cluster/redis-connection.js";
import { WorkerRegistry } from "../../src/cluster/worker-registry.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { WorkerProcess } from "../support/cluster-workers.js";
import { eventually, within } from "../support/bounded-waits.js";
import { SPEECH_FORMAT } from "../support/gateway-harness.js";

/**
 * Worker registry and job placement between real worker processes: worker E
 * (runtime.maxSessions 2) becomes full, then drains; worker F always has room.
 * Jobs enqueued meanwhile must all run on F.
 */

const ROOM = { mode: "stt-tts", transport: "managed-room", inputFormat: SPEECH_FORMAT } as const;
const WAIT = 20_000;
const KIND = "outbound-call";
const prefix = uniquePrefix("e2e-placement");
const workers: WorkerProcess[] = [];
const clients: TalkClient[] = [];
const redis = new Redis(SHARED_REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
// Reads the registry without joining it (a coordinator would list itself as a worker).
const registry = new WorkerRegistry(redis, new RedisKeys(prefix), 2000);

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await Promise.all(workers.map((w) => w.stop()));
  redis.disconnect();
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

/** Waits until the registry entry of `id` matches (it is re-published every heartbeat). */
function listed(id: string, match: (w: WorkerInfo) => boolean, what: string): Promise<WorkerInfo> {
  return eventually(
    WAIT,
    async () => {
      const entry = (await registry.list()).find((w) => w.id === id);
      if (!entry || !match(entry)) throw new Error(JSON.stringify(entry));
      return entry;
    },
    what,
  );
}

/**
 * Enqueues jobs that end at once from `via`, and waits until every one has
 * completed and its start was reported by the worker that ran it (each
 * process's stdout arrives on its own pipe, so the two are awaited apart).
 */
async function runJobs(via: WorkerProcess, ids: string[]): Promise<void> {
  for (const jobId of ids) via.send({ cmd: "enqueue", kind: KIND, jobId, finish: true });
  const startedAnywhere = (id: string): Promise<unknown> =>
    Promise.race(workers.map((w) => w.probe("job-started", (l) => l.jobId === id)));
  await within(
    WAIT,
    Promise.all(
      ids.flatMap((id) => [
        via.probe("job-event", (l) => l.jobId === id && l.type === "completed"),
        startedAnywhere(id),
      ]),
    ),
    "the jobs to complete",
  );
}

/** The jobs among `ids` that `w` started, sorted (a job handed back by a worker pausing its intake may run out of order). */
const ranOn = (w: WorkerProcess, ids: string[]): string[] =>
  w
    .probes("job-started")
    .map((l) => String(l.jobId))
    .filter((id) => ids.includes(id))
    .sort();

describe("worker registry and job placement", () => {
  it("each worker publishes id, roles, load and state; a full worker and a draining one take no new jobs", async () => {
    await redis.connect();
    const common = { redisUrl: SHARED_REDIS_URL, keyPrefix: prefix, roles: ["media"] };
    const [e, f] = (await WorkerProcess.startAll([
      { ...common, workerId: "place-e", maxSessions: 2, drainTimeoutMs: 60_000 },
      { ...common, workerId: "place-f" },
    ])) as [WorkerProcess, WorkerProcess];
    workers.push(e, f);
    const idle = await listed("place-e", (w) => w.load.sessions === 0, "E listed idle");
    expect(idle).toMatchObject({ roles: ["media"], state: "ready", maxSessions: 2 });
    expect(idle.load.cpu).toBeGreaterThanOrEqual(0);
    expect(idle.load.cpu).toBeLessThanOrEqual(1);

    // Full: runtime.maxSessions sessions on E.
    const client = await e.connect();
    clients.push(client);
    const first = await client.request("talk.session.create", ROOM);
    await client.request("talk.session.create", ROOM);
    await within(
      WAIT,
      e.next((l) => l.msg === "job intake paused: worker full"),
      "E pausing its job intake",
    );
    await listed("place-e", (w) => w.load.sessions === 2 && w.state === "ready", "E listed with 2 sessions");
    const whileFull = ["full-1", "full-2", "full-3", "full-4"];
    await runJobs(e, whileFull);
    expect(ranOn(f, whileFull)).toEqual(whileFull);
    expect(ranOn(e, whileFull)).toEqual([]);

    // Room again (one session closed), then draining: the remaining session keeps E alive.
    await client.request("talk.session.close", { sessionId: first.sessionId });
    await within(
      WAIT,
      e.next((l) => l.msg === "job intake resumed: worker has room"),
      "E resuming its job intake",
    );
    e.kill("SIGTERM");
    await within(
      WAIT,
      e.next((l) => l.msg === "draining"),
      "E draining",
    );
    await listed("place-e", (w) => w.state === "draining" && w.load.sessions === 1, "E listed as draining");
    const whileDraining = ["drain-1", "drain-2", "drain-3", "drain-4"];
    await runJobs(f, whileDraining);
    expect(ranOn(f, whileDraining)).toEqual(whileDraining);
    expect(ranOn(e, whileDraining)).toEqual([]);
    expect(e.child.exitCode).toBeNull();
  }, 60_000);
});
