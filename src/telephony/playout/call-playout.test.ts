import { describe, expect, it } from "vitest";
import { ULAW_8K } from "../../core/talk-types.js";
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
    playout.write({ data: new Uint8Array(1600).fill(0x7f), format: ULAW_8K }, { turnId: "t1", itemId: "i1" });
    playout.clear({ turnId: "t1", itemId: "i1", reason: "barge_in" });
    playout.clear({ turnId: "t1", itemId: "i1", reason: "barge_in" }); // the pipeline's clear after the adapter's
    expect(sent.filter((m) => m["event"] === "clear")).toHaveLength(1);
    expect(cleared).toHaveLength(1);
    playout.write({ data: new Uint8Array(160).fill(0x7f), format: ULAW_8K }, { turnId: "t2", itemId: "i2" });
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
    playout.write({ data: new Uint8Array(160).fill(0x7f), format: ULAW_8K }, { turnId: "t1", itemId: "i1" });
    order.length = 0;
    playout.clear({ turnId: "t1", itemId: "i1", reason: "barge_in" });
    expect(order).toEqual(["clear", "flush", "metric"]);
  });

  it("keeps what the caller heard across a clear (the truncation point read after it)", () => {
    const { sent, line: l } = line();
    const playout = new CallPlayout({ minFramesPerMark: 5 });
    playout.attach(l);
    playout.write({ data: new Uint8Array(1600).fill(0x7f), format: ULAW_8K }, { turnId: "t1", itemId: "i1" });
    const marks = sent.filter((m) => m["event"] === "mark").map((m) => (m["mark"] as { name: string }).name);
    expect(marks).toHaveLength(1); // 10 frames in one burst, one mark
    playout.markPlayed(marks[0]!);
    playout.clear({ turnId: "t1", itemId: "i1", reason: "barge_in" });
    expect(playout.heardMs("i1")).toBe(200);
  });
});
