import { describe, expect, it } from "vitest";
import { GeminiTurnTracker } from "./gemini-live-events.js";
import { GEMINI_OUTPUT_FORMAT } from "./gemini-live-setup.js";

const audio = {
  serverContent: {
    modelTurn: { parts: [{ inlineData: { mimeType: "audio/pcm;rate=24000", data: "AAAAAA==" } }] },
  },
};

describe("GeminiTurnTracker", () => {
  it("after interrupted, the turnComplete that follows ends the model's turn, not the caller's", () => {
    const t = new GeminiTurnTracker(GEMINI_OUTPUT_FORMAT);
    expect(t.map(audio).map((e) => e.type)).toEqual(["response_started", "audio_delta"]);
    expect(t.map({ serverContent: { interrupted: true } }).map((e) => e.type)).toEqual([
      "speech_started",
      "response_done",
    ]);
    expect(t.map({ serverContent: { turnComplete: true } })).toEqual([]);
    expect(t.map({ serverContent: { inputTranscription: { text: "wait" } } }).map((e) => e.type)).toEqual([
      "transcript_delta",
    ]);
    // The model answers: now the caller's turn ends, with its whole transcript.
    const next = t.map(audio);
    expect(next.map((e) => e.type)).toEqual([
      "transcript_done",
      "speech_stopped",
      "response_started",
      "audio_delta",
    ]);
    expect(next[0]).toMatchObject({ role: "user", text: "wait" });
  });

  it("thought parts are not spoken text; a cancelled turn reports nothing but its end", () => {
    const t = new GeminiTurnTracker(GEMINI_OUTPUT_FORMAT);
    const thought = t.map({
      serverContent: { modelTurn: { parts: [{ text: "planning…", thought: true }] } },
    });
    expect(thought).toEqual([]);
    t.map(audio);
    expect(t.cancel()).toBe(true);
    expect(t.cancel()).toBe(false);
    expect(t.map(audio)).toEqual([]);
    expect(t.map({ serverContent: { outputTranscription: { text: "more" }, turnComplete: true } })).toEqual([
      expect.objectContaining({ type: "response_done", status: "cancelled" }),
    ]);
  });

  it("function calls with bad shapes are invalid_provider_event; good ones are tool_calls that end the response", () => {
    const t = new GeminiTurnTracker(GEMINI_OUTPUT_FORMAT);
    const events = t.map({
      toolCall: {
        functionCalls: [
          { id: "c1", name: "f", args: [1] },
          { name: "g" },
          { id: "c2", name: "h", args: { a: 1 } },
        ],
      },
    });
    expect(events.map((e) => (e.type === "error" ? e.code : e.type))).toEqual([
      "response_started",
      "invalid_provider_event",
      "invalid_provider_event",
      "tool_call",
      "response_done",
    ]);
    expect(t.callNames.get("c2")).toBe("h");
  });
});
