import { afterEach, describe, expect, it } from "vitest";
import type { TalkClient } from "../../src/client/talk-client.js";
import { deleteKeys, SHARED_REDIS_URL, ThrowawayRedis, uniquePrefix } from "../support/cluster-redis.js";
import { WorkerProcess } from "../support/cluster-workers.js";
import { eventually, within } from "../support/bounded-waits.js";
import {
  appendPcm,
  recordEvents,
  rejectionOf,
  SPEECH_FORMAT,
  speechPcm,
} from "../support/gateway-harness.js";

/** Worker processes that die, and a Redis that restarts, in the middle of a call. */

const ROOM = { mode: "stt-tts", transport: "managed-room", inputFormat: SPEECH_FORMAT } as const;
const WAIT = 20_000;

let workers: WorkerProcess[] = [];
let clients: TalkClient[] = [];
let redis: ThrowawayRedis | undefined;
const prefixes: string[] = [];

afterEach(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await Promise.all(workers.map((w) => w.stop()));
  await redis?.stop();
  for (const prefix of prefixes.splice(0)) await deleteKeys(SHARED_REDIS_URL, prefix);
  workers = [];
  clients = [];
  redis = undefined;
});

async function connect(worker: WorkerProcess): Promise<TalkClient> {
  const client = await worker.connect();
  clients.push(client);
  return client;
}

describe("failures in the middle of a call", () => {
  it("killing the owning worker with SIGKILL closes the session everywhere (owner_lost) within lease TTL + 1 s", async () => {
    const prefix = uniquePrefix("e2e-kill");
    prefixes.push(prefix);
    const ttl = 2;
    const common = { redisUrl: SHARED_REDIS_URL, keyPrefix: prefix, leaseTtlSec: ttl };
    const [a, b] = await Promise.all([
      WorkerProcess.start({ ...common, workerId: "kill-a" }),
      WorkerProcess.start({ ...common, workerId: "kill-b" }),
    ]);
    workers.push(a, b);
    const owner = await connect(a);
    const { sessionId, joinToken } = await owner.request("talk.session.create", ROOM);
    const watcher = await connect(b);
    const rec = recordEvents(watcher);
    await watcher.request("talk.session.join", { sessionId, joinToken });
    await within(
      WAIT,
      rec.next((e) => e.type === "session.ready"),
      "joined through B",
    );

    a.kill("SIGKILL");
    await a.exited;
    const closed = await within(
      ttl * 1000 + 1000,
      rec.next((e) => e.type === "session.closed"),
      "session.closed on B",
    );
    expect(closed.payload).toMatchObject({ reason: "owner_lost" });
    expect(closed.seq).toBe((rec.events.at(-2)?.seq ?? 0) + 1);

    // Its join state is gone on every worker: a fresh client on B cannot join or drive it.
    const late = await connect(b);
    expect((await rejectionOf(late.request("talk.session.join", { sessionId, joinToken }))).code).toBe(
      "session_closed",
    );
    expect((await rejectionOf(watcher.request("talk.session.cancelTurn", { sessionId }))).code).toBe(
      "session_closed",
    );
  });

  it("restarting Redis mid-call loses no call: audio and events keep flowing on the owner, and cross-worker cancellation works again once Redis is back", async () => {
    redis = await ThrowawayRedis.start();
    const prefix = uniquePrefix("e2e-outage");
    const common = { redisUrl: redis.url, keyPrefix: prefix, leaseTtlSec: 2 };
    const [a, b, speech] = await Promise.all([
      WorkerProcess.start({ ...common, workerId: "outage-a", agent: "slow" }),
      WorkerProcess.start({ ...common, workerId: "outage-b" }),
      speechPcm("What is the weather like tomorrow?"),
    ]);
    workers.push(a, b);
    const owner = await connect(a);
    const ownerEvents = recordEvents(owner);
    const { sessionId, joinToken } = await owner.request("talk.session.create", ROOM);

    await redis.stop();
    // The call goes on without Redis: audio in, STT, the agent started, events to the local client.
    const { turnId } = await owner.request("talk.session.startTurn", { sessionId });
    await appendPcm(owner, sessionId, speech);
    await owner.request("talk.session.endTurn", { sessionId, turnId });
    await within(WAIT, a.probe("agent-started"), "agent started on A during the outage");
    await within(
      WAIT,
      ownerEvents.next((e) => e.type === "transcript.done"),
      "transcript during the outage",
    );
    const remote = await connect(b);
    const refused = await rejectionOf(remote.request("talk.session.join", { sessionId, joinToken }));
    expect(refused.code).toBe("owner_unreachable");
    expect(refused.retryable).toBe(true);

    await redis.start();
    // Leases are re-written and subscriptions restored without a restart: the join goes through.
    const rec = recordEvents(remote);
    await eventually(
      WAIT,
      () => remote.request("talk.session.join", { sessionId, joinToken }),
      "join through B after Redis returned",
    );
    await within(
      WAIT,
      rec.next((e) => e.type === "session.ready"),
      "session.ready on B",
    );
    const result = await remote.request("talk.session.cancelTurn", { sessionId, turnId });
    expect(result).toEqual({ sessionId, cancelled: true });
    await within(WAIT, a.probe("agent-aborted"), "agent aborted on A");
    await within(
      WAIT,
      rec.next((e) => e.type === "turn.cancelled"),
      "turn.cancelled on B",
    );
    // Nothing the owner emitted during the outage is missing on B: B lacks only the session.replaced
    // notice its join sent to the owner's connection (a joiner's replay leaves those out).
    const notice = await within(
      WAIT,
      ownerEvents.next((e) => e.type === "session.replaced"),
      "session.replaced on A's client after B joined",
    );
    const seqs = rec.events.map((e) => e.seq);
    const expected = Array.from({ length: Math.max(...seqs) }, (_, i) => i + 1).filter(
      (s) => s !== notice.seq,
    );
    expect(seqs).toEqual(expected);
    expect(rec.events.some((e) => e.type === "session.replaced")).toBe(false);
    expect(rec.events.some((e) => e.type === "transcript.done")).toBe(true);
    await remote.request("talk.session.close", { sessionId });
  });
});
