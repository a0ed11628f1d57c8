import { describe, expect, it } from "vitest";
import { loadSpeech } from "../../codecs/testing/audio-tools.js";
import { SpeechGate } from "./speech-gate.js";

/** Low hiss, `ms` long at 8 kHz (a phone line between words). */
function hiss(ms: number, seed = 1): Int16Array {
  let s = seed;
  return Int16Array.from({ length: ms * 8 }, () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return ((s / 0x7fffffff) * 2 - 1) * 30;
  });
}

describe("SpeechGate.voiced", () => {
  it("hears the next words after an end of speech before the gate confirms their onset", () => {
    const gate = new SpeechGate({ threshold: -45, minSpeechMs: 120, silenceMs: 300, sampleRate: 8000 });
    const words = loadSpeech("goforward.raw", 8000);
    const audio = new Int16Array(words.length * 2 + 8000 * 2);
    audio.set(hiss(500), 0);
    audio.set(words, 4000);
    audio.set(hiss(1000, 2), 4000 + words.length);
    audio.set(words, 12_000 + words.length);
    const seen: string[] = [];
    let ended = false;
    for (let at = 0; at + 160 <= audio.length; at += 160) {
      const event = gate.process(audio.subarray(at, at + 160));
      if (event === "speech-end") ended = true;
      if (event) seen.push(event);
      if (ended && !gate.speaking && gate.voiced) seen.push("voiced");
    }
    // Between the first words' end and the second words' onset: voice, not yet speech.
    const end = seen.indexOf("speech-end");
    expect(end).toBeGreaterThan(0);
    expect(seen.slice(end + 1, end + 2)).toEqual(["voiced"]);
    expect(seen.slice(end + 1)).toContain("speech-start");
    gate.close();
  });

  it("is false on a quiet line", () => {
    const gate = new SpeechGate({ threshold: -45, minSpeechMs: 120, silenceMs: 300, sampleRate: 8000 });
    const line = hiss(2000);
    for (let at = 0; at + 160 <= line.length; at += 160) {
      gate.process(line.subarray(at, at + 160));
      expect(gate.voiced).toBe(false);
    }
    gate.close();
  });
});
