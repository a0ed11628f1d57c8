import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TalkClient } from "../../src/client/talk-client.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { WorkerProcess } from "../support/cluster-workers.js";
import { within } from "../support/bounded-waits.js";
import {
  appendPcm,
  recordEvents,
  rejectionOf,
  SPEECH_FORMAT,
  speechPcm,
} from "../support/gateway-harness.js";

/**
 * Three real worker processes sharing the local Redis. Worker A runs the
 * sessions (its agent hangs until aborted); clients on B and C reach them
 * only through the cluster.
 */

const ROOM = { mode: "stt-tts", transport: "managed-room", inputFormat: SPEECH_FORMAT } as const;
const WAIT = 20_000;

const prefix = uniquePrefix("e2e-sessions");
let a: WorkerProcess;
let b: WorkerProcess;
let c: WorkerProcess;
let speech: Buffer;
const clients: TalkClient[] = [];

async function connect(worker: WorkerProcess): Promise<TalkClient> {
  const client = await worker.connect();
  clients.push(client);
  return client;
}

/** A session on A with a user turn whose agent call is running (hung) on A. */
async function sessionWithRunningAgent(
  owner: TalkClient,
): Promise<{ sessionId: string; joinToken: string; turnId: string }> {
  const started = a.probes("agent-started").length;
  const { sessionId, joinToken } = await owner.request("talk.session.create", ROOM);
  const { turnId } = await owner.request("talk.session.startTurn", { sessionId });
  await appendPcm(owner, sessionId, speech);
  await owner.request("talk.session.endTurn", { sessionId, turnId });
  await within(
    WAIT,
    a.next((l) => l.probe === "agent-started" && a.probes("agent-started").length > started),
    "agent started on A",
  );
  return { sessionId, joinToken, turnId };
}

function seqsOf(events: TalkEvent[]): number[] {
  return events.map((e) => e.seq);
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/**
 * A joiner's events: in seq order, each once, with no session.replaced (those
 * went to the connections they displaced); earlier owners' session.ready
 * notices are left out of a joiner's replay. A seq it
 * lacks is one of those owner notices: a session.replaced or session.ready in
 * `other`'s record (the displaced owner), or one `other` never saw either
 * (sent to a connection that has gone since).
 */
function expectJoinerSeqs(events: TalkEvent[], other: TalkEvent[]): void {
  const seqs = seqsOf(events);
  expect(seqs).toEqual([...new Set(seqs)].sort((x, y) => x - y));
  expect(events.some((e) => e.type === "session.replaced")).toBe(false);
  const otherBySeq = new Map(other.map((e) => [e.seq, e.type]));
  const missing = range(1, seqs.at(-1) ?? 0).filter((s) => !seqs.includes(s));
  for (const s of missing)
    expect(["session.replaced", "session.ready"], `seq ${s}`).toContain(
      otherBySeq.get(s) ?? "session.replaced",
    );
}

beforeAll(async () => {
  const common = { redisUrl: SHARED_REDIS_URL, keyPrefix: prefix };
  [a, b, c, speech] = await Promise.all([
    WorkerProcess.start({ ...common, workerId: "e2e-a", agent: "slow" }),
    WorkerProcess.start({ ...common, workerId: "e2e-b" }),
    WorkerProcess.start({ ...common, workerId: "e2e-c" }),
    speechPcm("Tell me a long story about the sea."),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all(clients.map((cl) => cl.close().catch(() => undefined)));
  await Promise.all([a, b, c].filter(Boolean).map((w) => w.stop()));
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

describe("sessions across worker processes", () => {
  it("cancelTurn sent to worker B aborts the turn on worker A: the slow agent sees its AbortSignal and one turn.cancelled follows", async () => {
    const owner = await connect(a);
    const ownerEvents = recordEvents(owner);
    const { sessionId, joinToken, turnId } = await sessionWithRunningAgent(owner);
    const aborted = a.probes("agent-aborted").length;

    const remote = await connect(b);
    // Not joined yet: B refuses to drive someone else's session.
    expect((await rejectionOf(remote.request("talk.session.cancelTurn", { sessionId, turnId }))).code).toBe(
      "not_session_owner",
    );
    const rec = recordEvents(remote);
    const joined = await remote.request("talk.session.join", { sessionId, joinToken });
    expect(joined).toMatchObject({ sessionId, mode: "stt-tts", complete: true });
    await within(
      WAIT,
      rec.next((e) => e.type === "session.ready"),
      "session.ready on B",
    );
    await within(
      WAIT,
      ownerEvents.next((e) => e.type === "session.replaced"),
      "session.replaced on A's client",
    );

    // Audio stays on the worker that runs the media.
    const media = await rejectionOf(remote.request("talk.session.startTurn", { sessionId }));
    expect(media.code).toBe("invalid_state");
    expect(media.details).toMatchObject({ workerId: "e2e-a" });

    const result = await remote.request("talk.session.cancelTurn", {
      sessionId,
      turnId,
      reason: "client_request",
    });
    expect(result).toEqual({ sessionId, cancelled: true });
    const abort = await within(
      WAIT,
      a.next((l) => l.probe === "agent-aborted" && a.probes("agent-aborted").length > aborted),
      "agent aborted on A",
    );
    expect(abort.probe).toBe("agent-aborted");
    await within(
      WAIT,
      rec.next((e) => e.type === "turn.cancelled"),
      "turn.cancelled on B",
    );
    // The same contract as on the owner: a second cancel finds nothing to cancel, and there is one terminal event.
    expect(await remote.request("talk.session.cancelTurn", { sessionId, turnId })).toEqual({
      sessionId,
      cancelled: false,
    });
    await remote.request("talk.session.close", { sessionId });
    await within(
      WAIT,
      rec.next((e) => e.type === "session.closed"),
      "session.closed on B",
    );
    expect(rec.events.filter((e) => e.type === "turn.cancelled")).toHaveLength(1);
    expectJoinerSeqs(rec.events, ownerEvents.events);

    const err = await rejectionOf(
      remote.request("talk.session.cancelOutput", { sessionId: "no-such-session" }),
    );
    expect(err.code).toBe("session_not_found");
  });

  it("a client that reconnects through another worker receives the owner's events in order with no gap (replay of what it missed)", async () => {
    const owner = await connect(a);
    const ownerEvents = recordEvents(owner);
    const { sessionId, joinToken, turnId } = await sessionWithRunningAgent(owner);

    // First connection, on B: replay from the start, then live.
    const first = await connect(b);
    const seen = recordEvents(first);
    await first.request("talk.session.join", { sessionId, joinToken });
    await within(
      WAIT,
      seen.next((e) => e.type === "session.ready"),
      "session.ready on B",
    );
    await first.close();

    // While it is away the session moves on: the owner takes it back, cancels the turn and starts another.
    const mark = ownerEvents.events.at(-1)?.seq ?? 0;
    await owner.request("talk.session.join", { sessionId, joinToken, afterSeq: mark });
    await owner.request("talk.session.cancelTurn", { sessionId, turnId });
    const { turnId: second } = await owner.request("talk.session.startTurn", { sessionId });
    await within(
      WAIT,
      ownerEvents.next((e) => e.type === "turn.started" && e.turnId === second),
      "second turn on A",
    );

    // Reconnect through C from the last seq the first connection saw.
    const lastSeen = seen.events.at(-1)?.seq as number;
    const again = await connect(c);
    const rest = recordEvents(again);
    const joined = await again.request("talk.session.join", { sessionId, joinToken, afterSeq: lastSeen });
    expect(joined.complete).toBe(true);
    await within(
      WAIT,
      rest.next((e) => e.type === "session.ready" && e.seq > joined.seq),
      "session.ready on C",
    );
    const all = [...seen.events, ...rest.events];
    await within(
      WAIT,
      ownerEvents.next((e) => e.type === "session.replaced" && e.seq > lastSeen && e.seq <= joined.seq),
      "session.replaced on A's client after C joined",
    );
    expectJoinerSeqs(all, ownerEvents.events);
    const types = rest.events.map((e) => e.type);
    expect(types).toContain("turn.cancelled");
    expect(rest.events.some((e) => e.type === "turn.started" && e.turnId === second)).toBe(true);

    await again.request("talk.session.close", { sessionId });
    const closed = await within(
      WAIT,
      rest.next((e) => e.type === "session.closed"),
      "session.closed on C",
    );
    expect(closed.payload).toMatchObject({ reason: "client_request" });
    expect((await rejectionOf(owner.request("talk.session.startTurn", { sessionId }))).code).toMatch(
      /session_closed|not_session_owner/,
    );
  });
});
