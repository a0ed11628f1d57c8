import { describe, expect, it } from "vitest";
import { encodedChunk, pcmChunk } from "../../core/audio-chunk.js";
import { ULAW_8K } from "../../core/talk-types.js";
import { lineAudio } from "../line-audio.js";
import { CallPlayout } from "./call-playout.js";

function line() {
  const sent: Array<Record<string, unknown>> = [];
  return {
    sent,
    line: {
      bufferedAmount: 0,
      media: () => sent.push({ event: "media" }),
      mark: (name: string) => sent.push({ event: "mark", mark: { name } }),
      clear: () => sent.push({ event: "clear" }),
    },
  };
}

describe("CallPlayout clear", () => {
  it("sends clear once for audio on the line; a clear with nothing sent since is not repeated", () => {
    const { sent, line: l } = line();
    const cleared: number[] = [];
    const playout = new CallPlayout({ onClearSent: () => cleared.push(1) });
    playout.attach(l);
    playout.clear({ turnId: "t0", reason: "barge_in" }); // nothing ever sent: nothing to drop
    playout.write(encodedChunk(new Uint8Array(1600).fill(0x7f), ULAW_8K), { turnId: "t1", itemId: "i1" });
    playout.clear({ turnId: "t1", itemId: "i1", reason: "barge_in" });
    playout.clear({ turnId: "t1", itemId: "i1", reason: "barge_in" }); // the pipeline's clear after the adapter's
    expect(sent.filter((m) => m["event"] === "clear")).toHaveLength(1);
    expect(cleared).toHaveLength(1);
    playout.write(encodedChunk(new Uint8Array(160).fill(0x7f), ULAW_8K), { turnId: "t2", itemId: "i2" });
    playout.clear({ turnId: "t2", itemId: "i2", reason: "barge_in" });
    expect(sent.filter((m) => m["event"] === "clear")).toHaveLength(2);
  });

  it("flushes the line right after clear, before the metric and the rest of the barge-in", () => {
    const order: string[] = [];
    const playout = new CallPlayout({ onClearSent: () => order.push("metric") });
    playout.attach({
      bufferedAmount: 0,
      media: () => order.push("media"),
      mark: () => order.push("mark"),
      clear: () => order.push("clear"),
      flush: () => order.push("flush"),
    });
    playout.write(encodedChunk(new Uint8Array(160).fill(0x7f), ULAW_8K), { turnId: "t1", itemId: "i1" });
    order.length = 0;
    playout.clear({ turnId: "t1", itemId: "i1", reason: "barge_in" });
    expect(order).toEqual(["clear", "flush", "metric"]);
  });

  it("keeps what the caller heard across a clear (the truncation point read after it)", () => {
    const { sent, line: l } = line();
    const playout = new CallPlayout({ minFramesPerMark: 5 });
    playout.attach(l);
    playout.write(encodedChunk(new Uint8Array(1600).fill(0x7f), ULAW_8K), { turnId: "t1", itemId: "i1" });
    const marks = sent.filter((m) => m["event"] === "mark").map((m) => (m["mark"] as { name: string }).name);
    expect(marks).toHaveLength(1); // 10 frames in one burst, one mark
    playout.markPlayed(marks[0]!);
    playout.clear({ turnId: "t1", itemId: "i1", reason: "barge_in" });
    expect(playout.heardMs("i1")).toBe(200);
  });
});

describe("CallPlayout pacing by a bounded carrier buffer (maxUnplayedMs)", () => {
  const pcm16k = { encoding: "pcm16", sampleRate: 16_000, channels: 1 } as const;
  const marksOf = (sent: Array<Record<string, unknown>>) =>
    sent.filter((m) => m["event"] === "mark").map((m) => (m["mark"] as { name: string }).name);

  it("a 90 s answer on a 16 kHz line never has more than the bound unacknowledged, and all of it goes out as marks come back", () => {
    const { sent, line: l } = line();
    const playout = new CallPlayout({ line: lineAudio(pcm16k), maxUnplayedMs: 10_000 });
    playout.attach(l);
    // 90 s of PCM16 at 16 kHz (more than the old 30 s the framer held at 32 bytes/ms), written at once.
    for (let s = 0; s < 90; s++)
      playout.write(pcmChunk(new Int16Array(16_000), pcm16k), { turnId: "t1", itemId: "i1" });
    const frames = () => sent.filter((m) => m["event"] === "media").length;
    expect(frames() * 20).toBeLessThanOrEqual(10_000 + 200);
    expect(frames() * 20).toBeGreaterThanOrEqual(10_000);
    expect(playout.unplayedMs).toBeLessThanOrEqual(10_200);
    let acked = 0;
    while (marksOf(sent).length > acked) {
      playout.markPlayed(marksOf(sent)[acked++]!);
      expect(playout.unplayedMs).toBeLessThanOrEqual(10_200);
    }
    expect(frames()).toBe(90 * 50);
    expect(playout.heardMs("i1")).toBe(90_000);
  });

  it("a clear or a new socket empties the carrier's buffer: sending resumes at once", () => {
    const { sent, line: l } = line();
    const playout = new CallPlayout({ line: lineAudio(pcm16k), maxUnplayedMs: 2_000 });
    playout.attach(l);
    playout.write(pcmChunk(new Int16Array(16 * 5_000), pcm16k), { turnId: "t1", itemId: "i1" });
    const before = sent.filter((m) => m["event"] === "media").length;
    expect(before * 20).toBeLessThanOrEqual(2_200);
    const other = line();
    playout.attach(other.line); // the old socket's marks will never come back
    expect(other.sent.filter((m) => m["event"] === "media").length).toBeGreaterThan(0);
    playout.clear({ turnId: "t1", itemId: "i1", reason: "barge_in" });
    expect(playout.unplayedMs).toBe(0);
    playout.write(pcmChunk(new Int16Array(16 * 1_000), pcm16k), { turnId: "t2", itemId: "i2" });
    expect(other.sent.filter((m) => m["event"] === "media").length).toBeGreaterThan(50);
  });

  it("refuses a bound under a second", () => {
    expect(() => new CallPlayout({ maxUnplayedMs: 100 })).toThrow(/maxUnplayedMs/);
  });
});
