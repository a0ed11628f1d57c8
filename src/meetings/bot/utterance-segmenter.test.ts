import { describe, expect, it } from "vitest";
import { createSileroVad, createVad } from "../../codecs/index.js";
import { loadSpeech, run, toInt16 } from "../../codecs/testing/audio-tools.js";
import type { SpeechDetectorFactory } from "../../voice/index.js";
import { UtteranceSegmenter, type Utterance } from "./utterance-segmenter.js";

function segment(detector: SpeechDetectorFactory | undefined, pcm: Int16Array) {
  const utterances: Utterance[] = [];
  const segmenter = new UtteranceSegmenter({
    trackId: "t1",
    silenceMs: 500,
    maxUtteranceMs: 30_000,
    preRollMs: 300,
    onUtterance: (u) => utterances.push(u),
    detector,
  });
  for (let o = 0; o < pcm.length; o += 960) segmenter.write(pcm.subarray(o, o + 960));
  segmenter.close();
  return utterances;
}

/** 20 s of pink noise at 16 kHz, about -45 dBFS (sox -R: the same samples every run). */
const pink = toInt16(
  run("sox", [
    "-R",
    "-n",
    ...["-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1", "-"],
    ...["synth", "20", "pinknoise", "vol", "0.015"],
  ]),
);

describe("UtteranceSegmenter with the detector talk.input.vad chooses", () => {
  const speech = loadSpeech("something.raw", 16000);
  const withSilence = new Int16Array(speech.length + 16000 * 2);
  withSilence.set(speech, 16000);

  it.each([
    ["the Silero VAD", createSileroVad as SpeechDetectorFactory],
    ["the default WebRTC VAD", undefined],
  ] as const)(
    "%s cuts a real recording into one utterance and hears none in pink noise",
    (_name, detector) => {
      const [u, ...rest] = segment(detector, withSilence);
      expect(rest).toHaveLength(0);
      expect(u!.ended).toBe(true);
      expect(segment(detector, pink)).toHaveLength(0);
    },
  );

  it("uses the detector it is given", () => {
    let made = 0;
    const counting: SpeechDetectorFactory = (o) => {
      made++;
      return createVad(o);
    };
    segment(counting, new Int16Array(3200));
    expect(made).toBe(1);
  });
});
