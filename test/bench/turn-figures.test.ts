import { describe, expect, it } from "vitest";
import { recordingTranscripts, transcriptWords } from "../../bench/lib/stt-references.js";
import type { CallResult } from "../../bench/lib/turn-call.js";
import { turnFigures } from "../../bench/lib/turn-figures.js";

/**
 * The turn-taking bench's word-error row: what the server heard in a call (its user transcripts after the
 * caller's onset) scored against the transcripts of the recordings the caller said, Debian's included.
 */
const call = (label: string, texts: string[], at = 100): CallResult =>
  ({
    id: label,
    kind: "interruption",
    preempted: false,
    speech: { label, onsetMs: 0, endMs: 1000, pausesMs: [] },
    log: texts.map((text) => ({ type: "transcript.done", at, text })),
  }) as unknown as CallResult;

const row = (calls: CallResult[]) =>
  turnFigures(calls, undefined).find((f) => f.row.startsWith("the caller's words"))!.cell;

describe("turn-taking figures: the caller's words", () => {
  it("knows every corpus recording's transcript that Debian or the references give", () => {
    const t = recordingTranscripts();
    expect(t.get("goforward")).toBe("go forward ten meters");
    expect(t.get("005")).toBe("eight of spades four of clubs seven of hearts");
    expect(transcriptWords("Go forward 10 meters, thirty-three.")).toEqual([
      "go",
      "forward",
      "ten",
      "meters",
      "thirty",
      "three",
    ]);
  });

  it("counts word errors over both recordings of a call with a pause, only calls with words, only after the onset", () => {
    const calls = [
      call("goforward + 560 ms + 001", ["Go forward ten meters.", "Ten of cubs."]), // one substitution of 7
      call("something", ["go somewhere and do something"]), // none of 5
      call("goforward", []), // nothing heard: not scored here (a missed turn is its own row)
      call("numbers", ["thirty three"]), // no transcript for the recording: not scored
      call("something", ["go"], -50), // before the onset: not the caller's turn
    ];
    expect(row(calls)).toBe("1 of 12 (2 calls)");
  });
});
