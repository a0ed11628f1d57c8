import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { NOOP_LOGGER } from "../../core/logger.js";
import type { TalkEvent } from "../../core/talk-events.js";
import { readTranscript, TranscriptLog } from "../bot/transcript-log.js";
import { heardPrefix, type SpokenAnswer, SpokenAnswerTracker } from "./spoken-answer.js";

/** A fake playout clock: each delta's audio is scheduled right after the previous one, from t=1000. */
function harness() {
  let now = 0;
  let playhead = 1000;
  const spoken: SpokenAnswer[] = [];
  const tracker = new SpokenAnswerTracker({
    playhead: () => playhead,
    now: () => now,
    onSpoken: (a) => spoken.push(a),
  });
  let seq = 0;
  const event = (type: string, fields: Partial<TalkEvent>, payload: unknown = {}): void =>
    tracker.observe({
      id: `e${++seq}`,
      type,
      sessionId: "s1",
      seq,
      timestamp: new Date(now).toISOString(),
      mode: "stt-tts",
      transport: "managed-room",
      brain: "agent-consult",
      payload,
      ...fields,
    } as TalkEvent);
  return {
    spoken,
    event,
    /** A written chunk of audio of `ms` for segment `segment` (the sink's playhead moves first, as in TtsQueue). */
    audio(itemId: string, segment: number, ms: number, segmentText?: string, turnId = "t1"): void {
      playhead += ms;
      event(
        "output.audio.delta",
        { turnId, itemId },
        { durationMs: ms, bytes: ms * 32, segment, ...(segmentText ? { segmentText } : {}) },
      );
    },
    at(ms: number): void {
      now = ms;
    },
  };
}

describe("SpokenAnswerTracker", () => {
  it("reports an answer that played to its end with every chunk's text, once, not interrupted", () => {
    const h = harness();
    h.audio("i1", 0, 500, "The answer is four.");
    h.audio("i1", 1, 300, "Anything else?");
    h.audio("i1", 1, 200);
    h.at(2100);
    h.event("output.audio.done", { turnId: "t1", itemId: "i1" });
    h.event("turn.cancelled", { turnId: "t1" }, { reason: "superseded", aborted: [] });
    expect(h.spoken).toEqual([
      {
        turnId: "t1",
        itemId: "i1",
        startedAt: 1000,
        text: "The answer is four. Anything else?",
        interrupted: false,
      },
    ]);
  });

  it("a barge-in reports only what the meeting heard: whole chunks, then the whole words of the chunk being played", () => {
    const h = harness();
    h.audio("i1", 0, 1000, "First sentence here."); // 1000..2000
    h.audio("i1", 1, 1000, "alpha beta gamma delta"); // 2000..3000
    h.audio("i1", 2, 1000, "Never heard at all."); // 3000..4000
    // Half of the second chunk played: "alpha beta gamma delta" is 22 characters, 11 heard -> "alpha beta".
    h.at(2500);
    h.event("output.audio.cancelled", { turnId: "t1", itemId: "i1" }, { reason: "barge_in" });
    expect(h.spoken).toEqual([
      {
        turnId: "t1",
        itemId: "i1",
        startedAt: 1000,
        text: "First sentence here. alpha beta",
        interrupted: true,
        reason: "barge_in",
      },
    ]);
  });

  it("an answer superseded (turn.cancelled) or closed mid-chunk is reported interrupted; one cut before it was heard is not reported", () => {
    const h = harness();
    h.audio("i1", 0, 1000, "one two three four");
    h.at(1100);
    h.event("turn.cancelled", { turnId: "t1" }, { reason: "superseded", aborted: ["output"] });
    // Written but not yet playing when cut (the playout starts at 2000): nothing was said.
    h.audio("i2", 0, 1000, "Not heard.", "t2");
    h.at(1500);
    h.event("session.closed", {}, { reason: "completed" });
    expect(h.spoken).toEqual([
      { turnId: "t1", itemId: "i1", startedAt: 1000, text: "", interrupted: true, reason: "superseded" },
    ]);
  });

  it("heardPrefix keeps whole words only", () => {
    expect(heardPrefix("alpha beta gamma", 0)).toBe("");
    expect(heardPrefix("alpha beta gamma", 0.2)).toBe("");
    expect(heardPrefix("alpha beta gamma", 5 / 16)).toBe("alpha");
    expect(heardPrefix("alpha beta gamma", 0.6)).toBe("alpha");
    expect(heardPrefix("alpha beta gamma", 10 / 16)).toBe("alpha beta");
    expect(heardPrefix("alpha beta gamma", 1)).toBe("alpha beta gamma");
    expect(heardPrefix("  padded  ", 2)).toBe("padded");
  });
});

describe("TranscriptLog with assistant lines", () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("writes the bot's answers beside the captions, marked as the assistant and interrupted when cut, and reads them back in order", () => {
    const dir = mkdtempSync(join(tmpdir(), "transcript-"));
    dirs.push(dir);
    const path = join(dir, "meetings", "bot.transcript.jsonl");
    const log = new TranscriptLog(path, NOOP_LOGGER);
    log.append({
      at: "2024-01-01T00:00:00.000Z",
      speaker: "Alice",
      turnId: "c1",
      text: "computer what time",
    });
    log.append({
      at: "2024-01-01T00:00:01.000Z",
      speaker: "Assistant",
      turnId: "a1",
      text: "It is noon",
      role: "assistant",
      interrupted: true,
    });
    log.close();
    expect(readTranscript(path)).toEqual([
      { at: "2024-01-01T00:00:00.000Z", speaker: "Alice", turnId: "c1", text: "computer what time" },
      {
        at: "2024-01-01T00:00:01.000Z",
        speaker: "Assistant",
        turnId: "a1",
        text: "It is noon",
        role: "assistant",
        interrupted: true,
      },
    ]);
  });
});
