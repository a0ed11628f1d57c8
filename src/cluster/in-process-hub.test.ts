import { afterEach, describe, expect, it } from "vitest";
import { InProcessCoordinator } from "./in-process-coordinator.js";
import { InProcessHub } from "./in-process-hub.js";

const coordinators: InProcessCoordinator[] = [];

afterEach(async () => {
  await Promise.all(coordinators.splice(0).map((c) => c.close().catch(() => undefined)));
});

async function worker(hub: InProcessHub, workerId: string): Promise<InProcessCoordinator> {
  const c = new InProcessCoordinator({ hub, workerId, leaseTtlSec: 1 });
  await c.start();
  coordinators.push(c);
  return c;
}

/** Holds the event loop like a starved process does: no timer, renewal or sweep runs meanwhile. */
function blockLoop(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // busy: the point is that nothing else runs
  }
}

/** Lets the timers that fell due during a stall run (the hub's sweep, the lease renewal). */
async function afterDueTimers(): Promise<void> {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 300));
}

describe("InProcessHub leases", () => {
  it("a worker keeps its sessions through an event-loop stall longer than the lease TTL", async () => {
    const hub = new InProcessHub();
    const [a, b] = [await worker(hub, "w-a"), await worker(hub, "w-b")];
    const losses: string[] = [];
    for (const c of [a, b]) {
      c.on("session-lost", (e) => losses.push(`${c.workerId} session-lost ${e.sessionId}`));
      c.on("lease-lost", (e) => losses.push(`${c.workerId} lease-lost ${e.sessionId} ${e.reason}`));
    }
    await a.claim("s-stall");

    blockLoop(1600); // the TTL is 1 s: past it before any renewal or sweep could run
    // Asked before any timer ran: the lease is still the owner's.
    expect(await b.locate("s-stall")).toEqual({ workerId: "w-a" });
    await afterDueTimers();
    hub.sweep();

    expect(losses).toEqual([]);
    expect(a.owns("s-stall")).toBe(true);
    expect(await b.locate("s-stall")).toEqual({ workerId: "w-a" });
    await expect(b.claim("s-stall")).rejects.toMatchObject({ code: "invalid_state" });
  });

  it("still lets a lease lapse after its TTL once its owner is gone without releasing", async () => {
    const hub = new InProcessHub();
    const [a, b] = [await worker(hub, "w-a"), await worker(hub, "w-b")];
    await a.claim("s-crash");
    const lost = new Promise((resolve) => b.on("session-lost", resolve));
    await a.crash();
    // Within the TTL the dead owner's lease stands.
    hub.sweep(Date.now());
    expect(await b.locate("s-crash")).toEqual({ workerId: "w-a" });
    hub.sweep(Date.now() + 1_001);
    await expect(lost).resolves.toMatchObject({ sessionId: "s-crash", workerId: "w-a" });
    expect(await b.locate("s-crash")).toBeUndefined();
  });
});
