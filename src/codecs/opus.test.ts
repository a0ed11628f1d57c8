import { afterAll, describe, expect, it } from "vitest";
import { CodecError } from "./codec-error.js";
import { createOpusDecoder, type OpusDecoder } from "./opus-decoder.js";
import { createOpusEncoder, type OpusEncoder } from "./opus-encoder.js";
import { opusPacketHasFec, parseOpusPacket } from "./opus-packet.js";
import { rms } from "./pcm.js";
import { loadSpeech } from "./testing/audio-tools.js";

const speech48 = loadSpeech("goforward.raw", 48000);
const speech16 = loadSpeech("goforward.raw", 16000);

const owned: Array<OpusEncoder | OpusDecoder> = [];
function enc(o: Parameters<typeof createOpusEncoder>[0]): OpusEncoder {
  const e = createOpusEncoder(o);
  owned.push(e);
  return e;
}
function dec(o: Parameters<typeof createOpusDecoder>[0]): OpusDecoder {
  const d = createOpusDecoder(o);
  owned.push(d);
  return d;
}
afterAll(() => owned.forEach((o) => o.close()));

function encodeAll(e: OpusEncoder, pcm: Int16Array, frame: number): Uint8Array[] {
  const packets: Uint8Array[] = [];
  for (let o = 0; o + frame <= pcm.length; o += frame) packets.push(e.encode(pcm.subarray(o, o + frame)));
  return packets;
}

/** Peak normalised cross-correlation of `a` and `b` over lags 0..maxLag of `b` behind `a`. */
function bestCorrelation(a: Int16Array, b: Int16Array, maxLag: number): number {
  let best = 0;
  for (let lag = 0; lag <= maxLag; lag++) {
    let ab = 0;
    let aa = 0;
    let bb = 0;
    const n = Math.min(a.length, b.length - lag);
    for (let i = 0; i < n; i++) {
      ab += a[i]! * b[i + lag]!;
      aa += a[i]! * a[i]!;
      bb += b[i + lag]! * b[i + lag]!;
    }
    best = Math.max(best, ab / Math.sqrt(aa * bb));
  }
  return best;
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

describe("Opus encoder and decoder over libopus", () => {
  it("decodes 48 kHz speech straight to 16 kHz, 320 samples per 20 ms packet, close to the original", () => {
    const packets = encodeAll(enc({ sampleRate: 48000, bitrate: 64000 }), speech48, 960);
    const d = dec({ sampleRate: 16000 });
    const frames = packets.map((p) => d.decode(p));
    expect(frames.every((f) => f.length === 320)).toBe(true);
    expect(bestCorrelation(speech16.subarray(0, 16000 * 2), concat(frames), 400)).toBeGreaterThan(0.85);
  });

  it.each([8000, 12000, 24000, 48000])("decodes to %i Hz natively", (rate) => {
    const packets = encodeAll(enc({ sampleRate: 16000 }), speech16.subarray(0, 3200), 320);
    const d = dec({ sampleRate: rate });
    for (const p of packets) expect(d.decode(p).length).toBe(rate / 50);
  });

  it("encodes every legal frame duration and rejects others with invalid_audio", () => {
    const e = enc({ sampleRate: 16000 });
    expect(e.frameSizes).toEqual([40, 80, 160, 320, 640, 960]);
    for (const n of e.frameSizes)
      expect(parseOpusPacket(e.encode(speech16.subarray(0, n))).durationUs).toBe(n * 62.5);
    for (const n of [0, 1, 319, 321, 1920]) {
      expect(() => e.encode(new Int16Array(n))).toThrow(expect.objectContaining({ code: "invalid_audio" }));
    }
    expect(e.encode(speech16.subarray(0, 320)).length).toBeGreaterThan(0);
  });

  it("encodes interleaved stereo into stereo packets", () => {
    const e = enc({ sampleRate: 48000, channels: 2, application: "audio", bitrate: 64000 });
    const pcm = new Int16Array(1920);
    for (let i = 0; i < 960; i++) pcm[2 * i] = pcm[2 * i + 1] = speech48[i + 4800]!;
    const packet = e.encode(pcm);
    expect(parseOpusPacket(packet).stereo).toBe(true);
    expect(dec({ sampleRate: 48000, channels: 2 }).decode(packet).length).toBe(1920);
  });

  it("spends more bits at a higher bitrate", () => {
    const frame = speech16.subarray(8000, 8320);
    const low = enc({ sampleRate: 16000, bitrate: 12000 });
    const high = enc({ sampleRate: 16000, bitrate: 64000 });
    let lo = 0;
    let hi = 0;
    for (let i = 0; i < 20; i++) {
      lo += low.encode(frame).length;
      hi += high.encode(frame).length;
    }
    expect(hi).toBeGreaterThan(lo * 2);
  });

  it("embeds in-band FEC only when asked to", () => {
    const withFec = encodeAll(enc({ sampleRate: 16000, fec: true, packetLossPercent: 20 }), speech16, 320);
    const without = encodeAll(enc({ sampleRate: 16000 }), speech16, 320);
    expect(withFec.filter(opusPacketHasFec).length).toBeGreaterThan(withFec.length / 4);
    expect(without.filter(opusPacketHasFec).length).toBe(0);
  });
});

describe("Opus packet loss", () => {
  it("conceals a lost packet with audio of the lost packet's duration that continues the speech", () => {
    const packets = encodeAll(enc({ sampleRate: 16000 }), speech16, 320);
    const d = dec({ sampleRate: 16000 });
    // Lose a packet in the middle of voiced speech (the loudest 20 ms).
    let loudest = 0;
    let at = 0;
    const refDec = dec({ sampleRate: 16000 });
    const levels = packets.map((p) => rms(refDec.decode(p)));
    levels.forEach((l, i) => {
      if (l > loudest && i > 5) [loudest, at] = [l, i];
    });
    for (let i = 0; i < at; i++) d.decode(packets[i]!);
    const concealed = d.decodeLost();
    expect(concealed.length).toBe(320);
    expect(rms(concealed)).toBeGreaterThan(loudest / 20);
    expect(d.decode(packets[at + 1]!).length).toBe(320);
  });

  it("conceals several packets at once and rejects a duration that is not whole frames", () => {
    const d = dec({ sampleRate: 16000 });
    d.decode(enc({ sampleRate: 16000 }).encode(speech16.subarray(8000, 8320)));
    expect(d.decodeLost(60).length).toBe(960);
    expect(() => d.decodeLost(25)).toThrow(expect.objectContaining({ code: "invalid_options" }));
    expect(() => d.decodeLost(200)).toThrow(expect.objectContaining({ code: "invalid_options" }));
  });

  it("returns silence for a loss before the first packet", () => {
    const lost = dec({ sampleRate: 16000 }).decodeLost();
    expect(lost.length).toBe(320);
    expect(lost.every((v) => v === 0)).toBe(true);
  });
});

describe("Opus bad input", () => {
  const good = createOpusEncoder({ sampleRate: 16000 }).encode(speech16.subarray(8000, 8320));

  it.each([
    ["empty", new Uint8Array(0)],
    ["a code-3 packet without its frame count", new Uint8Array([good[0]! | 3])],
    ["a code-3 packet announcing 0 frames", new Uint8Array([good[0]! | 3, 0])],
    ["a code-3 packet of more than 120 ms", new Uint8Array([good[0]! | 3, 7, 1, 2, 3])],
    ["a code-1 packet with an odd payload", new Uint8Array([good[0]! | 1, 1, 2, 3])],
    ["a code-2 packet whose first frame runs past the end", new Uint8Array([good[0]! | 2, 200, 1, 2, 3])],
    ["a truncated code-3 VBR packet", new Uint8Array([good[0]! | 3, 0x82, 250, 1, 2])],
  ])("rejects %s with invalid_packet and keeps decoding", (_name, packet) => {
    const d = dec({ sampleRate: 16000 });
    try {
      d.decode(packet);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(CodecError);
      expect((err as CodecError).code).toBe("invalid_packet");
    }
    expect(d.decode(good).length).toBe(320);
  });

  it("survives a thousand random packets without crashing", () => {
    const d = dec({ sampleRate: 16000 });
    let seed = 42;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 16) & 0xff;
    let rejected = 0;
    for (let i = 0; i < 1000; i++) {
      const p = Uint8Array.from({ length: 1 + (rand() % 120) }, rand);
      try {
        d.decode(p);
      } catch (err) {
        expect(err).toBeInstanceOf(CodecError);
        rejected++;
      }
    }
    expect(rejected).toBeGreaterThan(0);
    expect(d.decode(good).length).toBe(320);
  });

  it.each([
    [{ sampleRate: 44100 }, "unsupported_rate"],
    [{ sampleRate: Number.NaN }, "unsupported_rate"],
    [{ sampleRate: 16000, channels: 0 }, "invalid_options"],
    [{ sampleRate: 16000, bitrate: 1000 }, "invalid_options"],
    [{ sampleRate: 16000, complexity: 11 }, "invalid_options"],
    [{ sampleRate: 16000, application: "music" as never }, "invalid_options"],
  ])("rejects encoder options %o with %s", (options, code) => {
    expect(() => createOpusEncoder(options)).toThrow(expect.objectContaining({ code }));
  });

  it("rejects decoder rates libopus cannot decode to", () => {
    expect(() => createOpusDecoder({ sampleRate: 22050 })).toThrow(
      expect.objectContaining({ code: "unsupported_rate" }),
    );
  });

  it("close() is idempotent and later calls throw invalid_state", () => {
    const e = createOpusEncoder({ sampleRate: 16000 });
    const d = createOpusDecoder({ sampleRate: 16000 });
    e.close();
    e.close();
    d.close();
    d.close();
    expect(() => e.encode(new Int16Array(320))).toThrow(expect.objectContaining({ code: "invalid_state" }));
    expect(() => d.decode(good)).toThrow(expect.objectContaining({ code: "invalid_state" }));
    expect(() => d.decodeLost()).toThrow(expect.objectContaining({ code: "invalid_state" }));
  });
});
