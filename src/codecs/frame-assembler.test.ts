import { describe, expect, it } from "vitest";
import { createFrameAssembler } from "./frame-assembler.js";

const ramp = (n: number) => Int16Array.from({ length: n }, (_, i) => (i % 30000) - 15000);

describe("createFrameAssembler", () => {
  it.each([10, 20, 40])("cuts arbitrary chunks into exact %i ms frames in order", (frameMs) => {
    const fa = createFrameAssembler({ sampleRate: 16000, frameMs });
    const input = ramp(16000 * 3 + 123);
    const frames: Int16Array[] = [];
    let seed = 7;
    for (let o = 0; o < input.length;) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      const size = seed % 1000;
      fa.push(input.subarray(o, o + size), (f) => frames.push(f.slice()));
      o += size;
    }
    expect(frames.every((f) => f.length === 16 * frameMs)).toBe(true);
    const joined = new Int16Array(frames.length * 16 * frameMs);
    frames.forEach((f, i) => joined.set(f, i * f.length));
    expect(joined).toEqual(input.subarray(0, joined.length));
    expect(fa.pending).toBe(input.length - joined.length);
  });

  it("keeps stereo frames whole", () => {
    const fa = createFrameAssembler({ sampleRate: 48000, channels: 2 });
    expect(fa.frameLength).toBe(1920);
    let count = 0;
    fa.push(ramp(1000), () => count++);
    fa.push(ramp(3000), () => count++);
    expect(count).toBe(2);
    expect(() => fa.push(ramp(3), () => undefined)).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(fa.pending).toBe(160);
  });

  it("flushes the remainder zero-padded, or drops it", () => {
    const fa = createFrameAssembler({ sampleRate: 8000 });
    fa.push(ramp(200), () => undefined);
    const out: Int16Array[] = [];
    expect(fa.flush((f) => out.push(f.slice()))).toBe(1);
    expect(out[0]!.length).toBe(160);
    expect(Array.from(out[0]!.subarray(0, 40))).toEqual(Array.from(ramp(200).subarray(160)));
    expect(out[0]!.subarray(40).every((v) => v === 0)).toBe(true);
    fa.push(ramp(10), () => undefined);
    expect(fa.flush(() => undefined, false)).toBe(0);
    expect(fa.pending).toBe(0);
  });

  it("handles empty chunks", () => {
    const fa = createFrameAssembler({ sampleRate: 8000 });
    expect(fa.push(new Int16Array(0), () => undefined)).toBe(0);
    expect(fa.flush(() => undefined)).toBe(0);
  });

  it.each([
    [{ sampleRate: Number.NaN }, "unsupported_rate"],
    [{ sampleRate: 22050, frameMs: 10 }, "unsupported_rate"],
    [{ sampleRate: 16000, frameMs: 30 }, "invalid_options"],
    [{ sampleRate: 16000, channels: 0 }, "invalid_options"],
  ])("rejects %o with %s", (options, code) => {
    expect(() => createFrameAssembler(options)).toThrow(expect.objectContaining({ code }));
  });
});
