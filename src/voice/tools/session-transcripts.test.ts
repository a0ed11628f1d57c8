import { describe, expect, it } from "vitest";
import type { TalkEvent } from "../../core/talk-events.js";
import { SessionTranscripts } from "./session-transcripts.js";

const event = (type: string, sessionId: string, payload: unknown): TalkEvent =>
  ({ type, sessionId, payload }) as unknown as TalkEvent;

describe("SessionTranscripts", () => {
  it("keeps final user and assistant transcripts per session and forgets a closed session", () => {
    const t = new SessionTranscripts(10);
    t.observe(event("transcript.delta", "a", { role: "user", text: "partial" }));
    t.observe(event("transcript.done", "a", { role: "user", text: "hello" }));
    t.observe(event("output.text.done", "a", { text: "hi there" }));
    t.observe(event("transcript.done", "b", { role: "assistant", text: "other session" }));
    expect(t.history("a")).toEqual([
      { role: "user", content: "hello" },
      { role: "assistant", content: "hi there" },
    ]);
    t.observe(event("session.closed", "a", {}));
    expect(t.history("a")).toEqual([]);
    expect(t.history("b")).toHaveLength(1);
  });
});
