/**
 * G.711 u-law. Decoding follows ITU-T G.711 (14-bit levels scaled to 16 bits);
 * encoding uses a 16,384-entry table built the way ffmpeg's `pcm_mulaw`
 * encoder builds it, so every input rounds to the nearest level and our output
 * is byte-identical with ffmpeg's (tests check all 65,536 inputs).
 */
import { buildXlawEncodeTable, checkedOut } from "./g711-table.js";

const BIAS = 0x84;

function ulawToLinear(code: number): number {
  const u = ~code & 0xff;
  let t = ((u & 0x0f) << 3) + BIAS;
  t <<= (u & 0x70) >> 4;
  return u & 0x80 ? BIAS - t : t - BIAS;
}

const DECODE = new Int16Array(256);
for (let i = 0; i < 256; i++) DECODE[i] = ulawToLinear(i);
const ENCODE = buildXlawEncodeTable(ulawToLinear, 0xff);

/** Decodes u-law bytes to PCM16. Writes into `out` when given (it must be at least as long as `bytes`). */
export function decodeMulaw(bytes: Uint8Array, out?: Int16Array): Int16Array {
  const n = bytes.length;
  const dst = out === undefined ? new Int16Array(n) : checkedOut(out, n);
  for (let i = 0; i < n; i++) dst[i] = DECODE[bytes[i]!]!;
  return out === undefined || out.length === n ? dst : dst.subarray(0, n);
}

/** Encodes PCM16 to u-law bytes. Writes into `out` when given (it must be at least as long as `pcm`). */
export function encodeMulaw(pcm: Int16Array, out?: Uint8Array): Uint8Array {
  const n = pcm.length;
  const dst = out === undefined ? new Uint8Array(n) : checkedOut(out, n);
  for (let i = 0; i < n; i++) dst[i] = ENCODE[(pcm[i]! + 32768) >> 2]!;
  return out === undefined || out.length === n ? dst : dst.subarray(0, n);
}
