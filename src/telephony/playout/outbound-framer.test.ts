import { describe, expect, it } from "vitest";
import { OutboundFramer, type FramerOutput } from "./outbound-framer.js";

function ramp(n: number, start = 0): Uint8Array {
  return Uint8Array.from({ length: n }, (_, i) => (start + i) % 251);
}

function drain(framer: OutboundFramer): FramerOutput[] {
  const out: FramerOutput[] = [];
  while (framer.hasBurst) out.push(...framer.takeBurst());
  return out;
}

function media(out: FramerOutput[]): Uint8Array[] {
  return out.flatMap((o) => (o.type === "media" ? [o.payload] : []));
}

describe("OutboundFramer", () => {
  it("cuts arbitrary chunk sizes into exact 160-byte frames without losing or reordering a byte", () => {
    const framer = new OutboundFramer();
    const input = ramp(160 * 25 + 37);
    // Deltas of awkward sizes, as providers send them.
    let at = 0;
    for (const size of [1, 159, 161, 999, 7, 2000, 500]) {
      framer.push("item-1", input.subarray(at, Math.min(input.length, at + size)));
      at += size;
    }
    framer.push("item-1", input.subarray(at));
    framer.end("item-1");
    const frames = media(drain(framer));
    expect(frames.every((f) => f.byteLength === 160)).toBe(true);
    expect(frames).toHaveLength(26);
    const joined = Buffer.concat(frames);
    expect(joined.subarray(0, input.length)).toEqual(Buffer.from(input));
    // The last partial frame is padded with u-law silence.
    expect([...joined.subarray(input.length)]).toEqual(new Array(160 - 37).fill(0xff));
  });

  it("holds a partial frame until more audio arrives or the item ends", () => {
    const framer = new OutboundFramer();
    framer.push("a", ramp(100));
    expect(framer.hasBurst).toBe(false);
    expect(framer.takeBurst()).toEqual([]);
    framer.push("a", ramp(60, 100));
    const burst = framer.takeBurst();
    expect(burst.map((o) => o.type)).toEqual(["media", "mark"]);
    expect(Buffer.from((burst[0] as { payload: Uint8Array }).payload)).toEqual(Buffer.from(ramp(160)));
  });

  it("follows each burst of at most maxFramesPerBurst frames with one mark", () => {
    const framer = new OutboundFramer({ maxFramesPerBurst: 4 });
    framer.push("a", ramp(160 * 10));
    framer.end("a");
    const out = drain(framer);
    expect(out.map((o) => (o.type === "media" ? "M" : "k")).join("")).toBe("MMMMkMMMMkMMk");
    const marks = out.filter((o) => o.type === "mark");
    expect(marks.map((m) => m.type === "mark" && m.endOfItem)).toEqual([false, false, true]);
    expect(new Set(marks.map((m) => m.type === "mark" && m.name)).size).toBe(3);
  });

  it("never mixes two items in one frame or one burst", () => {
    const framer = new OutboundFramer();
    framer.push("a", ramp(250));
    framer.push("b", ramp(170));
    framer.end("b");
    const out = drain(framer);
    expect(out.map((o) => `${o.type}:${o.itemId}`)).toEqual([
      "media:a",
      "media:a",
      "mark:a",
      "media:b",
      "media:b",
      "mark:b",
    ]);
    const aFrames = media(out.filter((o) => o.itemId === "a"));
    expect([...aFrames[1]!.subarray(90)]).toEqual(new Array(70).fill(0xff));
  });

  it("emits an end-of-item mark alone when the item ends after its audio was taken", () => {
    const framer = new OutboundFramer();
    framer.push("a", ramp(320));
    expect(framer.takeBurst().map((o) => o.type)).toEqual(["media", "media", "mark"]);
    expect(framer.hasBurst).toBe(false);
    framer.end("a");
    const burst = framer.takeBurst();
    expect(burst).toEqual([{ type: "mark", itemId: "a", name: expect.any(String), endOfItem: true }]);
    expect(framer.hasBurst).toBe(false);
  });

  it("reports frame duration and queued audio", () => {
    const framer = new OutboundFramer();
    framer.push("a", ramp(800));
    expect(framer.frameMs).toBe(20);
    expect(framer.queuedMs).toBe(100);
    framer.takeBurst();
    expect(framer.queuedMs).toBe(0);
  });

  it("lets the sender stop between bursts (backpressure) without losing audio", () => {
    const framer = new OutboundFramer({ maxFramesPerBurst: 2 });
    framer.push("a", ramp(160 * 6));
    let buffered = 0;
    const sent: FramerOutput[] = [];
    const pump = (highWater: number) => {
      while (framer.hasBurst && buffered < highWater) {
        for (const o of framer.takeBurst()) {
          sent.push(o);
          if (o.type === "media") buffered += o.payload.byteLength;
        }
      }
    };
    pump(300);
    expect(media(sent)).toHaveLength(2);
    buffered = 0; // the socket drained
    pump(10_000);
    expect(media(sent)).toHaveLength(6);
  });

  it("clear() drops queued audio and reports how much", () => {
    const framer = new OutboundFramer();
    framer.push("a", ramp(1600));
    framer.takeBurst();
    framer.push("a", ramp(800));
    expect(framer.clear()).toBe(100);
    expect(framer.hasBurst).toBe(false);
    expect(framer.queuedMs).toBe(0);
  });

  it("bounds the queue", () => {
    const framer = new OutboundFramer({ maxQueuedBytes: 1000 });
    framer.push("a", ramp(900));
    expect(() => framer.push("a", ramp(200))).toThrow(expect.objectContaining({ code: "payload_too_large" }));
  });

  it("validates its options at construction", () => {
    expect(() => new OutboundFramer({ frameBytes: 0 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => new OutboundFramer({ silenceByte: 256 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });
});

describe("OutboundFramer marks with minFramesPerMark", () => {
  it("marks small bursts only once enough frames went unmarked, and always at the item's end", () => {
    const framer = new OutboundFramer({ minFramesPerMark: 3 });
    const shapes: string[] = [];
    for (let i = 0; i < 7; i++) {
      framer.push("a", ramp(160)); // a provider streaming 20 ms deltas
      shapes.push(
        framer
          .takeBurst()
          .map((o) => (o.type === "media" ? "M" : "k"))
          .join(""),
      );
    }
    framer.end("a");
    shapes.push(
      framer
        .takeBurst()
        .map((o) => (o.type === "mark" && o.endOfItem ? "E" : o.type))
        .join(""),
    );
    expect(shapes).toEqual(["M", "M", "Mk", "M", "M", "Mk", "M", "E"]);
  });

  it("puts whole frames of a large delta in one message per burst when the carrier plays any length, marks unchanged", () => {
    const input = ramp(160 * 23 + 37);
    const one = new OutboundFramer({ minFramesPerMark: 5 });
    const many = new OutboundFramer({ minFramesPerMark: 5, maxFramesPerMessage: 10 });
    for (const f of [one, many]) {
      f.push("item-1", input.subarray(0, 1600)); // a 200 ms delta
      f.push("item-1", input.subarray(1600));
      f.end("item-1");
    }
    const a = drain(one);
    const b = drain(many);
    // The same audio, byte for byte, the last partial frame padded alone.
    expect(Buffer.concat(media(b))).toEqual(Buffer.concat(media(a)));
    expect(media(b).map((p) => p.byteLength)).toEqual([1600, 1600, 480, 160]);
    expect(b.flatMap((o) => (o.type === "media" ? [o.frames] : []))).toEqual([10, 10, 3, 1]);
    expect(b.reduce((ms, o) => ms + (o.type === "media" ? o.ms : 0), 0)).toBe(480);
    // Marks where the 20 ms framer puts them: after the same frames, with the same names.
    const marks = (out: FramerOutput[]) => {
      let frames = 0;
      return out.flatMap((o) =>
        o.type === "media" ? ((frames += o.frames), []) : [[o.name, frames, o.endOfItem]],
      );
    };
    expect(marks(b)).toEqual(marks(a.map((o) => (o.type === "media" ? { ...o, frames: 1 } : o))));
  });
});
