import { describe, expect, it } from "vitest";
import { EchoPath, ECHO_RETURN_LOSS_DB } from "./echo-path.js";

/** Mean square of a level in dBFS, and back (rounded). */
const ms = (dbfs: number) => 32768 ** 2 * 10 ** (dbfs / 10);
const db = (meanSquare: number) => Math.round(10 * Math.log10(meanSquare / 32768 ** 2));

/** An answer's level envelope: words at -18..-30 dBFS with a short pause every 13 frames (deterministic). */
const answerLevel = (k: number) => (k % 13 < 2 ? -90 : -18 - ((k * 7) % 13));

/**
 * `frames` frames of an answer whose echo comes back `delay` frames later `returnDb` under it, over line noise
 * at -66 dBFS; `start` continues an earlier feed's stream time. Returns the references fed (mean square).
 */
function feedEcho(path: EchoPath, frames: number, delay: number, returnDb: number, start = 0): number[] {
  const refs: number[] = [];
  for (let k = start; k < start + frames; k++) {
    const reference = ms(answerLevel(k));
    const source = k - delay >= 0 ? ms(answerLevel(k - delay)) : 0;
    path.frame(reference, source * 10 ** (-returnDb / 10) + ms(-66));
    refs.push(reference);
  }
  return refs;
}

describe("EchoPath", () => {
  it("assumes the loudest return and knows no delay until it has measured them", () => {
    const path = new EchoPath(15, 0);
    feedEcho(path, 40, 4, 6);
    expect(path.delayFrames).toBeUndefined();
    expect(path.measuredReturn).toBeUndefined();
    expect(path.echoReturn).toBeCloseTo(10 ** (-ECHO_RETURN_LOSS_DB / 10));
    expect(path.overEcho(ms(-10), 0)).toBe(false);
    expect(path.echoAtDelay()).toBeUndefined();
  });

  it("finds the echo's delay and return from the level envelopes", () => {
    const path = new EchoPath(15, 0);
    feedEcho(path, 400, 4, 6);
    expect(path.delayFrames).toBe(4);
    // The lowest window's ratio is the return (6 dB); the bar's return has 3 dB of headroom over it.
    expect(db(path.measuredReturn! * 32768 ** 2)).toBe(-6);
    expect(db(path.echoReturn * 32768 ** 2)).toBe(-3);
    expect(path.playing).toBe(true);
  });

  it("measures the return one window after an answer's lead, wherever the answer starts on the call's clock", () => {
    for (const start of [41, 50, 80]) {
      const path = new EchoPath(15, 0);
      for (let k = 0; k < start; k++) path.frame(0, ms(-66));
      // The first 25 frames (a mirror's lead) are not measured; the window of 50 starts after them.
      feedEcho(path, 74, 4, 6, start);
      expect(path.measuredReturn, `answer from frame ${start}`).toBeUndefined();
      feedEcho(path, 1, 4, 6, start + 74);
      // Before the delay is known the window sets each caller frame against the reference of its own frame:
      // 4 frames of 50 misaligned, so about the return.
      expect(db(path.measuredReturn! * 32768 ** 2), `answer from frame ${start}`).toBeGreaterThanOrEqual(-7);
      expect(db(path.measuredReturn! * 32768 ** 2), `answer from frame ${start}`).toBeLessThanOrEqual(-5);
    }
  });

  it("holds the delay while the caller talks: their speech is not the echo arriving later", () => {
    const path = new EchoPath(15, 0);
    feedEcho(path, 400, 4, 6);
    path.callerSpeaking();
    // The echo now seems 9 frames late, for less than the 100 frames the delay is estimated over.
    feedEcho(path, 90, 9, 6, 400);
    expect(path.delayFrames).toBe(4);
    // Long after the caller, the envelopes are the echo's alone again and the new delay is taken.
    feedEcho(path, 300, 9, 6, 490);
    expect(path.delayFrames).toBe(9);
  });

  it("tells a caller-channel frame over the echo the reference predicts in it from one at it", () => {
    const path = new EchoPath(15, 0);
    const refs = feedEcho(path, 400, 4, 6);
    // The loudest reference frame from 2 newer than the delay to 6 older, at the return, decayed 2 dB a frame
    // past the delay's next: the echo predicted in the newest caller frame.
    let predicted = 0;
    for (let lag = 2; lag <= 10; lag++)
      predicted = Math.max(
        predicted,
        refs[refs.length - 1 - lag]! * 10 ** (-(2 * Math.max(0, lag - 5)) / 10),
      );
    predicted *= path.measuredReturn!;
    expect(path.overEcho(predicted * 2.1, 0)).toBe(true);
    expect(path.overEcho(predicted * 1.9, 0)).toBe(false);
    // At the delay itself, the echo the filter should find there.
    expect(path.echoAtDelay()).toBeCloseTo(refs[refs.length - 5]! * path.measuredReturn!, -3);
  });

  it("stops playing once the tail has passed in silence", () => {
    const path = new EchoPath(15, 0);
    feedEcho(path, 100, 4, 6);
    for (let k = 0; k < 15; k++) path.frame(0, ms(-66));
    expect(path.playing).toBe(false);
    expect(db(path.noise)).toBe(-66);
  });
});
