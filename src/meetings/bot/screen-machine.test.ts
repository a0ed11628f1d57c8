import { describe, expect, it } from "vitest";
import type { ScreenRule } from "../platforms/platform-driver.js";
import { ScreenMachine } from "./screen-machine.js";

const act = async (): Promise<void> => {};
const SCREENS: Record<string, ScreenRule> = {
  prejoin: { phase: "joining", act, repeatMs: 1000, source: "test" },
  lobby: { phase: "waiting_room", source: "test" },
  in_call: { phase: "in_call", source: "test" },
  cant_join: { phase: "blocked", retry: { max: 2, waitMs: 500 }, source: "test" },
  ended: { phase: "ended", source: "test" },
  gone: { phase: "removed", subCode: "kicked", source: "test" },
  host_not_started: {
    phase: "waiting_room",
    retry: { max: 1, waitMs: 100 },
    subCode: "waiting_room_timeout",
    source: "test",
  },
};
const limits = { unknownScreenMs: 1000, unknownScreenRetries: 1 };
const read = (screen: string) => ({ screen, reason: `saw ${screen}` });

describe("the join state machine", () => {
  it("acts when a screen appears and again every repeatMs while it stays, never faster", () => {
    const m = new ScreenMachine(SCREENS, limits);
    expect(m.step(read("prejoin"), 0, false)).toMatchObject({ phase: "joining", changed: true, act });
    expect(m.step(read("prejoin"), 500, false).act).toBeUndefined();
    expect(m.step(read("prejoin"), 1000, false).act).toBe(act);
    expect(m.step(read("lobby"), 1100, false)).toMatchObject({ phase: "waiting_room", changed: true });
  });

  it("ends on an end screen with the phase's sub-code, or the rule's", () => {
    expect(new ScreenMachine(SCREENS, limits).step(read("ended"), 0, true).end).toEqual({
      state: "ended",
      subCode: "meeting_ended",
      message: "saw ended",
    });
    expect(new ScreenMachine(SCREENS, limits).step(read("gone"), 0, true).end?.subCode).toBe("kicked");
  });

  it("retries a retried screen after its wait, at most max times, then ends with its sub-code", () => {
    const m = new ScreenMachine(SCREENS, limits);
    expect(m.step(read("cant_join"), 0, false).reload).toBeUndefined();
    expect(m.step(read("cant_join"), 500, false).reload?.why).toMatch(/1 of 2/);
    m.reloaded();
    expect(m.step(read("cant_join"), 600, false).reload).toBeUndefined();
    expect(m.step(read("cant_join"), 1100, false).reload?.why).toMatch(/2 of 2/);
    m.reloaded();
    m.step(read("cant_join"), 1200, false);
    expect(m.step(read("cant_join"), 1700, false).end).toMatchObject({
      state: "fatal",
      subCode: "blocked_by_platform",
    });
    const host = new ScreenMachine(SCREENS, limits);
    host.step(read("host_not_started"), 0, false);
    expect(host.step(read("host_not_started"), 100, false).reload).toBeDefined();
    host.reloaded();
    host.step(read("host_not_started"), 200, false);
    expect(host.step(read("host_not_started"), 300, false).end).toMatchObject({
      state: "ended",
      subCode: "waiting_room_timeout",
    });
  });

  it("records an unknown screen during the join after unknownScreenMs, reloads within its bound, then ends", () => {
    const m = new ScreenMachine(SCREENS, limits);
    expect(m.step(read("unknown"), 0, false)).toMatchObject({ phase: "joining", screen: "unknown" });
    expect(m.step(read("mystery"), 500, false)).toMatchObject({ screen: "unknown", changed: true });
    const first = m.step(read("mystery"), 1500, false);
    expect(first).toMatchObject({ record: true, reload: { why: expect.stringContaining("saw mystery") } });
    m.reloaded();
    m.step(read("mystery"), 1600, false);
    expect(m.step(read("mystery"), 2700, false)).toMatchObject({
      record: true,
      end: { state: "fatal", subCode: "blocked_by_platform" },
    });
  });

  it("in the call, records an unknown screen once and never reloads (that would leave the call)", () => {
    const m = new ScreenMachine(SCREENS, limits);
    m.step(read("in_call"), 0, true);
    m.step(read("unknown"), 100, true);
    const late = m.step(read("unknown"), 1200, true);
    expect(late).toMatchObject({ phase: "in_call", record: true });
    expect(late.reload).toBeUndefined();
    expect(late.end).toBeUndefined();
    expect(m.step(read("unknown"), 2400, true).record).toBe(false);
  });
});
