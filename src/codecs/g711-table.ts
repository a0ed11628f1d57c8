import { CodecError } from "./codec-error.js";

/**
 * Builds a 14-bit-indexed linear -> G.711 table the way ffmpeg's
 * pcm_tablegen.h does: each level owns the inputs up to the midpoint to the
 * next level, so encoding rounds to the nearest level. Indexing by
 * `(sample + 32768) >> 2` drops the two bits neither law can represent.
 */
export function buildXlawEncodeTable(toLinear: (code: number) => number, mask: number): Uint8Array {
  const table = new Uint8Array(16384);
  let j = 1;
  table[8192] = mask;
  for (let i = 0; i < 127; i++) {
    const v1 = toLinear(i ^ mask);
    const v2 = toLinear((i + 1) ^ mask);
    const v = (v1 + v2 + 4) >> 3;
    for (; j < v; j++) {
      table[8192 - j] = i ^ (mask ^ 0x80);
      table[8192 + j] = i ^ mask;
    }
  }
  for (; j < 8192; j++) {
    table[8192 - j] = 127 ^ (mask ^ 0x80);
    table[8192 + j] = 127 ^ mask;
  }
  table[0] = table[1]!;
  return table;
}

export function outputTooSmall(have: number, need: number): CodecError {
  return new CodecError("invalid_audio", `output buffer holds ${have} samples, ${need} needed`);
}
