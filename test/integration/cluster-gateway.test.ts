import { afterEach, describe, expect, it } from "vitest";
import { createGatewayCluster } from "../../src/app-cluster.js";
import { InProcessCoordinator } from "../../src/cluster/in-process-coordinator.js";
import { InProcessHub } from "../../src/cluster/in-process-hub.js";
import { SessionBinder } from "../../src/cluster/session-binder.js";
import type { TalkClient } from "../../src/client/talk-client.js";
import { SlowAgentProvider } from "../support/gateway-slow-providers.js";
import {
  appendPcm,
  type GatewayHarness,
  type HarnessSetup,
  recordEvents,
  rejectionOf,
  SPEECH_FORMAT,
  speechPcm,
  startGateway,
} from "../support/gateway-harness.js";

/**
 * Two Gateways in one process, each with its own in-process coordinator on
 * one InProcessHub: the same remote-session code as with Redis, on the
 * embedded backend, fast enough to check what the process tests cannot wait for.
 */

const ROOM = { mode: "stt-tts", transport: "managed-room", inputFormat: SPEECH_FORMAT } as const;

interface Worker {
  h: GatewayHarness;
  coordinator: InProcessCoordinator;
  binder: SessionBinder;
}

const workers: Worker[] = [];
const clients: TalkClient[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  for (const w of workers.splice(0)) {
    w.binder.close();
    await w.h.close();
    await w.coordinator.close();
  }
});

async function startWorker(hub: InProcessHub, workerId: string, setup: HarnessSetup = {}): Promise<Worker> {
  const coordinator = new InProcessCoordinator({ hub, workerId, leaseTtlSec: 1 });
  await coordinator.start();
  // The binder needs the harness's runtime, the harness needs the cluster: bound late.
  const late: { binder?: SessionBinder } = {};
  const cluster = createGatewayCluster(coordinator, (sid) => late.binder?.claimed(sid) ?? Promise.resolve(), {
    remoteCheckMs: 20,
  });
  const h = await startGateway({
    ...setup,
    options: { reconnectGraceMs: 50, ...setup.options },
    deps: { cluster },
  });
  const binder = new SessionBinder({
    runtime: h.runtime,
    coordinator,
    closeLocal: async (sid, reason) => {
      await h.server.closeSession(sid, reason);
    },
  });
  late.binder = binder;
  const worker = { h, coordinator, binder };
  workers.push(worker);
  return worker;
}

async function connect(w: Worker): Promise<TalkClient> {
  const client = await w.h.connect();
  clients.push(client);
  return client;
}

describe("Gateway sessions across in-process coordinators", () => {
  it("a client of gateway B joins a session of gateway A, and its cancelOutput reaches A's agent (one output.audio.cancelled)", async () => {
    const hub = new InProcessHub();
    const agent = new SlowAgentProvider();
    const [a, b, speech] = await Promise.all([
      startWorker(hub, "gw-a", { agent }),
      startWorker(hub, "gw-b"),
      speechPcm("Tell me a story."),
    ]);
    const owner = await connect(a);
    const ownerRec = recordEvents(owner);
    const { sessionId, joinToken } = await owner.request("talk.session.create", ROOM);
    expect(a.coordinator.owns(sessionId)).toBe(true);
    const { turnId } = await owner.request("talk.session.startTurn", { sessionId });
    await appendPcm(owner, sessionId, speech);
    await owner.request("talk.session.endTurn", { sessionId, turnId });
    await agent.started;

    const remote = await connect(b);
    const rec = recordEvents(remote);
    await remote.request("talk.session.join", { sessionId, joinToken });
    await rec.next((e) => e.type === "session.ready");
    expect(await remote.request("talk.session.cancelOutput", { sessionId, turnId })).toEqual({
      sessionId,
      cancelled: true,
    });
    await expect.poll(() => agent.aborted.length).toBe(1);
    await rec.next((e) => e.type === "output.audio.cancelled");
    expect(rec.events.filter((e) => e.type === "output.audio.cancelled")).toHaveLength(1);
    expect(rec.events.some((e) => e.type === "turn.cancelled")).toBe(false);
    // Every seq in order; the one left out is the session.replaced sent to the displaced owner.
    const replaced = (await ownerRec.next((e) => e.type === "session.replaced")).seq;
    expect(rec.events.some((e) => e.type === "session.replaced")).toBe(false);
    const last = rec.events.at(-1)!.seq;
    expect(rec.events.map((e) => e.seq)).toEqual(
      Array.from({ length: last }, (_, i) => i + 1).filter((s) => s !== replaced),
    );
  });

  it("the talk.session verbs answer alike through a local and a remote session handle", async () => {
    const hub = new InProcessHub();
    const [a, b] = await Promise.all([startWorker(hub, "gw-a"), startWorker(hub, "gw-b")]);
    const creator = await connect(a);
    const here = await creator.request("talk.session.create", ROOM);
    const there = await creator.request("talk.session.create", ROOM);
    const remote = await connect(b);
    const rec = recordEvents(remote);
    await remote.request("talk.session.join", { sessionId: there.sessionId, joinToken: there.joinToken });
    await rec.next((e) => e.type === "session.ready");
    const [strangerA, strangerB] = await Promise.all([connect(a), connect(b)]);

    const drive = async (client: TalkClient, stranger: TalkClient, sessionId: string) => {
      const strangerCode = (await rejectionOf(stranger.request("talk.session.cancelTurn", { sessionId })))
        .code;
      const answers = [
        await client.request("talk.session.cancelTurn", { sessionId }),
        await client.request("talk.session.cancelOutput", { sessionId, reason: "barge_in" }),
        await client.request("talk.session.close", { sessionId }),
      ];
      return { strangerCode, answers: JSON.parse(JSON.stringify(answers).replaceAll(sessionId, "<id>")) };
    };
    const local = await drive(creator, strangerA, here.sessionId);
    const viaB = await drive(remote, strangerB, there.sessionId);
    expect(viaB).toEqual(local);
    expect(local.strangerCode).toBe("not_session_owner");
    expect(local.answers.at(-1)).toEqual({ sessionId: "<id>", closed: true });
    await expect.poll(() => a.h.runtime.getSession(there.sessionId)?.state).toBe("closed");
  });

  it("a remote client's media verbs answer invalid_state naming the worker that runs the media", async () => {
    const hub = new InProcessHub();
    const [a, b] = await Promise.all([startWorker(hub, "gw-a"), startWorker(hub, "gw-b")]);
    const owner = await connect(a);
    const { sessionId, joinToken } = await owner.request("talk.session.create", ROOM);
    const remote = await connect(b);
    await remote.request("talk.session.join", { sessionId, joinToken });
    const err = await rejectionOf(remote.request("talk.session.startTurn", { sessionId }));
    expect(err.code).toBe("invalid_state");
    expect(err.details).toMatchObject({ sessionId, workerId: "gw-a" });
    // A direct tool call answers a turn of the media's worker: it is sent there too.
    const direct = await owner.request("talk.session.create", { ...ROOM, brain: "direct-tools" });
    await remote.request("talk.session.join", { sessionId: direct.sessionId, joinToken: direct.joinToken });
    const call = await rejectionOf(
      remote.request("talk.session.callTool", { sessionId: direct.sessionId, name: "echo" }),
    );
    expect(call.code).toBe("invalid_state");
    expect(call.details).toMatchObject({ sessionId: direct.sessionId, workerId: "gw-a" });
  });

  it("a closed session is released from the directory; a draining gateway refuses new sessions with shutting_down", async () => {
    const hub = new InProcessHub();
    const a = await startWorker(hub, "gw-a");
    const owner = await connect(a);
    const { sessionId } = await owner.request("talk.session.create", ROOM);
    expect(await a.coordinator.locate(sessionId)).toEqual({ workerId: "gw-a" });
    await owner.request("talk.session.close", { sessionId });
    await expect.poll(() => a.coordinator.owns(sessionId)).toBe(false);
    expect(await a.coordinator.locate(sessionId)).toBeUndefined();

    a.h.server.stopAcceptingSessions();
    expect((await rejectionOf(owner.request("talk.session.create", ROOM))).code).toBe("shutting_down");
  });

  it("when the worker of a remote client dies without a word, the owner starts its reconnect grace and then closes the session (owner_lost)", async () => {
    const hub = new InProcessHub();
    const [a, b] = await Promise.all([startWorker(hub, "gw-a"), startWorker(hub, "gw-b")]);
    const owner = await connect(a);
    const { sessionId, joinToken } = await owner.request("talk.session.create", ROOM);
    const remote = await connect(b);
    const rec = recordEvents(remote);
    await remote.request("talk.session.join", { sessionId, joinToken });
    await rec.next((e) => e.type === "session.ready");

    await b.coordinator.crash();
    const session = a.h.runtime.getSession(sessionId);
    await expect.poll(() => session?.state, { timeout: 5000 }).toBe("closed");
    const closed = session?.replay(0).events.find((e) => e.type === "session.closed");
    expect(closed?.payload).toMatchObject({ reason: "owner_lost" });
  });

  it("a lone worker's session outlives an event-loop stall longer than its lease TTL (no owner_lost to itself)", async () => {
    const a = await startWorker(new InProcessHub(), "gw-a");
    const owner = await connect(a);
    const rec = recordEvents(owner);
    const { sessionId } = await owner.request("talk.session.create", ROOM);
    await a.binder.claimed(sessionId);

    // A starved loop (heavy CPU, a long synchronous task): the 1 s lease's renewal and the hub's sweep
    // both fall due while nothing runs.
    const until = Date.now() + 1600;
    while (Date.now() < until) {
      // busy
    }
    await new Promise((resolve) => setTimeout(resolve, 300));

    expect(a.h.runtime.getSession(sessionId)?.state).toBe("active");
    expect(a.coordinator.owns(sessionId)).toBe(true);
    // The session still answers its verbs, and nothing closed it.
    await owner.request("talk.session.startTurn", { sessionId });
    expect(rec.events.filter((e) => e.type === "session.closed")).toEqual([]);
  });
});
