import { describe, expect, it } from "vitest";
import { gridSummary, type GridOutcome } from "../../bench/lib/grid-figures.js";

const call = (o: Partial<GridOutcome>): GridOutcome => ({
  kind: "interruption",
  lossDb: 6,
  terDb: 0,
  selfInterruptions: 0,
  echoMinutes: 0.1,
  preempted: false,
  missed: false,
  ...o,
});

describe("gridSummary", () => {
  it("prints the gate alone on the callers' tracks, and the echo path's cost over it, offline", () => {
    const calls = [
      call({ activeLatencyMs: 140, aloneActiveLatencyMs: 120, aloneHeard: true }),
      call({ activeLatencyMs: 620, aloneActiveLatencyMs: 600, aloneHeard: true }),
      call({ activeLatencyMs: 400, aloneActiveLatencyMs: 140, aloneHeard: true }),
      call({ missed: true, aloneHeard: false }),
      call({ terDb: -10, activeLatencyMs: 900, aloneActiveLatencyMs: 100, aloneHeard: true }),
    ];
    const line = gridSummary(calls, -6);
    expect(line).toContain("P.56 onset -> clear p50/p95 400/620 ms over 3, missed 1");
    // The floor: 120, 140, 600 (the TER -10 dB call is outside the goal's cells); one caller the gate alone missed.
    expect(line).toContain(
      "the gate alone on the callers' tracks (TER >= the same) p50/p95 140/600 ms, missed 1",
    );
    // The cost per call: 20, 20, 260.
    expect(line).toContain("p50/p95 20/260 ms, 1 calls 100 ms or more");
  });

  it("says nothing of the gate alone where the run has no such figure (real time)", () => {
    const line = gridSummary([call({ activeLatencyMs: 300 })], -6);
    expect(line).not.toContain("alone");
  });
});
