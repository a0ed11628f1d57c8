import { afterEach, describe, expect, it, vi } from "vitest";
import { AudioAppendBatcher } from "./audio-append-batcher.js";

/** A 20 ms u-law frame (160 bytes) whose bytes all equal `n`. */
const frame = (n: number): Uint8Array => new Uint8Array(160).fill(n);
const decoded = (piece: string): number[] => [...Buffer.from(piece, "base64")];

function recorder(): { sent: string[]; send: (piece: string) => void } {
  const sent: string[] = [];
  return { sent, send: (piece) => sent.push(piece) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe("AudioAppendBatcher", () => {
  it("at 0 ms sends every piece as it comes, a carrier's base64 as it is", () => {
    const out = recorder();
    const batcher = new AudioAppendBatcher(0, 8000, out.send);
    batcher.push(frame(1), "CARRIER-BASE64");
    batcher.push(frame(2));
    expect(out.sent).toEqual(["CARRIER-BASE64", Buffer.from(frame(2)).toString("base64")]);
    expect(batcher.heldBytes).toBe(0);
  });

  it("gathers 20 ms frames into one 60 ms piece, in order, and sends nothing before", () => {
    const out = recorder();
    const batcher = new AudioAppendBatcher(60, 8000, out.send);
    batcher.push(frame(1), "ignored: the piece is re-encoded");
    batcher.push(frame(2));
    expect(out.sent).toEqual([]);
    expect(batcher.heldBytes).toBe(320);
    batcher.push(frame(3));
    expect(out.sent).toHaveLength(1);
    expect(decoded(out.sent[0]!)).toEqual([...frame(1), ...frame(2), ...frame(3)]);
    expect(batcher.heldBytes).toBe(0);
  });

  it("flush() sends what is held now (before another message), and nothing when nothing is held", () => {
    const out = recorder();
    const batcher = new AudioAppendBatcher(100, 8000, out.send);
    batcher.flush();
    batcher.push(frame(7));
    batcher.flush();
    batcher.flush();
    expect(out.sent.map(decoded)).toEqual([[...frame(7)]]);
  });

  it("a piece larger than the target goes out whole, after what was held", () => {
    const out = recorder();
    const batcher = new AudioAppendBatcher(40, 8000, out.send);
    batcher.push(frame(1));
    const big = new Uint8Array(800).fill(9);
    batcher.push(big, "BIG");
    expect(out.sent).toEqual([Buffer.from(frame(1)).toString("base64"), "BIG"]);
  });

  it("sizes pieces by the format's byte rate (PCM16 at 24 kHz: 48 bytes a ms)", () => {
    const out = recorder();
    const batcher = new AudioAppendBatcher(60, 48_000, out.send);
    const pcmFrame = new Uint8Array(960).fill(5); // 20 ms
    batcher.push(pcmFrame);
    batcher.push(pcmFrame);
    expect(out.sent).toEqual([]);
    batcher.push(pcmFrame);
    expect(decoded(out.sent[0]!)).toHaveLength(2880);
  });

  it("sends held audio once it has waited the piece's length when frames stop coming", () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "performance"] });
    const out = recorder();
    const batcher = new AudioAppendBatcher(100, 8000, out.send);
    batcher.push(frame(4));
    vi.advanceTimersByTime(60);
    expect(out.sent).toEqual([]);
    vi.advanceTimersByTime(60);
    expect(out.sent.map(decoded)).toEqual([[...frame(4)]]);
    expect(batcher.heldBytes).toBe(0);
  });

  it("the sweep sends each of many streams' held audio once it is due, whatever order they stop and close in", () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "performance"] });
    const outs = Array.from({ length: 7 }, () => recorder());
    const batchers = outs.map((o) => new AudioAppendBatcher(100, 8000, o.send));
    // Stream k sends k + 1 frames, one every 20 ms, then stops; stream 3 is closed while it holds audio.
    for (let t = 0; t < 8; t++) {
      for (const [k, b] of batchers.entries()) if (t <= k) b.push(frame(10 * k + t));
      if (t === 2) batchers[3]!.close();
      vi.advanceTimersByTime(20);
    }
    vi.advanceTimersByTime(200);
    for (const [k, o] of outs.entries()) {
      const frames = Array.from({ length: k + 1 }, (_, t) => [...frame(10 * k + t)]);
      const expected =
        k === 3
          ? []
          : k === 4
            ? [frames.flat()]
            : k < 4
              ? [frames.flat()]
              : [frames.slice(0, 5).flat(), frames.slice(5).flat()];
      expect(o.sent.map(decoded), `stream ${k}`).toEqual(expected);
      expect(batchers[k]!.heldBytes).toBe(0);
    }
  });

  it("a send that fails in the sweep drops that piece without throwing; later audio still goes", () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "performance"] });
    const sent: string[] = [];
    let broken = true;
    const batcher = new AudioAppendBatcher(40, 8000, (piece) => {
      if (broken) throw new Error("socket closed");
      sent.push(piece);
    });
    batcher.push(frame(1));
    expect(() => vi.advanceTimersByTime(80)).not.toThrow();
    expect(batcher.heldBytes).toBe(0);
    broken = false;
    batcher.push(frame(2));
    batcher.push(frame(3));
    expect(sent.map(decoded)).toEqual([[...frame(2), ...frame(3)]]);
  });

  it("close() drops what is held and ignores later audio; the sweep sends nothing for it", () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "performance"] });
    const out = recorder();
    const batcher = new AudioAppendBatcher(100, 8000, out.send);
    batcher.push(frame(1));
    batcher.close();
    batcher.close();
    batcher.push(frame(2), "LATE");
    vi.advanceTimersByTime(300);
    expect(out.sent).toEqual([]);
  });

  it("never gathers a format without a byte rate (Opus: packets cannot be concatenated); each goes as it comes", () => {
    const out = recorder();
    const batcher = new AudioAppendBatcher(60, 0, out.send);
    const packets = [new Uint8Array(3).fill(7), new Uint8Array(41).fill(8), new Uint8Array(120).fill(9)];
    batcher.push(packets[0]!, "CARRIER-OPUS");
    batcher.push(packets[1]!);
    batcher.push(packets[2]!);
    expect(batcher.heldBytes).toBe(0);
    expect(out.sent).toEqual([
      "CARRIER-OPUS",
      ...packets.slice(1).map((p) => Buffer.from(p).toString("base64")),
    ]);
  });

  it("takes a bad piece length as 0 (every piece sent as it comes)", () => {
    const out = recorder();
    for (const ms of [Number.NaN, -20, Number.POSITIVE_INFINITY]) {
      const batcher = new AudioAppendBatcher(ms, 8000, out.send);
      batcher.push(frame(1), "X");
    }
    expect(out.sent).toEqual(["X", "X", "X"]);
  });
});
