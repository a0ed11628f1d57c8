import { describe, expect, it } from "vitest";
import {
  audioByteLength,
  audioBytes,
  audioFromBytes,
  encodedChunk,
  expectPcm,
  pcmChunk,
  type AudioChunk,
} from "./audio-chunk.js";
import { TalkError } from "./errors.js";
import { PCM16_16K, ULAW_8K } from "./talk-types.js";

const STEREO_48K = { encoding: "pcm16", sampleRate: 48_000, channels: 2 } as const;
const OPUS_48K = { encoding: "opus", sampleRate: 48_000, channels: 1 } as const;

function refusal(f: () => unknown): TalkError {
  try {
    f();
  } catch (err) {
    expect(err).toBeInstanceOf(TalkError);
    return err as TalkError;
  }
  throw new Error("expected invalid_audio");
}

describe("AudioChunk: audio says what it holds", () => {
  it("PCM is samples in a PCM16 format; encoded audio is bytes in its codec's format", () => {
    const samples = Int16Array.from([1, -2, 3, -4]);
    const pcm = pcmChunk(samples, STEREO_48K);
    expect(pcm).toEqual({ kind: "pcm", samples, format: STEREO_48K });
    expect(pcm.samples).toBe(samples); // not copied
    const bytes = Uint8Array.from([0xff, 0x7f, 0x00]);
    expect(encodedChunk(bytes, ULAW_8K)).toEqual({ kind: "encoded", bytes, format: ULAW_8K });
    expect(audioByteLength(pcm)).toBe(8);
    expect(audioByteLength(encodedChunk(bytes, ULAW_8K))).toBe(3);
  });

  it("wire bytes become a chunk of the format's kind: PCM16 as samples (little-endian), the rest as they are", () => {
    const wire = Uint8Array.from([0x01, 0x00, 0xff, 0xff, 0x00, 0x80]);
    const pcm = audioFromBytes(wire, PCM16_16K);
    expect(pcm.kind).toBe("pcm");
    expect(Array.from(expectPcm(pcm, "test").samples)).toEqual([1, -1, -32768]);
    expect(audioBytes(pcm)).toEqual(wire);
    const ulaw = audioFromBytes(wire, ULAW_8K);
    expect(ulaw.kind).toBe("encoded");
    expect(audioBytes(ulaw)).toBe(wire); // passed through untouched
    // An unaligned view is copied into samples, never misread.
    const unaligned = new Uint8Array(7);
    unaligned.set(wire, 1);
    expect(Array.from(expectPcm(audioFromBytes(unaligned.subarray(1), PCM16_16K), "test").samples)).toEqual([
      1, -1, -32768,
    ]);
  });

  it("a kind that does not match its format, or PCM that is not whole frames, is a clear invalid_audio", () => {
    expect(refusal(() => pcmChunk(new Int16Array(4), ULAW_8K))).toMatchObject({
      code: "invalid_audio",
      message: expect.stringContaining("g711_ulaw/8000/1"),
    });
    expect(refusal(() => encodedChunk(new Uint8Array(4), PCM16_16K)).code).toBe("invalid_audio");
    expect(refusal(() => pcmChunk(new Int16Array(3), STEREO_48K))).toMatchObject({
      code: "invalid_audio",
      message: expect.stringContaining("whole frames"),
    });
    expect(refusal(() => audioFromBytes(new Uint8Array(3), PCM16_16K))).toMatchObject({
      code: "invalid_audio",
      message: expect.stringContaining("even number of bytes"),
    });
  });

  it("a consumer of samples refuses an encoded chunk by name, instead of reading its bytes as PCM", () => {
    const opus: AudioChunk = encodedChunk(new Uint8Array(40), OPUS_48K);
    const err = refusal(() => expectPcm(opus, "A meeting's microphone"));
    expect(err.code).toBe("invalid_audio");
    expect(err.message).toBe(
      "A meeting's microphone takes PCM16 samples, not opus/48000/1 (an encoded chunk).",
    );
    expect(err.details).toEqual({ encoding: "opus" });
  });
});
