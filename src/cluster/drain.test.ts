import { describe, expect, it } from "vitest";
import { ActiveCounter, Drainer } from "./drain.js";

describe("Drainer", () => {
  it("stops accepting, marks draining, then waits for active work to end before resolving", async () => {
    const counter = new ActiveCounter();
    const steps: string[] = [];
    const endCall = counter.begin();
    const endJob = counter.begin();
    const drainer = new Drainer({
      stopAccepting: () => void steps.push("stopAccepting"),
      markDraining: async () => void steps.push("markDraining"),
      work: counter,
    });
    let settled = false;
    const done = drainer.drain().then((r) => {
      settled = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 50));
    expect(steps).toEqual(["stopAccepting", "markDraining"]);
    expect(settled).toBe(false);
    endCall();
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(false);
    endJob();
    expect(await done).toMatchObject({ drained: true, remaining: 0 });
  });

  it("gives up at the limit and reports what is still running", async () => {
    const counter = new ActiveCounter();
    counter.begin();
    const drainer = new Drainer(
      { stopAccepting: () => {}, markDraining: () => {}, work: counter },
      { limitMs: 100 },
    );
    expect(await drainer.drain()).toMatchObject({ drained: false, remaining: 1 });
  });

  it("keeps draining when marking the registry fails (Redis down)", async () => {
    const drainer = new Drainer({
      stopAccepting: () => {},
      markDraining: () => Promise.reject(new Error("redis down")),
      work: new ActiveCounter(),
    });
    expect(await drainer.drain()).toMatchObject({ drained: true });
  });

  it("drain() is idempotent: a second SIGTERM gets the drain in progress", () => {
    const drainer = new Drainer({
      stopAccepting: () => {},
      markDraining: () => {},
      work: new ActiveCounter(),
    });
    expect(drainer.drain()).toBe(drainer.drain());
  });

  it("an end() called twice counts once", () => {
    const counter = new ActiveCounter();
    const end = counter.begin();
    counter.begin();
    end();
    end();
    expect(counter.count()).toBe(1);
  });
});
