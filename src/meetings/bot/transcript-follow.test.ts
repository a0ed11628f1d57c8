import { describe, expect, it } from "vitest";
import { NOOP_LOGGER } from "../../core/index.js";
import type { BotStatus } from "../bot-status.js";
import { followRemote, type InspectBotJob } from "./transcript-follow.js";
import type { TranscriptLine } from "./transcript-log.js";

const status = (state: BotStatus["state"], participants: string[] = []): BotStatus =>
  ({
    id: "bot",
    meetingUrl: "http://x",
    platform: "test-room",
    botName: "B",
    mode: "transcribe",
    state,
    participants,
    history: [],
    timings: { requestedAt: "" },
  }) as BotStatus;
const line = (text: string): TranscriptLine => ({
  at: "2026-01-01T00:00:00Z",
  speaker: "A",
  turnId: text,
  text,
});

/** A job record the test moves: its log and status, as AppJobs.inspect would read them. */
function job() {
  const state = {
    logs: [] as string[],
    status: status("joining") as BotStatus | undefined,
    gone: false,
    fail: 0,
  };
  const reads: number[] = [];
  const inspect: InspectBotJob = async (_id, from) => {
    reads.push(from);
    if (state.fail > 0) {
      state.fail--;
      throw new Error("redis down");
    }
    if (state.gone) return undefined;
    return { status: state.status, logs: state.logs.slice(from) };
  };
  return { state, reads, inspect };
}

function collect() {
  const got: string[] = [];
  const listener = {
    line: (index: number, l: TranscriptLine) => got.push(`${index}:${l.text}`),
    status: (s: BotStatus) => got.push(`status:${s.state}:${s.participants.join(",")}`),
    end: (s: BotStatus) => got.push(`end:${s.state}`),
  };
  return { got, listener };
}

describe("followRemote", () => {
  it("reads only new log lines, numbers them, reports status changes once, and ends on a terminal status", async () => {
    const { state, reads, inspect } = job();
    const { got, listener } = collect();
    state.logs.push(JSON.stringify(line("one")));
    const done = followRemote(inspect, status("scheduled"), -1, listener, new AbortController().signal, {
      pollMs: 1,
      logger: NOOP_LOGGER,
    });
    await expect.poll(() => got.length).toBe(2);
    state.logs.push("{torn", JSON.stringify(line("two")));
    state.status = status("in_call", ["A"]);
    await expect.poll(() => got.includes("status:in_call:A")).toBe(true);
    state.logs.push(JSON.stringify(line("three")));
    state.status = status("ended");
    await done;
    expect(got).toEqual([
      "0:one",
      "status:joining:",
      "2:two",
      "status:in_call:A",
      "3:three",
      "status:ended:",
      "end:ended",
    ]);
    // Each poll asked from the next unread index on.
    expect(reads[0]).toBe(0);
    expect(reads.at(-1)).toBe(3);
  });

  it("resumes after an index, rides out a failed read, and ends with the last status when the job expired", async () => {
    const { state, inspect } = job();
    const { got, listener } = collect();
    state.logs.push(...["a", "b", "c"].map((t) => JSON.stringify(line(t))));
    state.fail = 2;
    const done = followRemote(inspect, status("joining"), 1, listener, new AbortController().signal, {
      pollMs: 1,
      logger: NOOP_LOGGER,
    });
    await expect.poll(() => got.length).toBe(2);
    state.gone = true;
    await done;
    expect(got).toEqual(["2:c", "status:joining:", "end:joining"]);
  });

  it("stops without end when its signal aborts", async () => {
    const { inspect } = job();
    const { got, listener } = collect();
    const stop = new AbortController();
    const done = followRemote(inspect, status("joining"), -1, listener, stop.signal, {
      pollMs: 1,
      logger: NOOP_LOGGER,
    });
    await expect.poll(() => got.length).toBe(1);
    stop.abort();
    await done;
    expect(got.some((g) => g.startsWith("end"))).toBe(false);
  });
});
