import { describe, expect, it } from "vitest";
import type { TalkEvent } from "../core/index.js";
import { GREETING_WAIT_MS, greetingOver } from "./call.js";
import { CallProgress, NO_WORDS } from "./call-progress.js";

let seq = 0;
function event(type: string, payload: Record<string, unknown> = {}): TalkEvent {
  return { type, payload, id: `e${++seq}`, sessionId: "s1", seq } as unknown as TalkEvent;
}

function progressWithLines(): { progress: CallProgress; out: string[]; err: string[] } {
  const out: string[] = [];
  const err: string[] = [];
  const progress = new CallProgress({ stdout: (l) => out.push(l), stderr: (l) => err.push(l) });
  return { progress, out, err };
}

describe("CallProgress: what `talkgate call` reads from the call's events", () => {
  it("waits for an answer after a caller turn ends, until the answer's audio ends", () => {
    const { progress, out } = progressWithLines();
    progress.observe(event("turn.ended"));
    expect(progress.awaitingAnswer).toBe(true);
    progress.observe(event("transcript.done", { role: "user", text: "four of hearts" }));
    expect(progress.awaitingAnswer).toBe(true);
    progress.observe(event("output.audio.started"));
    expect(progress.outputs).toBe(1);
    progress.observe(event("transcript.done", { role: "assistant", text: "You said: four of hearts" }));
    progress.observe(event("output.audio.done"));
    expect(progress.awaitingAnswer).toBe(false);
    expect(progress.outputs).toBe(0);
    expect(out).toEqual(["caller: four of hearts", "assistant: You said: four of hearts"]);
  });

  it("prints a caller turn with no words as such and stops waiting for its answer (none comes)", () => {
    const { progress, out } = progressWithLines();
    progress.observe(event("turn.ended"));
    progress.observe(event("transcript.done", { role: "user", text: "  " }));
    expect(out).toEqual([`caller: ${NO_WORDS}`]);
    expect(progress.awaitingAnswer).toBe(false);
  });

  it("counts an interrupted answer as ended and says so", () => {
    const { progress, out } = progressWithLines();
    progress.observe(event("output.audio.started"));
    progress.observe(event("output.audio.cancelled"));
    expect(progress).toMatchObject({ outputs: 0, answersStarted: 1, answersEnded: 1 });
    expect(out).toEqual(["(assistant interrupted)"]);
  });

  it("notes the session's close with its reason", () => {
    const { progress, err } = progressWithLines();
    progress.observe(event("session.closed", { reason: "completed" }));
    expect(progress.sessionClosed).toBe(true);
    expect(err).toEqual(["session closed: completed"]);
  });
});

describe("greetingOver: when the simulated caller starts speaking", () => {
  it("waits while the greeting is pending or playing, starts once it has played out", () => {
    const { progress } = progressWithLines();
    expect(greetingOver(progress, false, 100)).toBe(false);
    progress.observe(event("output.audio.started"));
    expect(greetingOver(progress, true, GREETING_WAIT_MS + 5000)).toBe(false);
    progress.observe(event("output.audio.done"));
    // Done on the server, still playing on the line: the caller hears it out.
    expect(greetingOver(progress, true, GREETING_WAIT_MS + 5000)).toBe(false);
    expect(greetingOver(progress, false, GREETING_WAIT_MS + 5000)).toBe(true);
  });

  it("speaks anyway when no greeting starts within GREETING_WAIT_MS", () => {
    const { progress } = progressWithLines();
    expect(greetingOver(progress, false, GREETING_WAIT_MS - 1)).toBe(false);
    expect(greetingOver(progress, false, GREETING_WAIT_MS)).toBe(true);
  });
});
