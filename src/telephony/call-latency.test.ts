import { describe, expect, it } from "vitest";
import type { RealtimeProvider, RealtimeProviderEvent } from "../core/provider-types.js";
import { CallLatency, type CallLatencyPayload } from "./call-latency.js";

function latency(): { l: CallLatency; out: CallLatencyPayload[] } {
  const out: CallLatencyPayload[] = [];
  return { l: new CallLatency({ emit: (p) => out.push(p) }), out };
}

describe("CallLatency", () => {
  it("attributes a clear to the barge-in being handled, and only that one clear", () => {
    const { l, out } = latency();
    l.clearSent(); // a clear with no barge-in (e.g. a hang-up) is not a barge-in figure
    l.bargeInDetected("local_vad");
    l.clearSent();
    l.clearSent();
    l.bargeInHandled();
    expect(out).toEqual([{ name: "barge_in_to_clear", ms: expect.any(Number), detector: "local_vad" }]);
  });

  it("a barge-in handled without a clear leaves later clears unattributed", () => {
    const { l, out } = latency();
    l.bargeInDetected("provider");
    l.bargeInHandled();
    l.clearSent();
    expect(out).toHaveLength(0);
  });

  it("times the first answer frame after the caller stopped, once, with the VAD hangover beside it", () => {
    const { l, out } = latency();
    l.itemFirstFrame(); // a greeting: nobody spoke yet
    l.speechEnded("local_vad", 800);
    l.itemFirstFrame();
    l.itemFirstFrame();
    expect(out).toEqual([
      {
        name: "speech_end_to_first_audio",
        ms: expect.any(Number),
        detector: "local_vad",
        endpointingMs: 800,
      },
    ]);
  });

  it("reports each turn's own endpoint (an adaptive end of turn differs from turn to turn)", () => {
    const { l, out } = latency();
    l.speechEnded("local_vad", 550);
    l.itemFirstFrame();
    l.speechEnded("local_vad", 1500);
    l.itemFirstFrame();
    l.speechEnded("provider");
    l.itemFirstFrame();
    expect(out.map((p) => p.endpointingMs)).toEqual([550, 1500, undefined]);
  });

  it("wraps a realtime provider so its speech events are timed and still delivered in order", async () => {
    const { l, out } = latency();
    let emit: ((e: RealtimeProviderEvent) => void) | undefined;
    const provider = {
      id: "fake",
      kind: "realtime",
      capabilities: { gatewayRelay: true },
      connect: async (_o: unknown, onEvent: (e: RealtimeProviderEvent) => void) => {
        emit = onEvent;
        return {} as never;
      },
    } as unknown as RealtimeProvider;
    const timed = l.timedRealtime(provider);
    expect(timed.id).toBe("fake");
    const seen: string[] = [];
    await timed.connect!({} as never, (e) => {
      seen.push(e.type);
      if (e.type === "speech_started") l.clearSent(); // the pipeline clears while handling speech_started
    });
    emit!({ type: "speech_stopped" });
    emit!({ type: "speech_started" });
    l.clearSent(); // after handling: not attributed
    l.itemFirstFrame();
    expect(seen).toEqual(["speech_stopped", "speech_started"]);
    expect(out.map((p) => [p.name, p.detector])).toEqual([
      ["barge_in_to_clear", "provider"],
      ["speech_end_to_first_audio", "provider"],
    ]);
  });
});
