import { describe, expect, it } from "vitest";
import { decodeMulaw, encodeMulaw } from "../../codecs/mulaw.js";
import { LineReference } from "./line-reference.js";

const frame = (value: number) => encodeMulaw(new Int16Array(160).fill(value));

describe("LineReference", () => {
  it("gives back what was sent, in step with the caller's frames, and silence when the carrier's buffer is empty", () => {
    const ref = new LineReference((b) => decodeMulaw(b));
    ref.sent(frame(1000));
    ref.sent(frame(-2000));
    const first = ref.take(160);
    expect(first.every((s) => Math.abs(s - 1000) < 40)).toBe(true);
    // A caller payload of another size takes the same span of line time.
    const half = ref.take(80);
    expect(half).toHaveLength(80);
    expect(half.every((s) => Math.abs(s + 2000) < 80)).toBe(true);
    const rest = ref.take(160);
    expect(rest.subarray(0, 80).every((s) => Math.abs(s + 2000) < 80)).toBe(true);
    expect(rest.subarray(80).every((s) => s === 0)).toBe(true);
    expect(ref.take(160).every((s) => s === 0)).toBe(true);
  });

  it("clear drops what the carrier had not played: it never reaches the reference", () => {
    const ref = new LineReference((b) => decodeMulaw(b));
    for (let i = 0; i < 10; i++) ref.sent(frame(3000));
    ref.take(160);
    ref.clear();
    expect(ref.queuedFrames).toBe(0);
    expect(ref.take(160).every((s) => s === 0)).toBe(true);
  });

  it("runs at most 25 frames ahead of the carrier's acknowledgements, and skips what an acknowledgement says was played", () => {
    const ref = new LineReference((b) => decodeMulaw(b));
    for (let i = 0; i < 40; i++) ref.sent(frame(i < 30 ? 1000 : -1000));
    // Nothing acknowledged: a stalled carrier plays 25 frames at most, then silence (not consumed).
    for (let i = 0; i < 25; i++) expect(ref.take(160)[0]).not.toBe(0);
    expect(ref.take(160).every((s) => s === 0)).toBe(true);
    expect(ref.queuedFrames).toBe(15);
    // The carrier says it played through frame 30: the mirror jumps there.
    ref.acknowledged(30);
    expect(ref.queuedFrames).toBe(10);
    expect(ref.take(160)[0]).toBeLessThan(0);
  });

  it("an acknowledgement behind the head puts back what the carrier had not played: the caller's next frame gets it", () => {
    // A starved process sent 40 frames, then read a backlog of caller frames captured before they reached
    // the carrier: the mirror handed them 15 frames. The carrier's mark after its 10th frame comes back in
    // order with the caller's frames: the mirror had run 15 frames ahead of it, 5 past its own head.
    const ref = new LineReference((b) => decodeMulaw(b));
    for (let i = 0; i < 40; i++) ref.sent(frame(100 * (i + 1)));
    for (let i = 0; i < 15; i++) ref.take(160);
    for (let i = 0; i < 5; i++) ref.take(160);
    ref.acknowledged(10);
    expect(ref.rewoundFrames).toBe(10);
    expect(ref.queuedFrames).toBe(30);
    expect(Math.abs(ref.take(160)[0]! - 1100)).toBeLessThan(60);
    // In step (a frame's grain either way): left alone.
    ref.take(160);
    ref.acknowledged(13);
    expect(ref.rewoundFrames).toBe(10);
    // A clear drops the frames taken too: nothing sent before it plays again.
    ref.clear();
    ref.acknowledged(60);
    expect(ref.queuedFrames).toBe(0);
    expect(ref.take(160).every((s) => s === 0)).toBe(true);
  });

  it("after a clear, new audio plays from the start (nothing sent is left in the carrier's buffer)", () => {
    const ref = new LineReference((b) => decodeMulaw(b));
    for (let i = 0; i < 100; i++) ref.sent(frame(1000));
    ref.clear();
    ref.sent(frame(2000));
    expect(Math.abs(ref.take(160)[0]! - 2000)).toBeLessThan(80);
  });

  it("skip moves the mirror exactly as take does, without decoding (a passthrough call's frames)", () => {
    let decoded = 0;
    const counting = (b: Uint8Array): Int16Array => {
      decoded++;
      return decodeMulaw(b);
    };
    const skipped = new LineReference(counting, 1);
    const taken = new LineReference((b) => decodeMulaw(b), 1);
    for (const ref of [skipped, taken])
      for (let i = 0; i < 30; i++) ref.sent(frame(i % 2 === 0 ? 1000 : -1000));
    // Caller payloads of uneven sizes, past the 25-frame slack (nothing acknowledged).
    for (const n of [160, 80, 240, 160, 4000]) {
      skipped.skip(n);
      taken.take(n);
      expect(skipped.queuedFrames).toBe(taken.queuedFrames);
    }
    expect(decoded).toBe(0);
    skipped.acknowledged(27);
    taken.acknowledged(27);
    skipped.skip(100);
    taken.take(100);
    expect(skipped.queuedFrames).toBe(taken.queuedFrames);
    expect(skipped.take(60)).toEqual(taken.take(60));
  });
});
