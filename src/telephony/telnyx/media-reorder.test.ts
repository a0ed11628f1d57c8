import { describe, expect, it } from "vitest";
import { MediaReorder } from "./media-reorder.js";

const frame = (n: number): Uint8Array => new Uint8Array([n, n]);
const chunks = (audio: Uint8Array | undefined): number[] =>
  audio === undefined ? [] : [...audio].filter((_, i) => i % 2 === 0);

describe("MediaReorder", () => {
  it("passes in-order frames through at once, uncopied", () => {
    const r = new MediaReorder();
    const f = frame(1);
    expect(r.push(1, f)).toBe(f);
    expect(chunks(r.push(2, frame(2)))).toEqual([2]);
  });

  it("a stream numbered from further on plays once the window is full, late frames before it dropped", () => {
    const r = new MediaReorder({ window: 2 });
    expect(r.push(7, frame(7))).toBeUndefined();
    expect(r.push(8, frame(8))).toBeUndefined();
    expect(chunks(r.push(9, frame(9)))).toEqual([7, 8, 9]);
    expect(chunks(r.push(10, frame(10)))).toEqual([10]);
  });

  it("holds an early frame until the one before it arrives, then plays both in order", () => {
    const r = new MediaReorder();
    r.push(1, frame(1));
    expect(r.push(3, frame(3))).toBeUndefined();
    expect(r.holding).toBe(1);
    expect(chunks(r.push(2, frame(2)))).toEqual([2, 3]);
    expect(r.holding).toBe(0);
  });

  it("gives a missing frame up after the window and drops it if it comes later", () => {
    const r = new MediaReorder({ window: 3 });
    r.push(1, frame(1));
    expect(r.push(3, frame(3))).toBeUndefined();
    expect(r.push(4, frame(4))).toBeUndefined();
    expect(r.push(5, frame(5))).toBeUndefined();
    expect(chunks(r.push(6, frame(6)))).toEqual([3, 4, 5, 6]);
    expect(r.lost).toBe(1);
    expect(r.push(2, frame(2))).toBeUndefined();
    expect(r.dropped).toBe(1);
    expect(chunks(r.push(7, frame(7)))).toEqual([7]);
  });

  it("drops duplicates", () => {
    const r = new MediaReorder();
    r.push(1, frame(1));
    expect(r.push(1, frame(1))).toBeUndefined();
    r.push(3, frame(3));
    expect(r.push(3, frame(3))).toBeUndefined();
    expect(r.dropped).toBe(2);
    expect(chunks(r.push(2, frame(2)))).toEqual([2, 3]);
  });

  it("restarts the order when the numbering starts again far behind", () => {
    const r = new MediaReorder({ restartDistance: 10 });
    for (let n = 100; n < 110; n++) r.push(n, frame(n));
    expect(chunks(r.push(1, frame(1)))).toEqual([1]);
    expect(chunks(r.push(2, frame(2)))).toEqual([2]);
  });

  it("puts a stream of swapped neighbours back in order without loss, from its first frame", () => {
    const r = new MediaReorder();
    const order = [2, 1, 4, 3, 6, 5, 8, 7];
    const out: number[] = [];
    for (const n of order) out.push(...chunks(r.push(n, frame(n))));
    expect(out).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(r.lost + r.dropped).toBe(0);
  });
});
