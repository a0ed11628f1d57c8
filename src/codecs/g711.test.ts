import { describe, expect, it } from "vitest";
import { decodeAlaw, encodeAlaw } from "./alaw.js";
import { CodecError } from "./codec-error.js";
import { decodeMulaw, encodeMulaw } from "./mulaw.js";
import { bytesOf, run, toInt16 } from "./testing/audio-tools.js";

const ALL_SAMPLES = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
const ALL_CODES = Uint8Array.from({ length: 256 }, (_, i) => i);

function ffmpegEncode(format: "mulaw" | "alaw"): Uint8Array {
  const out = run(
    "ffmpeg",
    ["-v", "error", "-f", "s16le", "-ar", "8000", "-ac", "1", "-i", "pipe:0", "-f", format, "pipe:1"],
    bytesOf(ALL_SAMPLES),
  );
  return new Uint8Array(out);
}

function ffmpegDecode(format: "mulaw" | "alaw"): Int16Array {
  return toInt16(
    run(
      "ffmpeg",
      ["-v", "error", "-f", format, "-ar", "8000", "-ac", "1", "-i", "pipe:0", "-f", "s16le", "pipe:1"],
      ALL_CODES,
    ),
  );
}

function soxDecode(encoding: "mu-law" | "a-law"): Int16Array {
  return toInt16(
    run(
      "sox",
      [
        "-t",
        "raw",
        "-r",
        "8000",
        "-c",
        "1",
        "-e",
        encoding,
        "-b",
        "8",
        "-",
        "-t",
        "raw",
        "-e",
        "signed",
        "-b",
        "16",
        "-",
      ],
      ALL_CODES,
    ),
  );
}

const laws = [
  { name: "u-law", decode: decodeMulaw, encode: encodeMulaw, ffmpeg: "mulaw", sox: "mu-law" },
  { name: "A-law", decode: decodeAlaw, encode: encodeAlaw, ffmpeg: "alaw", sox: "a-law" },
] as const;

describe.each(laws)("G.711 $name", (law) => {
  it("encodes every 16-bit input to the same byte as ffmpeg", () => {
    const ours = law.encode(ALL_SAMPLES);
    const ref = ffmpegEncode(law.ffmpeg);
    expect(ref.length).toBe(65536);
    let mismatches = 0;
    for (let i = 0; i < 65536; i++) if (ours[i] !== ref[i]) mismatches++;
    expect(mismatches).toBe(0);
  });

  it("decodes all 256 codes to the same level as ffmpeg and sox", () => {
    const ours = Array.from(law.decode(ALL_CODES));
    expect(ours).toEqual(Array.from(ffmpegDecode(law.ffmpeg)));
    expect(ours).toEqual(Array.from(soxDecode(law.sox)));
  });

  it("round-trips every code through encode(decode(code))", () => {
    const levels = law.decode(ALL_CODES);
    const back = law.encode(levels);
    for (let c = 0; c < 256; c++) {
      // The two codes for zero (u-law 0x7f / 0xff) both decode to 0; only one can come back.
      if (levels[c] === 0) continue;
      expect(back[c]).toBe(c);
    }
  });

  it("writes into a caller's buffer and returns a view of the used part", () => {
    const out = new Int16Array(10);
    const decoded = law.decode(new Uint8Array([1, 2, 3]), out);
    expect(decoded.length).toBe(3);
    expect(decoded.buffer).toBe(out.buffer);
    const bytes = new Uint8Array(4);
    const encoded = law.encode(new Int16Array([100, -100, 1000, -1000]), bytes);
    expect(encoded).toBe(bytes);
  });

  it("rejects an output buffer that is too small with invalid_audio", () => {
    expect(() => law.decode(new Uint8Array(4), new Int16Array(3))).toThrow(CodecError);
    try {
      law.encode(new Int16Array(4), new Uint8Array(1));
      expect.unreachable();
    } catch (err) {
      expect((err as CodecError).code).toBe("invalid_audio");
    }
  });

  it("handles empty input", () => {
    expect(law.decode(new Uint8Array(0)).length).toBe(0);
    expect(law.encode(new Int16Array(0)).length).toBe(0);
  });
});

describe("G.711 decode tables against ITU-T G.711 levels", () => {
  it("maps the extreme and zero u-law codes to the standard levels", () => {
    expect(Array.from(decodeMulaw(new Uint8Array([0x00, 0x80, 0x7f, 0xff, 0x7e, 0xfe])))).toEqual([
      -32124, 32124, 0, 0, -8, 8,
    ]);
  });
  it("maps the extreme and smallest A-law codes to the standard levels", () => {
    expect(Array.from(decodeAlaw(new Uint8Array([0xaa, 0x2a, 0xd5, 0x55])))).toEqual([32256, -32256, 8, -8]);
  });
});
