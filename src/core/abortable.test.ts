import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { dependantSignals } from "../../test/support/abort-traces.js";
import { interruptibleSleep, linkedSignal } from "./abortable.js";

describe("linkedSignal", () => {
  it("aborts with the reason of whichever parent aborts first", () => {
    const a = new AbortController();
    const b = new AbortController();
    const link = linkedSignal([a.signal, b.signal]);
    expect(link.signal.aborted).toBe(false);
    b.abort("second parent");
    expect(link.signal.aborted).toBe(true);
    expect(link.signal.reason).toBe("second parent");
    // Aborting took its listeners off both parents.
    expect(getEventListeners(a.signal, "abort")).toHaveLength(0);
    expect(getEventListeners(b.signal, "abort")).toHaveLength(0);
  });

  it("is aborted at once under an aborted parent, and listens to none of the others", () => {
    const a = new AbortController();
    a.abort("gone");
    const b = new AbortController();
    const link = linkedSignal([a.signal, b.signal], 1000);
    expect(link.signal.reason).toBe("gone");
    expect(getEventListeners(b.signal, "abort")).toHaveLength(0);
  });

  it("aborts with a TimeoutError after timeoutMs, as AbortSignal.timeout does", async () => {
    const parent = new AbortController();
    const link = linkedSignal([parent.signal], 5);
    await new Promise<void>((resolve) => link.signal.addEventListener("abort", () => resolve()));
    expect(link.signal.reason).toBeInstanceOf(DOMException);
    expect((link.signal.reason as DOMException).name).toBe("TimeoutError");
    expect(getEventListeners(parent.signal, "abort")).toHaveLength(0);
  });

  it("leaves no trace on a long-lived parent however many operations ran under it", () => {
    const shutdown = new AbortController();
    for (let i = 0; i < 500; i++) {
      const link = linkedSignal([shutdown.signal], 60_000);
      link.unlink();
      link.unlink(); // idempotent
    }
    expect(getEventListeners(shutdown.signal, "abort")).toHaveLength(0);
    expect(dependantSignals(shutdown.signal)).toBe(0);
    // What it replaces: AbortSignal.any leaves one entry per operation on the parent.
    for (let i = 0; i < 10; i++) AbortSignal.any([shutdown.signal]);
    expect(dependantSignals(shutdown.signal)).toBe(10);
  });

  it("an unlinked signal no longer follows its parent", () => {
    const parent = new AbortController();
    const link = linkedSignal([parent.signal]);
    link.unlink();
    parent.abort("late");
    expect(link.signal.aborted).toBe(false);
  });
});

describe("interruptibleSleep over several signals", () => {
  it("wakes when any of them aborts, and leaves no listener on the others", async () => {
    const leave = new AbortController();
    const crashed = new AbortController();
    const sleep = interruptibleSleep(60_000, [leave.signal, crashed.signal]);
    crashed.abort("browser died");
    await sleep; // a 60 s sleep: the test's own timeout would fail it had the abort not woken it
    expect(getEventListeners(leave.signal, "abort")).toHaveLength(0);
    expect(getEventListeners(crashed.signal, "abort")).toHaveLength(0);
  });

  it("returns at once when one is already aborted", async () => {
    const leave = new AbortController();
    leave.abort();
    await interruptibleSleep(60_000, [new AbortController().signal, leave.signal]);
  });

  it("a bot's poll loop leaves nothing on its signals", async () => {
    const leave = new AbortController();
    const crashed = new AbortController();
    for (let i = 0; i < 200; i++) await interruptibleSleep(0, [leave.signal, crashed.signal]);
    expect(getEventListeners(leave.signal, "abort")).toHaveLength(0);
    expect(dependantSignals(leave.signal)).toBe(0);
    expect(dependantSignals(crashed.signal)).toBe(0);
  });
});
