import { describe, expect, it } from "vitest";
import { EventSequencer, IsoTimestamps } from "./event-sequencer.js";
import type { CorrelationState } from "./event-sequencer.js";
import type { OutputAudioPayload, ToolCallPayload, TranscriptPayload } from "./talk-events.js";

const AUDIO: OutputAudioPayload = {
  format: { encoding: "pcm16", sampleRate: 16_000, channels: 1 },
  bytes: 640,
  durationMs: 20,
};
const TOOL: ToolCallPayload = { name: "echo", argumentsJson: "{}" };
const HEARD: TranscriptPayload = { role: "user", text: "hello" };

function state(overrides: Partial<CorrelationState> = {}): CorrelationState {
  return {
    activeCaptureId: undefined,
    activeCaptureTurnId: undefined,
    acceptsOutput: () => true,
    isCancelledItem: () => false,
    ...overrides,
  };
}

function sequencer(sessionId = "s1"): EventSequencer {
  return new EventSequencer({
    sessionId,
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
  });
}

describe("EventSequencer", () => {
  it("stamps the contract envelope with an ISO-8601 UTC timestamp and a UUID id", () => {
    const event = sequencer().sequence({ type: "session.ready", payload: { reason: "joined" } }, state());
    expect(event).toMatchObject({
      type: "session.ready",
      sessionId: "s1",
      seq: 1,
      mode: "realtime",
      transport: "gateway-relay",
      brain: "agent-consult",
      payload: { reason: "joined" },
    });
    expect(event?.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(event?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Object.keys(event ?? {})).not.toContain("turnId");
  });

  it("increases seq strictly per session and independently across sessions", () => {
    const a = sequencer("a");
    const b = sequencer("b");
    const seqA = [1, 2, 3].map(() => a.sequence({ type: "health.changed", payload: {} }, state())?.seq);
    const seqB = b.sequence({ type: "health.changed", payload: {} }, state())?.seq;
    expect(seqA).toEqual([1, 2, 3]);
    expect(seqB).toBe(1);
    expect(a.lastSeq).toBe(3);
  });

  it("rejects a turn-bound event without a turnId and does not consume a seq", () => {
    const s = sequencer();
    expect(() => s.sequence({ type: "output.audio.delta", payload: AUDIO }, state())).toThrow(
      expect.objectContaining({ code: "invalid_params" }),
    );
    expect(() => s.sequence({ type: "tool.call", payload: TOOL }, state())).toThrow(/turn-bound/);
    expect(s.lastSeq).toBe(0);
  });

  it("accepts input.audio.appended without a turn because audio may arrive between turns", () => {
    expect(
      sequencer().sequence({ type: "input.audio.appended", payload: { bytes: 320 } }, state())?.seq,
    ).toBe(1);
  });

  it("rejects unknown event types", () => {
    expect(() =>
      sequencer().sequence({ type: "talk.bogus" as never, payload: {} as never }, state()),
    ).toThrow(/Unknown talk event type/);
  });

  it("stamps the active captureId on events of the capture's turn and on turnless events", () => {
    const s = sequencer();
    const st = state({ activeCaptureId: "cap-1", activeCaptureTurnId: "t1" });
    expect(s.sequence({ type: "transcript.delta", turnId: "t1", payload: HEARD }, st)?.captureId).toBe(
      "cap-1",
    );
    expect(s.sequence({ type: "input.audio.appended", payload: { bytes: 320 } }, st)?.captureId).toBe(
      "cap-1",
    );
    expect(s.sequence({ type: "tool.call", turnId: "other", payload: TOOL }, st)?.captureId).toBeUndefined();
    expect(s.sequence({ type: "health.changed", payload: {} }, state())?.captureId).toBeUndefined();
  });

  it("drops and counts output of a turn that is no longer accepted", () => {
    const s = sequencer();
    const st = state({ acceptsOutput: (turnId) => turnId === "current" });
    expect(s.sequence({ type: "output.audio.delta", turnId: "old", payload: AUDIO }, st)).toBeUndefined();
    expect(
      s.sequence({ type: "transcript.done", turnId: "old", final: true, payload: HEARD }, st),
    ).toBeUndefined();
    expect(s.sequence({ type: "output.audio.delta", turnId: "current", payload: AUDIO }, st)?.seq).toBe(1);
    expect(s.droppedStale).toBe(2);
  });

  it("drops late deltas of a cancelled output item but keeps its cancellation event", () => {
    const s = sequencer();
    const st = state({ isCancelledItem: (id) => id === "item-1" });
    expect(
      s.sequence({ type: "output.audio.delta", turnId: "t", itemId: "item-1", payload: AUDIO }, st),
    ).toBeUndefined();
    expect(
      s.sequence(
        { type: "output.audio.cancelled", turnId: "t", itemId: "item-1", payload: { reason: "barge_in" } },
        st,
      )?.seq,
    ).toBe(1);
  });

  it("does not treat tool.cancelled or turn.cancelled of a stale turn as droppable output", () => {
    const s = sequencer();
    const st = state({ acceptsOutput: () => false });
    expect(
      s.sequence(
        {
          type: "tool.cancelled",
          turnId: "old",
          payload: { name: "echo", started: true, reason: "barge_in" },
        },
        st,
      )?.seq,
    ).toBe(1);
    expect(
      s.sequence({ type: "turn.cancelled", turnId: "old", payload: { reason: "barge_in", aborted: [] } }, st)
        ?.seq,
    ).toBe(2);
  });

  it("refuses raw audio bytes in a payload, even nested", () => {
    const s = sequencer();
    // Payload types allow extra fields from a variable, so the check stays at runtime.
    const appended = { bytes: 4, audio: new Uint8Array(4) };
    expect(() => s.sequence({ type: "input.audio.appended", payload: appended }, state())).toThrow(/binary/);
    const delta = { ...AUDIO, chunk: { pcm: new Int16Array(2) } };
    expect(() => s.sequence({ type: "output.audio.delta", turnId: "t", payload: delta }, state())).toThrow(
      /binary/,
    );
  });
});

describe("IsoTimestamps", () => {
  it("writes what Date#toISOString writes, across seconds, days, padding and far years", () => {
    const timestamps = new IsoTimestamps();
    const base = Date.UTC(2026, 10, 25, 23, 59, 59, 0);
    const instants = [
      0,
      5,
      50,
      999,
      1000,
      -1,
      -1000,
      -1001,
      base,
      base + 7,
      base + 70,
      base + 999,
      base + 1000,
      base + 1001,
      base + 86_400_000,
      base - 1,
      Date.UTC(10_000, 0, 1),
      Date.UTC(-1, 5, 1, 0, 0, 0, 42),
      8.64e15,
      base + 0.6,
      base + 999.9,
      -0.5,
      -1000.5,
    ];
    // Each instant twice and in both orders, so a kept second and a changed one are both read.
    for (const ms of [...instants, ...[...instants].reverse(), ...instants.map((x) => x)]) {
      expect(timestamps.format(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it("stamps events with the injected clock's instant, to the millisecond", () => {
    let now = Date.UTC(2026, 0, 2, 3, 4, 5, 6);
    const s = new EventSequencer({
      sessionId: "s1",
      mode: "realtime",
      transport: "gateway-relay",
      brain: "agent-consult",
      now: () => now,
    });
    const first = s.sequence(
      { type: "session.created", payload: { owner: "gateway", metadata: {} } },
      state(),
    );
    now += 995;
    const second = s.sequence(
      { type: "session.created", payload: { owner: "gateway", metadata: {} } },
      state(),
    );
    expect(first?.timestamp).toBe("2026-01-02T03:04:05.006Z");
    expect(second?.timestamp).toBe("2026-01-02T03:04:06.001Z");
  });

  it("keeps the envelope's field order whichever optional fields are present", () => {
    const s = new EventSequencer({
      sessionId: "s1",
      mode: "realtime",
      transport: "gateway-relay",
      brain: "agent-consult",
      provider: "p",
      source: "src",
    });
    const event = s.sequence(
      {
        type: "output.audio.delta",
        turnId: "t1",
        captureId: "c1",
        itemId: "i1",
        parentId: "r1",
        final: false,
        payload: AUDIO,
      },
      state(),
    );
    expect(Object.keys(event ?? {})).toEqual([
      "id",
      "type",
      "sessionId",
      "turnId",
      "captureId",
      "seq",
      "timestamp",
      "mode",
      "transport",
      "brain",
      "provider",
      "final",
      "itemId",
      "parentId",
      "source",
      "payload",
    ]);
  });
});
