/**
 * G.711 A-law. Decoding follows ITU-T G.711 (13-bit levels scaled to 16 bits);
 * encoding uses a 16,384-entry table built the way ffmpeg's `pcm_alaw`
 * encoder builds it, so every input rounds to the nearest level and our output
 * is byte-identical with ffmpeg's (tests check all 65,536 inputs).
 */
import { buildXlawEncodeTable, checkedOut } from "./g711-table.js";

function alawToLinear(code: number): number {
  // Even bits are inverted on the wire (G.711 section 2).
  const a = code ^ 0x55;
  const seg = (a & 0x70) >> 4;
  let t = a & 0x0f;
  t = seg === 0 ? (t + t + 1) << 3 : (t + t + 1 + 32) << (seg + 2);
  return a & 0x80 ? t : -t;
}

const DECODE = new Int16Array(256);
for (let i = 0; i < 256; i++) DECODE[i] = alawToLinear(i);
const ENCODE = buildXlawEncodeTable(alawToLinear, 0xd5);

/** Decodes A-law bytes to PCM16. Writes into `out` when given (it must be at least as long as `bytes`). */
export function decodeAlaw(bytes: Uint8Array, out?: Int16Array): Int16Array {
  const n = bytes.length;
  const dst = out === undefined ? new Int16Array(n) : checkedOut(out, n);
  for (let i = 0; i < n; i++) dst[i] = DECODE[bytes[i]!]!;
  return out === undefined || out.length === n ? dst : dst.subarray(0, n);
}

/** Encodes PCM16 to A-law bytes. Writes into `out` when given (it must be at least as long as `pcm`). */
export function encodeAlaw(pcm: Int16Array, out?: Uint8Array): Uint8Array {
  const n = pcm.length;
  const dst = out === undefined ? new Uint8Array(n) : checkedOut(out, n);
  for (let i = 0; i < n; i++) dst[i] = ENCODE[(pcm[i]! + 32768) >> 2]!;
  return out === undefined || out.length === n ? dst : dst.subarray(0, n);
}
