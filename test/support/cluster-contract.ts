import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { TalkError } from "../../src/core/errors.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import type { Coordinator, CoordinatorEvents } from "../../src/cluster/coordinator.js";
import type { CoordinatorOptions } from "../../src/cluster/coordinator-options.js";

/** A coordinator the contract can also kill abruptly (no release, no deregistration). */
export type CrashableCoordinator = Coordinator & { crash(): Promise<void> };

export interface CoordinatorFixture {
  /** Creates and starts a worker that shares state with the others of this test. */
  create(options?: CoordinatorOptions): Promise<CrashableCoordinator>;
  /** Removes what the test left behind (Redis keys). */
  cleanup(): Promise<void>;
}

export function talkEvent(sessionId: string, seq: number): TalkEvent {
  return {
    id: `evt-${seq}`,
    type: "transcript.delta",
    sessionId,
    turnId: "turn-1",
    seq,
    timestamp: new Date().toISOString(),
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    payload: { role: "user", text: `word ${seq}` },
  } as TalkEvent;
}

/** Resolves with the first event of a type, or rejects after a bounded wait. */
export function nextEvent<K extends keyof CoordinatorEvents>(
  coordinator: Coordinator,
  type: K,
  timeoutMs: number,
  match: (event: CoordinatorEvents[K]) => boolean = () => true,
): Promise<CoordinatorEvents[K]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no ${String(type)} within ${timeoutMs} ms`));
    }, timeoutMs);
    const off = coordinator.on(type, (event) => {
      if (!match(event)) return;
      clearTimeout(timer);
      off();
      resolve(event);
    });
  });
}

/** Waits until `check` returns true, polling, up to a bounded time. */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export async function rejection(promise: Promise<unknown>): Promise<TalkError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof TalkError) return err;
    throw err;
  }
  throw new Error("expected a rejection");
}

/**
 * The semantics both coordinators share. Run against the in-process one (on
 * one hub) and the Redis one (on one key prefix): code above src/cluster may
 * rely on exactly what is checked here.
 */
export function describeCoordinatorContract(name: string, makeFixture: () => CoordinatorFixture): void {
  describe(`Coordinator contract: ${name}`, () => {
    let fixture: CoordinatorFixture | undefined;
    const open: CrashableCoordinator[] = [];
    const worker = async (options?: CoordinatorOptions): Promise<CrashableCoordinator> => {
      fixture ??= makeFixture();
      const c = await fixture.create(options);
      open.push(c);
      return c;
    };

    afterEach(async () => {
      await Promise.allSettled(open.splice(0).map((c) => c.close()));
      await fixture?.cleanup();
      fixture = undefined;
    });

    it("locate answers the worker that claimed the session, on every worker, until release", async () => {
      const a = await worker();
      const b = await worker();
      const sid = `s-${randomUUID()}`;
      expect(await b.locate(sid)).toBeUndefined();
      expect(await a.claim(sid)).toEqual({ workerId: a.workerId, synced: true });
      expect(await b.locate(sid)).toEqual({ workerId: a.workerId });
      expect(a.owns(sid)).toBe(true);
      expect(a.ownedSessions).toBe(1);
      await a.release(sid);
      expect(await b.locate(sid)).toBeUndefined();
      expect(a.owns(sid)).toBe(false);
    });

    it("refuses a claim on a session another worker holds, and repeats a claim already held as a no-op", async () => {
      const a = await worker();
      const b = await worker();
      const sid = `s-${randomUUID()}`;
      await a.claim(sid);
      await a.claim(sid);
      const err = await rejection(b.claim(sid));
      expect(err.code).toBe("invalid_state");
      expect(err.details).toEqual({ workerId: a.workerId });
    });

    it("keeps a lease alive past its TTL while the owner renews it", async () => {
      const a = await worker({ leaseTtlSec: 1 });
      const b = await worker({ leaseTtlSec: 1 });
      const sid = `s-${randomUUID()}`;
      await a.claim(sid);
      let lost = false;
      b.on("session-lost", (e) => {
        if (e.sessionId === sid) lost = true;
      });
      await new Promise((r) => setTimeout(r, 2500));
      expect(await b.locate(sid)).toEqual({ workerId: a.workerId });
      expect(lost).toBe(false);
    });

    it("tells every other worker session-lost within TTL + 1 s when the owner dies without releasing", async () => {
      const a = await worker({ leaseTtlSec: 2 });
      const b = await worker({ leaseTtlSec: 2 });
      const c = await worker({ leaseTtlSec: 2 });
      const sid = `s-${randomUUID()}`;
      await a.claim(sid);
      const onB = nextEvent(b, "session-lost", 3000, (e) => e.sessionId === sid);
      const onC = nextEvent(c, "session-lost", 3000, (e) => e.sessionId === sid);
      await a.crash();
      const [lostB, lostC] = await Promise.all([onB, onC]);
      expect(lostB).toMatchObject({ type: "session-lost", sessionId: sid, workerId: a.workerId });
      expect(lostC.workerId).toBe(a.workerId);
      expect(await b.locate(sid)).toBeUndefined();
    });

    it("does not report a released session as lost", async () => {
      const a = await worker({ leaseTtlSec: 1 });
      const b = await worker({ leaseTtlSec: 1 });
      const sid = `s-${randomUUID()}`;
      await a.claim(sid);
      let lost = false;
      b.on("session-lost", (e) => {
        if (e.sessionId === sid) lost = true;
      });
      await a.close();
      await new Promise((r) => setTimeout(r, 2000));
      expect(lost).toBe(false);
      expect(await b.locate(sid)).toBeUndefined();
    });

    it("delivers a command to the owning worker and returns the handler's result", async () => {
      const a = await worker();
      const b = await worker();
      const sid = `s-${randomUUID()}`;
      await a.claim(sid);
      const seen: unknown[] = [];
      a.onCommand((sessionId, command) => {
        seen.push({ sessionId, command });
        return { cancelled: true, on: a.workerId };
      });
      const result = await b.sendCommand(sid, {
        verb: "cancelTurn",
        params: { turnId: "t1", reason: "client_request" },
      });
      expect(result).toEqual({ cancelled: true, on: a.workerId });
      expect(seen).toEqual([
        {
          sessionId: sid,
          command: { verb: "cancelTurn", params: { turnId: "t1", reason: "client_request" } },
        },
      ]);
      // The owner itself goes through the same call.
      expect(await a.sendCommand(sid, { verb: "cancelOutput" })).toEqual({ cancelled: true, on: a.workerId });
    });

    it("returns the owner's TalkError code to the remote caller", async () => {
      const a = await worker();
      const b = await worker();
      const sid = `s-${randomUUID()}`;
      await a.claim(sid);
      a.onCommand(() => {
        throw new TalkError("stale_turn", "turn t0 is not active");
      });
      const err = await rejection(b.sendCommand(sid, { verb: "cancelTurn", params: { turnId: "t0" } }));
      expect(err.code).toBe("stale_turn");
      expect(err.message).toBe("turn t0 is not active");
    });

    it("answers session_not_found for a session no worker owns", async () => {
      const b = await worker();
      const err = await rejection(b.sendCommand(`s-${randomUUID()}`, { verb: "close" }));
      expect(err.code).toBe("session_not_found");
    });

    it("answers owner_unreachable after the bounded wait when the owner does not answer", async () => {
      const a = await worker();
      const b = await worker();
      const sid = `s-${randomUUID()}`;
      await a.claim(sid);
      a.onCommand(() => new Promise(() => {}));
      const err = await rejection(b.sendCommand(sid, { verb: "close" }, { timeoutMs: 300 }));
      expect(err.code).toBe("owner_unreachable");
      expect(err.retryable).toBe(true);
    });

    it("answers owner_unreachable while a dead owner's lease has not lapsed yet", async () => {
      const a = await worker({ leaseTtlSec: 30 });
      const b = await worker({ leaseTtlSec: 30 });
      const sid = `s-${randomUUID()}`;
      await a.claim(sid);
      await a.crash();
      const err = await rejection(b.sendCommand(sid, { verb: "cancelOutput" }, { timeoutMs: 5000 }));
      expect(err.code).toBe("owner_unreachable");
    });

    it("stops waiting with cancelled when the caller's signal aborts before the owner answers", async () => {
      const a = await worker();
      const b = await worker();
      const sid = `s-${randomUUID()}`;
      await a.claim(sid);
      a.onCommand(() => new Promise(() => {}));
      const controller = new AbortController();
      const sent = rejection(
        b.sendCommand(
          sid,
          { verb: "cancelOutput", params: {} },
          { timeoutMs: 30_000, signal: controller.signal },
        ),
      );
      setTimeout(() => controller.abort(), 50);
      const started = Date.now();
      const err = await sent;
      expect(err.code).toBe("cancelled");
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it("refuses a command whose params do not match its verb before sending it", async () => {
      const b = await worker();
      const err = await rejection(
        b.sendCommand("s-x", { verb: "join", params: { joinToken: "", afterSeq: -1 } } as never),
      );
      expect(err.code).toBe("invalid_params");
      expect(err.message).toMatch(/joinToken/);
    });

    it("rejects an unknown command verb before sending it", async () => {
      const b = await worker();
      const err = await rejection(b.sendCommand("s-x", { verb: "explode" } as never));
      expect(err.code).toBe("invalid_params");
    });

    it("delivers a worker command to the named worker (or this one) and returns its handlers' answer", async () => {
      const a = await worker();
      const b = await worker();
      const drained: string[] = [];
      a.onWorkerCommand({
        listSessions: () => ({ workerId: a.workerId, sessions: [{ sessionId: "s-1" }] }),
        drain: () => {
          drained.push(a.workerId);
          return { workerId: a.workerId, draining: true };
        },
        closeSession: ({ sessionId }) => ({ sessionId, closed: true, hungUp: false }),
        listUsage: () => ({ workerId: a.workerId, records: [] }),
        listErrors: () => ({ workerId: a.workerId, errors: [] }),
      });
      expect(await b.sendWorkerCommand(a.workerId, { verb: "listSessions" })).toEqual({
        workerId: a.workerId,
        sessions: [{ sessionId: "s-1" }],
      });
      expect(await a.sendWorkerCommand(a.workerId, { verb: "drain", params: {} })).toEqual({
        workerId: a.workerId,
        draining: true,
      });
      expect(drained).toEqual([a.workerId]);
    });

    it("answers owner_unreachable for a worker that is not connected, capability_unsupported without handlers, invalid_params for a bad command", async () => {
      const a = await worker();
      const b = await worker();
      const gone = await rejection(b.sendWorkerCommand(`w-${randomUUID()}`, { verb: "listSessions" }));
      expect(gone.code).toBe("owner_unreachable");
      const none = await rejection(b.sendWorkerCommand(a.workerId, { verb: "listSessions" }));
      expect(none.code).toBe("capability_unsupported");
      const bad = await rejection(b.sendWorkerCommand(a.workerId, { verb: "explode" } as never));
      expect(bad.code).toBe("invalid_params");
      const params = await rejection(
        b.sendWorkerCommand(a.workerId, { verb: "drain", params: { now: true } } as never),
      );
      expect(params.code).toBe("invalid_params");
    });

    it("delivers a session's events in order to a subscriber on another worker, and resumes after a resubscribe without gap or duplicate", async () => {
      const a = await worker();
      const b = await worker();
      const sid = `s-${randomUUID()}`;
      await a.claim(sid);
      for (let seq = 1; seq <= 20; seq++) a.publishEvent(talkEvent(sid, seq));
      const first: number[] = [];
      const off = b.subscribeEvents(sid, 0, (e) => first.push(e.seq));
      await eventually(() => first.length === 20, 5000, "the first 20 events");
      off();
      for (let seq = 21; seq <= 60; seq++) a.publishEvent(talkEvent(sid, seq));
      // A subscriber that reconnects asks for what follows the last seq it saw.
      const second: number[] = [];
      b.subscribeEvents(sid, first.at(-1) ?? 0, (e) => second.push(e.seq));
      for (let seq = 61; seq <= 80; seq++) a.publishEvent(talkEvent(sid, seq));
      await eventually(() => second.length === 60, 5000, "the remaining 60 events");
      expect([...first, ...second]).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
    });

    it("replays only what follows afterSeq to a late subscriber", async () => {
      const a = await worker();
      const b = await worker();
      const sid = `s-${randomUUID()}`;
      await a.claim(sid);
      for (let seq = 1; seq <= 10; seq++) a.publishEvent(talkEvent(sid, seq));
      const seen: number[] = [];
      b.subscribeEvents(sid, 7, (e) => seen.push(e.seq));
      await eventually(() => seen.length === 3, 5000, "events 8..10");
      a.publishEvent(talkEvent(sid, 11));
      await eventually(() => seen.length === 4, 5000, "event 11");
      expect(seen).toEqual([8, 9, 10, 11]);
    });

    it("a draining worker refuses new claims, reports not ready, and is listed as draining", async () => {
      const a = await worker({ roles: ["media", "bot"] });
      const b = await worker();
      expect(a.ready().ok).toBe(true);
      await a.setWorkerState("draining");
      expect((await rejection(a.claim(`s-${randomUUID()}`))).code).toBe("shutting_down");
      expect(a.ready()).toMatchObject({ ok: false, detail: { workerState: "draining" } });
      const listed = await b.listWorkers();
      expect(listed.find((w) => w.id === a.workerId)).toMatchObject({
        state: "draining",
        roles: ["media", "bot"],
      });
      expect(listed.find((w) => w.id === b.workerId)).toMatchObject({ state: "ready" });
    });

    it("close() is idempotent and later calls reject with invalid_state", async () => {
      const a = await worker();
      const first = a.close();
      expect(a.close()).toBe(first);
      await first;
      expect(a.state).toBe("closed");
      expect((await rejection(a.claim("s-after-close"))).code).toBe("invalid_state");
      expect(a.ready().ok).toBe(false);
    });
  });
}
