import { afterEach, describe, expect, it } from "vitest";
import { createTalkRuntime, type TalkRuntime } from "../core/index.js";
import { RecentActivity } from "./recent-activity.js";

let runtime: TalkRuntime | undefined;
let activity: RecentActivity | undefined;
afterEach(async () => {
  activity?.close();
  await runtime?.close();
});

const session = (rt: TalkRuntime, surface: string) =>
  rt.createSession({
    mode: "stt-tts",
    transport: "managed-room",
    brain: "agent-consult",
    owner: "gateway",
    metadata: { surface },
  });

describe("RecentActivity", () => {
  it("keeps a live session's provider calls (first output, total, outcome) and forgets them when it closes", async () => {
    runtime = createTalkRuntime({});
    activity = new RecentActivity(runtime, "w1");
    const s = session(runtime, "phone");
    const turn = s.startTurn();
    activity.connected({ kind: "realtime", provider: "rt", session: s, turnId: undefined }, 120.4, true);
    const tts = activity.call({ kind: "tts", provider: "espeak", session: s, turnId: turn.id });
    expect(activity.timings(s.id).at(-1)).toMatchObject({ kind: "tts", provider: "espeak", turnId: turn.id });
    expect(activity.timings(s.id).at(-1)?.totalMs).toBeUndefined();
    tts.first();
    tts.end("ok");
    const [connect, done] = activity.timings(s.id);
    expect(connect).toMatchObject({ kind: "connect", provider: "rt", totalMs: 120, outcome: "ok" });
    expect(done?.outcome).toBe("ok");
    expect(done?.firstMs).toBeGreaterThanOrEqual(0);
    expect(done?.totalMs).toBeGreaterThanOrEqual(done?.firstMs ?? 0);
    expect(activity.errors()).toEqual([]);
    await s.close("completed");
    expect(activity.timings(s.id)).toEqual([]);
    expect(activity.errors()).toEqual([]);
  });

  it("records session and tool errors, failed provider calls and abnormal closes, newest first and bounded", async () => {
    runtime = createTalkRuntime({});
    activity = new RecentActivity(runtime, "w1");
    const s = session(runtime, "meeting");
    s.emit({ type: "session.error", payload: { code: "provider_error", message: "upstream said no" } });
    const turn = s.startTurn();
    s.emit({
      type: "tool.error",
      turnId: turn.id,
      payload: { name: "get_time", code: "tool_failed", message: "boom" },
    });
    activity.call({ kind: "agent", provider: "llm", session: s, turnId: undefined }).end("error");
    await s.close("error", "the provider session ended");
    const errors = activity.errors();
    expect(errors.map((e) => [e.source, e.code])).toEqual([
      ["session.closed", "error"],
      ["provider", "provider_error"],
      ["tool.error", "tool_failed"],
      ["session.error", "provider_error"],
    ]);
    expect(errors[0]).toMatchObject({ workerId: "w1", sessionId: s.id, surface: "meeting" });
    for (let i = 0; i < 60; i++) {
      const x = session(runtime, "gateway");
      await x.close("error");
    }
    expect(activity.errors()).toHaveLength(50);
    // An ordinary close is not an error.
    const fine = session(runtime, "gateway");
    await fine.close("completed");
    expect(activity.errors()[0]?.sessionId).not.toBe(fine.id);
  });
});
