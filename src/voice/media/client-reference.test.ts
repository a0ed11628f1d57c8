import { describe, expect, it } from "vitest";
import { pcmChunk, type PcmChunk } from "../../core/index.js";
import { ClientReference } from "./client-reference.js";

const PCM16K = { encoding: "pcm16" as const, sampleRate: 16_000, channels: 1 };
const FRAME = 320;

/** `frames` 20 ms frames at 16 kHz, frame k holding the value k + 1 + offset. */
function frames(count: number, offset = 0): PcmChunk {
  const pcm = new Int16Array(count * FRAME);
  for (let k = 0; k < count; k++) pcm.fill(k + 1 + offset, k * FRAME, (k + 1) * FRAME);
  return pcmChunk(pcm, PCM16K);
}

describe("ClientReference: a Talk API client's echo reference", () => {
  it("offers nothing until the client reports a position of audio it was sent", () => {
    const ref = new ClientReference(PCM16K);
    ref.written(frames(5), "item-1");
    expect(ref.reporting).toBe(false);
    ref.reported({ itemId: "never-sent", playedMs: 40 });
    expect(ref.reporting).toBe(false);
    ref.reported({ itemId: "item-1", playedMs: 0 });
    expect(ref.reporting).toBe(true);
  });

  it("a report places the mirror: the frame the caller sends covers the span that ended at the report", () => {
    const ref = new ClientReference(PCM16K);
    ref.written(frames(10), "item-1");
    // 60 ms played when a 20 ms microphone frame ended: that frame heard 40..60 ms, the item's frame 2.
    ref.reported({ itemId: "item-1", playedMs: 60 });
    expect(ref.take(FRAME)[0]).toBe(3);
    // No report: the mirror runs on at 1x with the microphone.
    expect(ref.take(FRAME)[0]).toBe(4);
    expect(ref.take(FRAME)[0]).toBe(5);
    // A report behind the mirror puts it back (the client played slower than its microphone ran).
    ref.reported({ itemId: "item-1", playedMs: 80 });
    expect(ref.take(FRAME)[0]).toBe(4);
  });

  it("items are positioned from their first frame, a partial frame padded; a clear empties the mirror", () => {
    const ref = new ClientReference(PCM16K);
    const half = frames(1);
    ref.written(pcmChunk(half.samples.subarray(0, FRAME / 2), PCM16K), "item-1"); // 10 ms
    ref.written(frames(3, 100), "item-2");
    ref.reported({ itemId: "item-2", playedMs: 40 });
    expect(ref.take(FRAME)[0]).toBe(102);
    ref.clear();
    expect(ref.take(FRAME).every((s) => s === 0)).toBe(true);
  });

  it("converts the assistant audio to the microphone's rate", () => {
    const ref = new ClientReference(PCM16K);
    const pcm = new Int16Array(24_000).fill(1000); // 1 s at 24 kHz
    ref.written(pcmChunk(pcm, { ...PCM16K, sampleRate: 24_000 }), "item-1");
    ref.reported({ itemId: "item-1", playedMs: 500 });
    const taken = ref.take(FRAME);
    expect(taken).toHaveLength(FRAME);
    expect(Math.abs(taken[FRAME / 2]! - 1000)).toBeLessThan(50);
  });
});

describe("ClientReference: a client that never reports", () => {
  it("keeps only the last 10 s of what it was sent", () => {
    const ref = new ClientReference(PCM16K);
    for (let i = 0; i < 12; i++) ref.written(frames(50), `item-${i}`);
    expect(ref.queuedFrames).toBe(500);
  });
});
