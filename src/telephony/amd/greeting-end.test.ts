import { describe, expect, it } from "vitest";
import { GreetingEnd } from "./greeting-end.js";

const RATE = 8000;
const tone = (ms: number): Int16Array =>
  Int16Array.from({ length: (RATE * ms) / 1000 }, (_, i) =>
    Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE)),
  );
const silence = (ms: number): Int16Array => new Int16Array((RATE * ms) / 1000);

describe("GreetingEnd", () => {
  it("ends once, at the first long silence after the greeting was heard", () => {
    const end = new GreetingEnd({ minSpeechMs: 500, silenceMs: 1500 });
    expect(end.push(silence(3000), RATE)).toBe(false); // ringing silence before any greeting
    expect(end.push(tone(800), RATE)).toBe(false);
    expect(end.push(silence(1000), RATE)).toBe(false); // a pause in the greeting
    expect(end.push(tone(300), RATE)).toBe(false); // the beep
    expect(end.push(silence(1400), RATE)).toBe(false);
    expect(end.push(silence(100), RATE)).toBe(true);
    expect(end.push(silence(2000), RATE)).toBe(false);
  });

  it("needs the greeting first: a short blip then silence is not its end", () => {
    const end = new GreetingEnd();
    expect(end.push(tone(200), RATE)).toBe(false);
    expect(end.push(silence(5000), RATE)).toBe(false);
  });
});
