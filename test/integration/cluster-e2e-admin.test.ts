import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import type { TalkClient } from "../../src/client/talk-client.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { WorkerProcess } from "../support/cluster-workers.js";
import { eventually, within } from "../support/bounded-waits.js";
import {
  appendPcm,
  recordEvents,
  rejectionOf,
  SPEECH_FORMAT,
  speechPcm,
} from "../support/gateway-harness.js";
import { connectTalk } from "./meetings-harness.js";

/**
 * The cluster-wide admin API on two real worker processes sharing the local
 * Redis: sessions, workers and jobs of worker A seen and steered from worker
 * B, over the Talk API (`admin.*`) and HTTP (`/admin/*`); tokens without the
 * admin scope refused.
 */

const ROOM = { mode: "stt-tts", transport: "managed-room", inputFormat: SPEECH_FORMAT } as const;
const WAIT = 20_000;
const ADMIN = "admin-token-0123456789";
const WRITER = "writer-token-0123456789";
const auth = {
  auth: {
    tokens: [
      { name: "ops", token: ADMIN, scopes: ["admin"] },
      { name: "app", token: WRITER, scopes: ["write"] },
    ],
  },
};

interface Listing {
  sessions: {
    sessionId: string;
    workerId: string;
    surface: string;
    mode: string;
    state: string;
    activity: string;
    startedAt: number;
    counterpart: Record<string, string>;
  }[];
  unreachable: { workerId: string }[];
}
interface Workers {
  workers: { id: string; roles: string[]; draining: boolean; sessions: number; jobs: number }[];
}

const prefix = uniquePrefix("e2e-admin");
let a: WorkerProcess;
let b: WorkerProcess;
let speech: Buffer;
const clients: TalkClient[] = [];
const sockets: WebSocket[] = [];

async function connect(worker: WorkerProcess, token: string): Promise<TalkClient> {
  const client = await worker.connect(token);
  clients.push(client);
  return client;
}

async function http(
  worker: WorkerProcess,
  method: string,
  path: string,
  token?: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${worker.httpUrl}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(method === "POST" ? { "content-type": "application/json" } : {}),
    },
    ...(method === "POST" ? { body: "{}" } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  const common = { redisUrl: SHARED_REDIS_URL, keyPrefix: prefix, config: auth };
  [a, b, speech] = await Promise.all([
    WorkerProcess.start({ ...common, workerId: "admin-a", agent: "slow" }),
    // B runs no outbound-call jobs (no media role): the job test's job runs on A.
    WorkerProcess.start({ ...common, workerId: "admin-b", roles: ["bot"] }),
    speechPcm("What is the weather like tomorrow?"),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((cl) => cl.close().catch(() => undefined)));
  for (const socket of sockets) socket.close();
  await Promise.all([a, b].filter(Boolean).map((w) => w.stop()));
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

describe("the admin API across worker processes", () => {
  it("a session on A is listed from B with its worker, surface and state, its turn cancelled and the session closed from B", async () => {
    const owner = await connect(a, WRITER);
    const ownerEvents = recordEvents(owner);
    const admin = await connect(b, ADMIN);
    const { sessionId } = await owner.request("talk.session.create", ROOM);

    const listing = (await admin.requestUntyped("admin.sessions.list", {})) as Listing;
    expect(listing.unreachable).toEqual([]);
    const row = listing.sessions.find((s) => s.sessionId === sessionId);
    expect(row).toMatchObject({
      workerId: "admin-a",
      surface: "gateway",
      mode: "stt-tts",
      state: "active",
      activity: "idle",
    });
    expect(row?.startedAt).toBeGreaterThan(Date.now() - 60_000);
    expect(row?.counterpart.connection).toBeTruthy();
    // A read-only follow from B: A's events from the first, relayed through the cluster.
    const follower = await connectTalk(b.httpUrl, ADMIN, sockets);
    const followed = await follower.call("admin.session.follow", { sessionId });
    expect(followed.payload).toEqual({ sessionId, workerId: "admin-a", afterSeq: 0 });
    const followedTypes = (): string[] =>
      follower.events.filter((e) => e.event === "admin.session.event").map((e) => e.payload.event.type);
    await eventually(
      WAIT,
      async () => {
        if (!followedTypes().includes("session.created")) throw new Error("no replay yet");
      },
      "the follow's replay",
    );

    // A user turn whose agent call hangs on A: cancelled from B without joining.
    const started = a.probes("agent-started").length;
    const { turnId } = await owner.request("talk.session.startTurn", { sessionId });
    await appendPcm(owner, sessionId, speech);
    await owner.request("talk.session.endTurn", { sessionId, turnId });
    await within(
      WAIT,
      a.next((l) => l.probe === "agent-started" && a.probes("agent-started").length > started),
      "agent started on A",
    );
    const cancelled = await admin.requestUntyped("admin.session.cancelTurn", { sessionId });
    expect(cancelled).toEqual({ sessionId, cancelled: true });
    await within(WAIT, a.probe("agent-aborted"), "the agent's signal aborted on A");
    await within(
      WAIT,
      ownerEvents.next((e) => e.type === "turn.cancelled" && e.turnId === turnId),
      "turn.cancelled",
    );

    const closed = await admin.requestUntyped("admin.session.close", { sessionId });
    expect(closed).toEqual({ sessionId, closed: true, hungUp: false });
    const end = await within(
      WAIT,
      ownerEvents.next((e) => e.type === "session.closed"),
      "session.closed on the owner",
    );
    expect((end.payload as { reason: string }).reason).toBe("admin");
    await eventually(
      WAIT,
      async () => {
        if (!follower.events.some((e) => e.event === "admin.follow.ended")) throw new Error("not ended");
      },
      "the follow to end",
    );
    expect(follower.events.find((e) => e.event === "admin.follow.ended")?.payload).toEqual({
      sessionId,
      reason: "admin",
    });
    const types = followedTypes();
    expect(types).toEqual(expect.arrayContaining(["session.created", "turn.started", "turn.cancelled"]));
    expect(types.at(-1)).toBe("session.closed");
    const seqs = follower.events
      .filter((e) => e.event === "admin.session.event")
      .map((e) => e.payload.event.seq as number);
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
    expect((await follower.call("admin.session.follow", { sessionId })).error.code).toBe("session_not_found");
    await eventually(
      WAIT,
      async () => {
        const after = (await admin.requestUntyped("admin.sessions.list", {})) as Listing;
        if (after.sessions.some((s) => s.sessionId === sessionId)) throw new Error("still listed");
      },
      "the closed session to leave the listing",
    );
    const again = await rejectionOf(admin.requestUntyped("admin.session.close", { sessionId }));
    expect(again.code).toBe("session_not_found");
  });

  it("the same listing over HTTP from B; a token without admin gets 403 (HTTP and Talk API), none 401", async () => {
    const owner = await connect(a, WRITER);
    const { sessionId } = await owner.request("talk.session.create", ROOM);
    const ok = await http(b, "GET", "/admin/sessions", ADMIN);
    expect(ok.status).toBe(200);
    expect((ok.body as unknown as Listing).sessions.map((s) => s.sessionId)).toContain(sessionId);

    expect((await http(b, "GET", "/admin/sessions", WRITER)).status).toBe(403);
    const none = await http(b, "POST", `/admin/sessions/${sessionId}/close`);
    expect(none.status).toBe(401);
    expect((none.body.error as { code: string }).code).toBe("unauthorized");
    expect((await http(b, "POST", `/admin/workers/admin-a/drain`, WRITER)).status).toBe(403);
    expect((await http(b, "GET", "/admin/errors", WRITER)).status).toBe(403);
    // Recent errors: both workers answer (the session closed by an operator above is not an error).
    const errors = await http(b, "GET", "/admin/errors", ADMIN);
    expect(errors.status).toBe(200);
    expect(errors.body).toMatchObject({ unreachable: [] });
    expect(Array.isArray(errors.body.errors)).toBe(true);

    const writer = await connect(b, WRITER);
    for (const [method, params] of [
      ["admin.sessions.list", {}],
      ["admin.session.close", { sessionId }],
      ["admin.workers.list", {}],
      ["admin.worker.drain", { workerId: "admin-a" }],
      ["admin.jobs.list", {}],
      ["admin.errors.list", {}],
      ["admin.session.follow", { sessionId }],
    ] as const) {
      expect((await rejectionOf(writer.requestUntyped(method, params))).code).toBe("forbidden");
    }
    // Nothing was done by the refused calls.
    const listing = (await (await connect(b, ADMIN)).requestUntyped("admin.sessions.list", {})) as Listing;
    expect(listing.sessions.map((s) => s.sessionId)).toContain(sessionId);

    const bad = await rejectionOf(
      (await connect(b, ADMIN)).requestUntyped("admin.session.close", { sessionId: "has space" }),
    );
    expect(bad.code).toBe("invalid_params");
    const operator = await connect(b, ADMIN);
    for (const [params, code] of [
      [{ sessionId: "has space" }, "invalid_params"],
      [{ sessionId, afterSeq: -1 }, "invalid_params"],
      [{ sessionId, extra: 1 }, "invalid_params"],
      [{ sessionId: "no-such-session" }, "session_not_found"],
    ] as const) {
      expect((await rejectionOf(operator.requestUntyped("admin.session.follow", params))).code).toBe(code);
    }
    const closed = await http(b, "POST", `/admin/sessions/${sessionId}/close`, ADMIN);
    expect(closed).toEqual({ status: 200, body: { sessionId, closed: true, hungUp: false } });
  });

  it("a job running on A is listed and cancelled from B", async () => {
    const admin = await connect(b, ADMIN);
    a.send({ cmd: "enqueue", jobId: "admin-job-1" });
    await within(
      WAIT,
      a.probe("job-started", (l) => l.jobId === "admin-job-1"),
      "the job started on A",
    );
    const { jobs } = (await admin.requestUntyped("admin.jobs.list", {})) as {
      jobs: { id: string; state: string; workerId?: string }[];
    };
    expect(jobs.find((j) => j.id === "admin-job-1")).toMatchObject({ state: "active", workerId: "admin-a" });
    const workers = (await admin.requestUntyped("admin.workers.list", {})) as Workers;
    expect(workers.workers.find((w) => w.id === "admin-a")?.jobs).toBe(1);

    expect(await admin.requestUntyped("admin.job.cancel", { jobId: "admin-job-1" })).toEqual({
      jobId: "admin-job-1",
      outcome: "signalled",
    });
    await within(
      WAIT,
      a.probe("job-aborted", (l) => l.jobId === "admin-job-1"),
      "the job aborted on A",
    );
    const missing = await rejectionOf(admin.requestUntyped("admin.job.cancel", { jobId: "no-such-job" }));
    expect(missing.code).toBe("session_not_found");
  });

  it("workers are listed with roles and load from either side, and A drained from B refuses new sessions while its running one continues", async () => {
    const owner = await connect(a, WRITER);
    const { sessionId } = await owner.request("talk.session.create", ROOM);
    const admin = await connect(b, ADMIN);
    // The registry's load is re-published every heartbeat (2 s).
    const before = await eventually(
      WAIT,
      async () => {
        const listed = (await admin.requestUntyped("admin.workers.list", {})) as Workers;
        if ((listed.workers[0]?.sessions ?? 0) < 1) throw new Error("A's session not counted yet");
        return listed;
      },
      "A's load to count its session",
    );
    expect(before.workers.map((w) => w.id)).toEqual(["admin-a", "admin-b"]);
    expect(before.workers[0]).toMatchObject({ roles: ["media"], draining: false });
    expect(before.workers[1]).toMatchObject({ roles: ["bot"], draining: false, sessions: 0 });

    const unknown = await rejectionOf(admin.requestUntyped("admin.worker.drain", { workerId: "nobody" }));
    expect(unknown.code).toBe("worker_not_found");

    expect(await admin.requestUntyped("admin.worker.drain", { workerId: "admin-a" })).toEqual({
      workerId: "admin-a",
      draining: true,
    });
    const after = (await admin.requestUntyped("admin.workers.list", {})) as Workers;
    expect(after.workers.find((w) => w.id === "admin-a")?.draining).toBe(true);
    expect(after.workers.find((w) => w.id === "admin-b")?.draining).toBe(false);
    expect((await a.readyz()).status).toBe(503);
    expect((await rejectionOf(owner.request("talk.session.create", ROOM))).code).toBe("shutting_down");
    // The running session is untouched, and the worker keeps running (no exit after an operator's drain).
    const { turnId } = await owner.request("talk.session.startTurn", { sessionId });
    expect(turnId).toBeTruthy();
    expect(a.child.exitCode).toBeNull();
  });
});
