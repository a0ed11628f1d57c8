import { describe, expect, it } from "vitest";
import { decodeMulaw, encodeMulaw } from "../codecs/index.js";
import { audioFromBytes, encodedChunk, pcmChunk, PCM16_16K, ULAW_8K } from "../core/index.js";
import { lineAudio } from "./line-audio.js";
import { CallPlayout, type PlayoutLine } from "./playout/call-playout.js";

function tone(samples: number, rate: number): Int16Array {
  return Int16Array.from({ length: samples }, (_, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)),
  );
}

describe("line audio", () => {
  it("u-law 8 kHz: 160-byte frames, 0xff silence, decodes to PCM16 8 kHz and encodes PCM back", () => {
    const line = lineAudio(ULAW_8K);
    expect(line).toMatchObject({ bytesPerMs: 8, frameBytes: 160, silenceByte: 0xff });
    expect(line.pcmFormat).toEqual({ encoding: "pcm16", sampleRate: 8000, channels: 1 });
    const pcm = tone(160, 8000);
    const ulaw = encodeMulaw(pcm);
    expect(line.toPcm(ulaw)).toEqual(decodeMulaw(ulaw));
    expect(line.fromChunk(pcmChunk(pcm, line.pcmFormat))).toEqual(ulaw);
    // An encoded passthrough in the line's own format goes on untouched (the same bytes).
    expect(line.fromChunk(encodedChunk(ulaw, ULAW_8K))).toBe(ulaw);
  });

  it("L16 16 kHz: 640-byte frames of 20 ms, PCM both ways untouched", () => {
    const line = lineAudio(PCM16_16K);
    expect(line).toMatchObject({ bytesPerMs: 32, frameBytes: 640, silenceByte: 0 });
    const bytes = new Uint8Array(tone(320, 16_000).buffer);
    const played = line.fromChunk(audioFromBytes(bytes, PCM16_16K));
    expect(played).toEqual(bytes);
    expect(played.buffer).toBe(bytes.buffer); // no copy
    expect(Array.from(line.toPcm(bytes))).toEqual(Array.from(tone(320, 16_000)));
    expect(() => line.toPcm(new Uint8Array(3))).toThrow(expect.objectContaining({ code: "invalid_audio" }));
  });

  it("refuses audio in another format, and lines no carrier has", () => {
    expect(() => lineAudio(ULAW_8K).fromChunk(pcmChunk(new Int16Array(10), PCM16_16K))).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    // Encoded audio of another codec is refused, never sent to the line as if it were the line's.
    expect(() =>
      lineAudio(ULAW_8K).fromChunk(
        encodedChunk(new Uint8Array(10), { encoding: "g711_alaw", sampleRate: 8000, channels: 1 }),
      ),
    ).toThrow(
      expect.objectContaining({ code: "invalid_audio", message: expect.stringContaining("g711_alaw") }),
    );
    expect(() => lineAudio(PCM16_16K).fromChunk(encodedChunk(new Uint8Array(10), ULAW_8K))).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(() => lineAudio({ encoding: "pcm16", sampleRate: 24_000, channels: 1 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => lineAudio({ encoding: "opus", sampleRate: 16_000, channels: 1 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });

  it("a PCM16 16 kHz line's playout sends 640-byte frames and counts heard time in ms", () => {
    const sent: Uint8Array[] = [];
    const marks: string[] = [];
    const wire: PlayoutLine = {
      media: (a) => sent.push(a),
      mark: (name) => marks.push(name),
      clear: () => undefined,
      bufferedAmount: 0,
    };
    const playout = new CallPlayout({ line: lineAudio(PCM16_16K) });
    playout.attach(wire);
    // 110 ms of audio: five whole frames and a padded sixth.
    playout.write(audioFromBytes(new Uint8Array(110 * 32).fill(1), PCM16_16K), { turnId: "t", itemId: "i" });
    void playout.drained("i", new AbortController().signal);
    expect(sent.every((f) => f.byteLength === 640)).toBe(true);
    expect(sent).toHaveLength(6);
    expect(Array.from(sent[5]!.subarray(320))).toEqual(new Array(320).fill(0));
    for (const m of marks) playout.markPlayed(m);
    expect(playout.playing).toBe(false);
    playout.close();
  });
});
