import { describe, expect, it } from "vitest";
import { LineNoise } from "./line-noise.js";

/** Mean square of a level in dBFS. */
const ms = (dbfs: number) => 32768 ** 2 * 10 ** (dbfs / 10);
const db = (meanSquare: number) => Math.round(10 * Math.log10(meanSquare / 32768 ** 2));

/** `seconds` of frames cycling through `levels` (dBFS), each with the echo predicted in it (dBFS, or a number). */
function feed(noise: LineNoise, seconds: number, levels: number[], echo: (level: number) => number) {
  for (let k = 0; k < seconds * 50; k++) {
    const level = levels[k % levels.length]!;
    noise.frame(ms(level), echo(level));
  }
}

describe("LineNoise", () => {
  it("is the quietest frame of the last second, with or without the echo, on a line with no answer", () => {
    const noise = new LineNoise();
    feed(noise, 2, [-66, -60, -63], () => 0);
    expect(db(noise.noise)).toBe(-66);
    expect(db(noise.echoFree)).toBe(-66);
  });

  it("keeps the line's noise under a continuous answer whose every frame the echo accounts for", () => {
    const noise = new LineNoise();
    feed(noise, 2, [-66], () => 0);
    // The answer: the echo's quietest part -40 dBFS, each frame the echo the reference predicts.
    feed(noise, 3, [-26, -32, -40, -30], (level) => ms(level));
    expect(db(noise.noise)).toBe(-40);
    // Held, but never more than 10 dB under the quietest frame of all.
    expect(db(noise.echoFree)).toBe(-50);
  });

  it("rises with noise that is not the echo's (babble switching on mid-answer)", () => {
    const noise = new LineNoise();
    feed(noise, 2, [-66], () => 0);
    feed(noise, 2, [-26, -32, -40, -30], (level) => ms(level));
    // Babble at -34..-38 dBFS over the echo's quiet frames: more than the echo there.
    feed(noise, 2, [-26, -34, -38, -30], (level) => (level <= -34 ? ms(-46) : ms(level)));
    expect(db(noise.echoFree)).toBe(-38);
    expect(db(noise.noise)).toBe(-38);
  });

  it("counts no frame while the echo's delay is unknown (Infinity) and is then the quietest frame of all", () => {
    const noise = new LineNoise();
    feed(noise, 2, [-30, -45], () => Number.POSITIVE_INFINITY);
    expect(db(noise.echoFree)).toBe(-45);
  });

  it("is never over the quietest frame of all", () => {
    const noise = new LineNoise();
    feed(noise, 2, [-50], () => 0);
    // The line gets quieter: an older echo-free block may not stand over the newer quietest frame.
    feed(noise, 2, [-60], () => ms(-60));
    expect(db(noise.noise)).toBe(-60);
    expect(db(noise.echoFree)).toBe(-60);
  });
});
