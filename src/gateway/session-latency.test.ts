import { afterEach, describe, expect, it } from "vitest";
import { createTalkRuntime, type TalkEvent, type TalkRuntime } from "../core/index.js";
import { SessionLatency } from "./session-latency.js";

const tick = () => new Promise<void>((resolve) => queueMicrotask(resolve));

describe("SessionLatency", () => {
  let runtime: TalkRuntime;

  afterEach(async () => {
    await runtime?.close();
  });

  function session() {
    runtime = createTalkRuntime({});
    const s = runtime.createSession({
      mode: "stt-tts",
      transport: "managed-room",
      brain: "agent-consult",
      owner: "gateway",
    });
    const latency = new SessionLatency(s);
    const metrics: TalkEvent[] = [];
    s.subscribe((event) => {
      latency.observe(event);
      if (event.type === "latency.metrics") metrics.push(event);
    });
    return { s, latency, metrics };
  }

  it("emits each figure once per answered turn, after the event that completed it, from the turn's end", async () => {
    const { s, latency, metrics } = session();
    const turn = s.startTurn();
    s.endTurn(turn.id);
    s.emit({ type: "input.audio.committed", turnId: turn.id, payload: { bytes: 0, durationMs: 0 } });
    s.emit({ type: "transcript.done", turnId: turn.id, final: true, payload: { role: "user", text: "hi" } });
    s.emit({ type: "output.text.delta", turnId: turn.id, itemId: "i1", payload: { text: "Hel" } });
    s.emit({ type: "output.text.delta", turnId: turn.id, itemId: "i1", payload: { text: "lo" } });
    latency.audioSent(turn.id);
    latency.audioSent(turn.id);
    await tick();
    expect(metrics.map((e) => (e.payload as { name: string }).name)).toEqual([
      "turn_end_to_transcript",
      "turn_end_to_first_text",
      "turn_end_to_first_audio",
    ]);
    for (const e of metrics) {
      expect(e.turnId).toBe(turn.id);
      expect(e.source).toBe("gateway");
      expect((e.payload as { ms: number }).ms).toBeGreaterThanOrEqual(0);
    }
    // Every subscriber saw the session's events in seq order.
    const seqs = s.replay(0).events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it("measures nothing for a turn that never ended, nor for a cancelled one", async () => {
    const { s, latency, metrics } = session();
    const open = s.startTurn();
    s.emit({ type: "output.text.delta", turnId: open.id, itemId: "i1", payload: { text: "x" } });
    latency.audioSent(open.id);
    s.emit({ type: "input.audio.committed", turnId: open.id, payload: { bytes: 0, durationMs: 0 } });
    s.cancelTurn(open.id, "client_request");
    latency.audioSent(open.id);
    await tick();
    expect(metrics).toEqual([]);
  });
});
