import { describe, expect, it } from "vitest";
import { AGE_FLOOR_EVENTS, ReplayBuffer, replayAgeBound } from "./replay-buffer.js";

const ev = (seq: number) => ({ seq });

describe("ReplayBuffer", () => {
  it("returns the events after a seq in order and reports completeness while nothing was evicted", () => {
    const buf = new ReplayBuffer<{ seq: number }>(5);
    for (let i = 1; i <= 4; i++) buf.push(ev(i));
    expect(buf.replay(2)).toEqual({ events: [ev(3), ev(4)], complete: true });
    expect(buf.replay(0).events.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
  });

  it("reports incompleteness when a missed event was evicted", () => {
    const buf = new ReplayBuffer<{ seq: number }>(3);
    for (let i = 1; i <= 7; i++) buf.push(ev(i));
    const missedTooMuch = buf.replay(2);
    expect(missedTooMuch.complete).toBe(false);
    expect(missedTooMuch.events.map((e) => e.seq)).toEqual([5, 6, 7]);
    expect(buf.replay(4)).toEqual({ events: [ev(5), ev(6), ev(7)], complete: true });
  });

  it("answers an up-to-date caller with nothing and complete", () => {
    const buf = new ReplayBuffer<{ seq: number }>(2);
    buf.push(ev(1));
    expect(buf.replay(1)).toEqual({ events: [], complete: true });
  });

  it("rejects a non-positive capacity with config_invalid", () => {
    expect(() => new ReplayBuffer(0)).toThrow(expect.objectContaining({ code: "config_invalid" }));
  });
});

describe("ReplayBuffer bounded in bytes", () => {
  it("evicts the oldest events once their bytes pass maxBytes, keeps the newest, and says a missed one is gone", () => {
    const buf = new ReplayBuffer<{ seq: number }>(1000, 100);
    for (let i = 1; i <= 50; i++) buf.push(ev(i), 30);
    expect(buf.bytes).toBeLessThanOrEqual(100);
    expect(buf.replay(0).events.map((e) => e.seq)).toEqual([48, 49, 50]);
    expect(buf.replay(0).complete).toBe(false);
    expect(buf.replay(47).complete).toBe(true);
    buf.push(ev(51), 500);
    expect(buf.replay(0).events.map((e) => e.seq)).toEqual([51]);
  });

  it("a steady stream reaches a plateau: bytes held stay bounded whatever the event count", () => {
    const buf = new ReplayBuffer<{ seq: number }>(1000, 4096);
    let peak = 0;
    for (let i = 1; i <= 100_000; i++) {
      buf.push(ev(i), 100 + (i % 50));
      peak = Math.max(peak, buf.bytes);
    }
    expect(peak).toBeLessThanOrEqual(4096);
  });

  it("keeps every event in order as its ring grows, also after evictions by bytes moved its start", () => {
    const buffer = new ReplayBuffer<{ seq: number }>(100, 50 * 10);
    // 10 bytes each: the byte bound (50 events) evicts from seq 51 on, while the ring is still growing.
    for (let seq = 1; seq <= 75; seq++) buffer.push({ seq }, 10);
    expect(buffer.replay(0).events.map((e) => e.seq)).toEqual(Array.from({ length: 50 }, (_, i) => 26 + i));
    // Small events from now on: the ring grows past the point where its start had moved, up to capacity.
    for (let seq = 76; seq <= 400; seq++) buffer.push({ seq }, 1);
    const kept = buffer.replay(0);
    expect(kept.events.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => 301 + i));
    expect(kept.complete).toBe(false);
    expect(buffer.replay(299).complete).toBe(false);
    expect(buffer.replay(300).complete).toBe(true);
    expect(buffer.size).toBe(100);
  });
});

describe("ReplayBuffer bounded in age", () => {
  it("drops events older than maxAgeMs beyond its newest AGE_FLOOR_EVENTS and says a missed one is gone", () => {
    let now = 0;
    const buf = new ReplayBuffer<{ seq: number }>(1000, Number.POSITIVE_INFINITY, {
      maxAgeMs: 10_000,
      now: () => now,
    });
    // 150 old events, then 200 new ones 20 s later: the old ones are past the age bound.
    for (let i = 1; i <= 150; i++) buf.push(ev(i));
    now = 20_000;
    for (let i = 151; i <= 350; i++) buf.push(ev(i));
    const all = buf.replay(0);
    expect(all.events.map((e) => e.seq)).toEqual(Array.from({ length: 200 }, (_, i) => 151 + i));
    expect(all.complete).toBe(false);
    expect(buf.replay(150).complete).toBe(true);
  });

  it("keeps its newest AGE_FLOOR_EVENTS however old, so a quiet session still replays its last turns", () => {
    let now = 0;
    const buf = new ReplayBuffer<{ seq: number }>(1000, Number.POSITIVE_INFINITY, {
      maxAgeMs: 1000,
      now: () => now,
    });
    for (let i = 1; i <= AGE_FLOOR_EVENTS + 20; i++) {
      buf.push(ev(i));
      now += 60_000; // a minute between events: every one is soon past the bound
    }
    expect(buf.size).toBe(AGE_FLOOR_EVENTS);
    expect(buf.replay(0).events[0]!.seq).toBe(21);
  });

  it("keeps the age order across the ring's growth and wrap-around", () => {
    let now = 0;
    const buf = new ReplayBuffer<{ seq: number }>(200, Number.POSITIVE_INFINITY, {
      maxAgeMs: 500,
      now: () => now,
    });
    for (let i = 1; i <= 1000; i++) {
      buf.push(ev(i));
      now += 2; // 500 ms hold 250 events, more than the capacity: the capacity bounds
    }
    expect(buf.size).toBe(200);
    now += 10_000;
    buf.push(ev(1001)); // everything else is now old: down to the floor
    expect(buf.size).toBe(AGE_FLOOR_EVENTS);
    expect(buf.replay(0).events.at(-1)!.seq).toBe(1001);
  });

  it("rejects a non-positive maxAgeMs with config_invalid", () => {
    expect(() => new ReplayBuffer(10, 100, { maxAgeMs: 0 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });

  it("takes a setting of 0 or none as no age bound (replayAgeBound)", () => {
    expect(replayAgeBound(undefined)).toBeUndefined();
    expect(replayAgeBound(0)).toBeUndefined();
    expect(replayAgeBound(500)).toEqual({ maxAgeMs: 500 });
  });
});
