import { afterAll, describe, expect, it } from "vitest";
import type { TalkClient } from "../../src/client/talk-client.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { WorkerProcess } from "../support/cluster-workers.js";
import { eventually, within } from "../support/bounded-waits.js";
import { recordEvents, rejectionOf, SPEECH_FORMAT } from "../support/gateway-harness.js";

/** SIGTERM on a real worker process with a session in progress. */

const ROOM = { mode: "stt-tts", transport: "managed-room", inputFormat: SPEECH_FORMAT } as const;
const WAIT = 20_000;
const prefix = uniquePrefix("e2e-drain");
const workers: WorkerProcess[] = [];
const clients: TalkClient[] = [];

afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await Promise.all(workers.map((w) => w.stop()));
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

describe("SIGTERM drain", () => {
  it("refuses new sessions with shutting_down, fails /readyz, lets the running session finish, then exits 0", async () => {
    const a = await WorkerProcess.start({
      redisUrl: SHARED_REDIS_URL,
      keyPrefix: prefix,
      workerId: "drain-a",
      drainTimeoutMs: 60_000,
    });
    workers.push(a);
    expect((await a.readyz()).status).toBe(200);
    const client = await a.connect();
    clients.push(client);
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", ROOM);

    a.kill("SIGTERM");
    await within(
      WAIT,
      a.next((l) => l.msg === "draining"),
      "drain started",
    );
    const ready = await eventually(
      WAIT,
      async () => {
        const r = await a.readyz();
        if (r.status !== 503) throw new Error(`readyz ${r.status}`);
        return r;
      },
      "readyz 503 while draining",
    );
    expect(ready.body.checks.coordinator).toMatchObject({ ok: false });
    expect((await rejectionOf(client.request("talk.session.create", ROOM))).code).toBe("shutting_down");

    // The running session is not cut: its verbs still work, and the process waits for it.
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    await client.request("talk.session.cancelTurn", { sessionId, turnId });
    expect(a.child.exitCode).toBeNull();

    await client.request("talk.session.close", { sessionId });
    await within(
      WAIT,
      rec.next((e) => e.type === "session.closed"),
      "session.closed",
    );
    expect(await within(WAIT, a.exited, "exit after the drain")).toBe(0);
    const drained = a.lines.find((l) => l.msg === "drained; closing");
    expect(drained).toMatchObject({ drained: true, remaining: 0 });
  });
});
