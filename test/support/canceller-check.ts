/**
 * The check every echo peer of the benches must pass (test/bench/*-peer.test.ts): 6 s of espeak-ng answer
 * over a 6 dB room echo (120 ms) through a canceller, given the played audio or silence as its reference.
 * A peer that cancelled nothing would make every figure beside it a lie.
 */
import { espeak } from "../../bench/lib/corpus-audio.js";
import { ANSWER } from "../../bench/lib/turn-corpus.js";
import { EchoPath, roomResponse } from "./echo-path.js";

const FRAME = 160;

/**
 * `cancel(reference, mic)` takes one 20 ms frame of each and returns the canceller's output for it.
 * Returns the dB the canceller took off over the last 2 s (input power over output power).
 */
export function attenuationDb(
  cancel: (reference: Int16Array, mic: Int16Array) => Int16Array,
  withReference: boolean,
): number {
  const answer = Int16Array.from(espeak(ANSWER).subarray(0, 6 * 8000), (v) => Math.round(v));
  const path = new EchoPath({ delayMs: 120, lossDb: 6, response: roomResponse(3) });
  let input = 0;
  let output = 0;
  for (let at = 0; at + FRAME <= answer.length; at += FRAME) {
    const played = answer.subarray(at, at + FRAME);
    path.playedPcm(played);
    const mic = Int16Array.from(path.next(), (v) => Math.round(v));
    const out = cancel(withReference ? played : new Int16Array(FRAME), mic);
    if (out.length !== FRAME) throw new Error(`the canceller returned ${out.length} samples for ${FRAME}`);
    if (at < 4 * 8000) continue;
    for (let i = 0; i < FRAME; i++) {
      input += mic[i]! * mic[i]!;
      output += out[i]! * out[i]!;
    }
  }
  return 10 * Math.log10(input / output);
}
