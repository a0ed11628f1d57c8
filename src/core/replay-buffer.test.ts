import { describe, expect, it } from "vitest";
import { ReplayBuffer } from "./replay-buffer.js";

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
