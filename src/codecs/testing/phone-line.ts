/**
 * The assistant's audio as it comes back on a caller's phone channel, for
 * tests of the echo path: delayed, attenuated by the echo return loss,
 * smeared by a short 3-tap line response and u-law coded, with the caller's
 * own speech added where given.
 */
import { decodeMulaw, encodeMulaw } from "../mulaw.js";

export interface NearTalker {
  pcm: Int16Array;
  /** Where the caller starts, samples. Default 0. */
  at?: number;
  /** Scale of the caller's samples. Default 1. */
  gain?: number;
}

export function phoneLine(
  far: Int16Array,
  delayMs: number,
  lossDb: number,
  near?: NearTalker,
  sampleRate = 8000,
): Int16Array {
  const delay = Math.round((sampleRate * delayMs) / 1000);
  const loss = 10 ** (-lossDb / 20);
  const taps = [1, 0.35, -0.15];
  const at = near?.at ?? 0;
  const gain = near?.gain ?? 1;
  const mic = new Int16Array(far.length);
  for (let i = 0; i < far.length; i++) {
    let v = 0;
    for (let k = 0; k < taps.length; k++) v += (far[i - delay - k] ?? 0) * taps[k]!;
    v *= loss;
    if (near) v += (near.pcm[i - at] ?? 0) * gain;
    mic[i] = Math.max(-32768, Math.min(32767, Math.round(v)));
  }
  return decodeMulaw(encodeMulaw(mic));
}
