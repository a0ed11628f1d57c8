import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { TalkEvent } from "../core/index.js";
import { MeetingJoins } from "./meeting-joins.js";

const update = (botId: string, state: string, subCode?: string, platform = "google-meet"): TalkEvent =>
  ({
    type: "session.updated",
    sessionId: `s-${botId}`,
    payload: { botId, state, platform, participants: [], ...(subCode ? { subCode } : {}) },
  }) as unknown as TalkEvent;

describe("meeting join figures", () => {
  it("counts one attempt per bot, joins once, and each end by state, sub-code and whether it got in", async () => {
    const registry = new Registry();
    const joins = new MeetingJoins(registry);
    for (const e of [
      update("a", "joining"),
      update("a", "in_waiting_room"),
      update("a", "in_call"),
      update("a", "in_call"),
      update("a", "leaving", "meeting_ended"),
      update("a", "ended", "meeting_ended"),
      update("b", "joining"),
      update("b", "fatal", "blocked_by_platform"),
      update("c", "joining", undefined, "zoom"),
      update("late", "ended", "requested"),
      { type: "session.updated", sessionId: "x", payload: { state: "joining" } } as unknown as TalkEvent,
    ])
      joins.observe(e);
    expect(joins.snapshot()).toEqual([
      {
        platform: "google-meet",
        attempts: 2,
        joined: 1,
        outcomes: [
          { state: "ended", subCode: "meeting_ended", joined: true, count: 1 },
          { state: "fatal", subCode: "blocked_by_platform", joined: false, count: 1 },
        ],
      },
      { platform: "zoom", attempts: 1, joined: 0, outcomes: [] },
    ]);
    const text = await registry.metrics();
    expect(text).toContain('talkgate_meeting_join_attempts_total{platform="google-meet"} 2');
    expect(text).toContain(
      'talkgate_meeting_bot_ends_total{platform="google-meet",state="fatal",sub_code="blocked_by_platform",joined="false"} 1',
    );
  });
});
