import { describe, expect, it } from "vitest";
import type { WordProbe } from "../pipelines/controller-types.js";
import { HeldSpeech } from "./held-speech.js";

function recordingProbe(): WordProbe & { written: Int16Array[]; finished: number } {
  const probe = {
    written: [] as Int16Array[],
    finished: 0,
    write(pcm: Int16Array) {
      probe.written.push(pcm);
    },
    finish() {
      probe.finished++;
      return Promise.resolve("");
    },
  };
  return probe;
}

const frame = (value: number): Int16Array => new Int16Array(160).fill(value);

describe("HeldSpeech", () => {
  it("the recognizer hears the pre-roll and the speech, then silence once the speech ended; the turn keeps the line's audio", () => {
    const held = new HeldSpeech(100, [frame(1), frame(2)]);
    const probe = recordingProbe();
    held.listen(probe);
    held.add(frame(3));
    held.endedAtMs = 400;
    held.add(frame(4)); // echo residue of the resumed answer, say
    expect(probe.written.map((f) => f[0])).toEqual([1, 2, 3, 0]);
    expect(probe.written[3]!.length).toBe(160);
    expect(held.release().map((f) => f[0])).toEqual([1, 2, 3, 4]);
    expect(probe.finished).toBe(1);
  });
});
