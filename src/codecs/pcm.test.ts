import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CODEC_ERROR_CODES, CodecError, bytesFromPcm16, dbfs, pcm16FromBytes, rms } from "./index.js";
import { sine } from "./testing/spectrum.js";

describe("PCM16 helpers", () => {
  it("reads little-endian samples and writes them back", () => {
    const bytes = new Uint8Array([0x01, 0x00, 0xff, 0xff, 0x00, 0x80, 0xff, 0x7f]);
    const pcm = pcm16FromBytes(bytes);
    expect(Array.from(pcm)).toEqual([1, -1, -32768, 32767]);
    expect(Array.from(bytesFromPcm16(pcm))).toEqual(Array.from(bytes));
  });

  it("reads from an odd byte offset (a slice of a network buffer)", () => {
    const backing = new Uint8Array([9, 0x34, 0x12, 0xcd, 0xab]);
    expect(Array.from(pcm16FromBytes(backing.subarray(1)))).toEqual([0x1234, -21555]);
  });

  it("throws invalid_audio on an odd byte length", () => {
    expect(() => pcm16FromBytes(new Uint8Array(3))).toThrow(CodecError);
    expect(() => pcm16FromBytes(new Uint8Array(3))).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(pcm16FromBytes(new Uint8Array(0)).length).toBe(0);
  });

  it("measures a full-scale sine at -3 dBFS and silence at -Infinity", () => {
    expect(dbfs(sine(8000, 1000, 1, 32767))).toBeCloseTo(-3.01, 1);
    expect(rms(new Int16Array([3, -3, 3, -3]))).toBe(3);
    expect(dbfs(new Int16Array(160))).toBe(Number.NEGATIVE_INFINITY);
    expect(rms(new Int16Array(0))).toBe(0);
  });
});

describe("codec error catalogue", () => {
  it("lists every code in docs/codecs.md", () => {
    const doc = readFileSync(new URL("../../docs/codecs.md", import.meta.url), "utf8");
    const documented = [...doc.matchAll(/^\|\s*`([a-z_]+)`\s*\|/gm)].map((m) => m[1]);
    expect(documented.sort()).toEqual(Object.keys(CODEC_ERROR_CODES).sort());
  });

  it("gives each error a stable code, a default message and no retry", () => {
    const err = new CodecError("invalid_packet");
    expect(err.message).toBe(CODEC_ERROR_CODES.invalid_packet);
    expect(err.retryable).toBe(false);
    expect(err.name).toBe("CodecError");
  });
});
