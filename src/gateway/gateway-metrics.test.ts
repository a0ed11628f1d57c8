import { afterEach, describe, expect, it } from "vitest";
import { createTalkRuntime } from "../core/session-runtime.js";
import type { TalkRuntime } from "../core/session-types.js";
import { GatewayMetrics } from "./gateway-metrics.js";

let runtime: TalkRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

function eventsByFamily(text: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const [, family, n] of text.matchAll(/^talkgate_events_total\{family="([^"]+)"\} (\d+)$/gm))
    counts[family!] = Number(n);
  return counts;
}

describe("GatewayMetrics", () => {
  it("counts every event by family, each once however often it is scraped", async () => {
    runtime = createTalkRuntime();
    const metrics = new GatewayMetrics(runtime);
    const session = runtime.createSession({
      mode: "realtime",
      transport: "gateway-relay",
      brain: "agent-consult",
      owner: "gateway",
    });
    for (let i = 0; i < 7; i++) session.emit({ type: "input.audio.appended", payload: { bytes: 160 } });
    const turn = session.startTurn();
    const first = eventsByFamily(await metrics.exposition());
    expect(first).toEqual({ session: 1, input: 7, turn: 1 });
    // A second scrape with nothing new reads the same totals (pending counts are added once).
    expect(eventsByFamily(await metrics.exposition())).toEqual(first);
    session.emit({ type: "input.audio.appended", turnId: turn.id, payload: { bytes: 160 } });
    await session.close("completed");
    const last = eventsByFamily(await metrics.exposition());
    expect(last["input"]).toBe(8);
    expect(last["session"]).toBe(2);
    expect(last["turn"]).toBeGreaterThanOrEqual(2);
    metrics.close();
  });
});
