import { describe, expect, it } from "vitest";
import { PageAudioSink } from "./page-audio-sink.js";

const chunk = (samples: number) => ({
  data: new Uint8Array(samples * 2),
  format: { encoding: "pcm16" as const, sampleRate: 24_000, channels: 1 },
});

describe("PageAudioSink.mute", () => {
  it("keeps a muted turn's audio out of the page and off the playout clock; other turns play", () => {
    const sent: (Uint8Array | string)[] = [];
    const now = 1_000_000;
    const sink = new PageAudioSink(
      (d) => sent.push(d),
      () => now,
    );
    sink.mute("chat-turn");
    sink.write(chunk(2400), { turnId: "chat-turn", itemId: "i1" });
    expect(sent).toHaveLength(0);
    expect(sink.audibleUntil).toBe(0);
    expect(sink.audible()).toBe(false);
    sink.write(chunk(2400), { turnId: "spoken", itemId: "i2" });
    expect(sent).toHaveLength(1);
    expect(sink.audibleUntil).toBe(now + 50 + 100);
  });
});
