import { describe, expect, it } from "vitest";
import { exportTranscript, toPlainText, toSrt, toWebVtt } from "./transcript-export.js";
import type { TranscriptLine } from "./transcript-log.js";

const T0 = Date.parse("2026-11-23T10:00:00.000Z");
const iso = (ms: number) => new Date(T0 + ms).toISOString();

const lines: TranscriptLine[] = [
  {
    at: iso(2600),
    start: iso(0),
    end: iso(2500),
    speaker: "Alice",
    turnId: "t1",
    text: "go forward ten meters",
  },
  { at: iso(3000), speaker: "Bob", turnId: "chat-1", text: "see the <doc> & notes", role: "chat" },
  {
    at: iso(4000),
    start: iso(4000),
    end: iso(3_725_250),
    speaker: "Assistant",
    turnId: "a1",
    text: "line one\n\nline --> two",
    role: "assistant",
  },
];

describe("transcript exports", () => {
  it("WebVTT: header, cue times from the first moment, speakers as voice spans, text escaped", () => {
    expect(toWebVtt(lines)).toBe(
      [
        "WEBVTT",
        "",
        "00:00:00.000 --> 00:00:02.500",
        "<v Alice>go forward ten meters",
        "",
        // A chat line has no end: a length from its words (5 x 400 ms), cut at the next line's start.
        "00:00:03.000 --> 00:00:04.000",
        "<v Bob (chat)>see the &lt;doc&gt; &amp; notes",
        "",
        "00:00:04.000 --> 01:02:05.250",
        "<v Assistant>line one line -&gt; two",
        "",
      ].join("\n"),
    );
  });

  it("SRT: numbered cues with comma decimals and the speaker before the text", () => {
    expect(toSrt(lines)).toBe(
      [
        "1",
        "00:00:00,000 --> 00:00:02,500",
        "Alice: go forward ten meters",
        "",
        "2",
        "00:00:03,000 --> 00:00:04,000",
        "Bob (chat): see the <doc> & notes",
        "",
        "3",
        "00:00:04,000 --> 01:02:05,250",
        "Assistant: line one line -> two",
        "",
      ].join("\n"),
    );
  });

  it("plain text: one line each with its time and speaker", () => {
    expect(toPlainText(lines)).toBe(
      "[00:00:00] Alice: go forward ten meters\n[00:00:03] Bob (chat): see the <doc> & notes\n[00:00:04] Assistant: line one line -> two\n",
    );
  });

  it("orders by start time, skips lines without a usable time, and handles an empty transcript", () => {
    const out = toPlainText([lines[1]!, { ...lines[0]!, at: "not a time", start: "nope" }, lines[0]!]);
    expect(out).toBe(
      "[00:00:00] Alice: go forward ten meters\n[00:00:03] Bob (chat): see the <doc> & notes\n",
    );
    expect(toWebVtt([])).toBe("WEBVTT\n");
    expect(toSrt([])).toBe("");
    expect(JSON.parse(exportTranscript("b1", lines, "json"))).toEqual({ botId: "b1", lines });
  });
});
