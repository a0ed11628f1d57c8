import { describe, expect, it } from "vitest";
import { encodedChunk, pcmChunk } from "../../core/audio-chunk.js";
import { ULAW_8K } from "../../core/talk-types.js";
import { PageAudioSink } from "./page-audio-sink.js";

const chunk = (samples: number) =>
  pcmChunk(new Int16Array(samples), { encoding: "pcm16", sampleRate: 24_000, channels: 1 });

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

describe("PageAudioSink.write", () => {
  it("plays PCM samples as a capture frame; encoded audio is refused with invalid_audio, not played as noise", () => {
    const sent: (Uint8Array | string)[] = [];
    const sink = new PageAudioSink(
      (d) => sent.push(d),
      () => 1_000_000,
    );
    expect(() =>
      sink.write(encodedChunk(new Uint8Array(800).fill(0x55), ULAW_8K), { turnId: "t", itemId: "i" }),
    ).toThrow(
      expect.objectContaining({ code: "invalid_audio", message: expect.stringContaining("g711_ulaw") }),
    );
    expect(sent).toHaveLength(0);
    expect(sink.audibleUntil).toBe(0);
    const samples = Int16Array.from({ length: 480 }, (_, i) => i - 240);
    sink.write(pcmChunk(samples, { encoding: "pcm16", sampleRate: 24_000, channels: 1 }), {
      turnId: "t",
      itemId: "i",
    });
    expect(sent).toHaveLength(1);
    const frame = sent[0] as Uint8Array;
    // The frame ends with the samples' little-endian bytes.
    expect(Buffer.from(frame.subarray(frame.byteLength - 960)).equals(Buffer.from(samples.buffer))).toBe(
      true,
    );
    expect(sink.audibleUntil).toBe(1_000_000 + 50 + 20);
  });
});
