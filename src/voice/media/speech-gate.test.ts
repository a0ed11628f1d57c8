import { describe, expect, it } from "vitest";
import { loadSpeech } from "../../codecs/testing/audio-tools.js";
import { SpeechGate } from "./speech-gate.js";
import { TurnEndpoint } from "./turn-endpoint.js";

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

/** Far-off talkers (gain 0.04: -51 dBFS, 0.08: -45, 0.15: -39): voice the detector flags now and then. */
function babble(ms: number, gain: number): Int16Array {
  const voices = ["numbers.raw", "something.raw", "goforward.raw"].map((n) => loadSpeech(n, 8000));
  const out = new Int16Array(ms * 8);
  for (let i = 0; i < out.length; i++) {
    let v = 0;
    for (const [k, voice] of voices.entries()) v += voice[(i + k * 7919) % voice.length]!;
    out[i] = Math.round(v * gain);
  }
  return out;
}

describe("SpeechGate.voiced and the end of a turn", () => {
  // 0.08 and 0.09: babble the fixed gate bridges where a smoothed voice probability (the rule before) did not.
  it.each([0.04, 0.06, 0.08, 0.09, 0.15])(
    "restarts an endpoint's silence where it restarts the gate's hangover (babble at %f in the pause)",
    (gain) => {
      const words = loadSpeech("goforward.raw", 8000);
      const audio = new Int16Array(words.length * 2 + 8000 * 4);
      audio.set(hiss(500), 0);
      audio.set(words, 4000);
      audio.set(babble(1000, gain), 4000 + words.length);
      audio.set(words, 12_000 + words.length);
      audio.set(hiss(2500, 3), 12_000 + words.length * 2);
      // The fixed endpoint: the gate's own 800 ms hangover.
      const fixed = new SpeechGate({ threshold: -45, minSpeechMs: 120, silenceMs: 800, sampleRate: 8000 });
      // The adaptive one with a rule of 800 ms (as when nothing was recognized): a 300 ms gate, the endpoint
      // counting the rest, restarted by voice (TurnEndpoint.frame, as media/local-turns.ts runs it).
      const endpoint = new TurnEndpoint({
        mode: "adaptive",
        minMs: 300,
        maxMs: 1500,
        silenceMs: 800,
        prepareAnswer: true,
      });
      const gate = new SpeechGate({ threshold: -45, minSpeechMs: 120, silenceMs: 300, sampleRate: 8000 });
      const fixedEnds: number[] = [];
      const commits: number[] = [];
      let capturing = false;
      for (let at = 0; at + 160 <= audio.length; at += 160) {
        const frame = audio.subarray(at, at + 160);
        const ms = (at + 160) / 8;
        if (fixed.process(frame) === "speech-end") fixedEnds.push(ms);
        const event = gate.process(frame);
        if (event === "speech-start") {
          if (capturing) endpoint.speechResumed();
          else endpoint.begin(`t${commits.length}`);
          capturing = true;
          continue;
        }
        if (!capturing) continue;
        if (endpoint.frame(event, gate, 20)) {
          capturing = false;
          commits.push(ms);
        }
      }
      // The adaptive endpoint at the fixed one's 800 ms commits where the fixed gate ends: in the pause only
      // if the fixed gate ends there too.
      expect(commits).toHaveLength(fixedEnds.length);
      for (const [i, end] of fixedEnds.entries()) expect(Math.abs(commits[i]! - end)).toBeLessThanOrEqual(20);
      // From 0.08 the babble keeps the fixed gate's hangover alive through the pause: one segment.
      if (gain >= 0.08) expect(fixedEnds).toEqual([expect.any(Number)]);
      fixed.close();
      gate.close();
    },
  );
});

describe("SpeechGate at a rate no detector takes (24 kHz, the talk page's)", () => {
  /** The events of `gate` over `audio` in `frameMs` frames, at ms of audio. */
  function events(gate: SpeechGate, audio: Int16Array, frameMs: number): string[] {
    const step = (gate.sampleRate * frameMs) / 1000;
    const seen: string[] = [];
    for (let at = 0; at + step <= audio.length; at += step) {
      const event = gate.process(audio.subarray(at, at + step));
      if (event) seen.push(`${event}@${((at + step) / gate.sampleRate) * 1000}`);
    }
    gate.close();
    return seen;
  }
  const at = (rate: number): Int16Array => {
    const words = loadSpeech("goforward.raw", rate);
    const audio = new Int16Array(words.length + rate * 2);
    audio.set(words, rate / 2);
    return audio;
  };
  const options = { threshold: -45, minSpeechMs: 120, silenceMs: 300 };

  it.each([10, 20, 30])("hears the same speech as at 16 kHz, within a frame, in %i ms frames", (frameMs) => {
    const native = events(new SpeechGate({ ...options, sampleRate: 16_000 }), at(16_000), frameMs);
    const copied = events(new SpeechGate({ ...options, sampleRate: 24_000 }), at(24_000), frameMs);
    expect(native.length).toBeGreaterThanOrEqual(2);
    expect(copied.map((e) => e.split("@")[0])).toEqual(native.map((e) => e.split("@")[0]));
    for (const [i, e] of copied.entries())
      expect(Math.abs(Number(e.split("@")[1]) - Number(native[i]!.split("@")[1]))).toBeLessThanOrEqual(
        frameMs,
      );
  });

  it("keeps its pre-roll at the caller's rate: the frames it was given", () => {
    const gate = new SpeechGate({ ...options, sampleRate: 24_000 });
    const audio = at(24_000);
    const fed: Int16Array[] = [];
    for (let at = 0; at + 480 <= audio.length; at += 480) {
      const frame = audio.subarray(at, at + 480);
      fed.push(frame);
      if (gate.process(frame) === "speech-start") break;
    }
    const preRoll = gate.takePreRoll();
    expect(preRoll.length).toBeGreaterThan(1);
    expect(preRoll).toEqual(fed.slice(-preRoll.length));
    gate.close();
  });
});
