import { describe, expect, it } from "vitest";
import { AttenuationWindows } from "./attenuation-windows.js";

describe("AttenuationWindows", () => {
  it("measures nothing until a window of frames is complete", () => {
    const w = new AttenuationWindows(3, 2);
    w.add(1, 10);
    w.add(1, 10);
    expect(w.count).toBe(0);
    expect(w.lowest()).toBe(Number.POSITIVE_INFINITY);
    w.add(1, 10);
    expect(w.count).toBe(1);
    expect(w.lowest()).toBeCloseTo(0.1);
  });

  it("takes a window's ratio of summed powers, not the mean of its frames' ratios", () => {
    const w = new AttenuationWindows(2, 1);
    w.add(1, 1);
    w.add(1, 99);
    expect(w.lowest()).toBeCloseTo(2 / 100);
  });

  it("keeps the lowest of the last windows, forgetting one that left", () => {
    const w = new AttenuationWindows(1, 2);
    w.add(1, 100); // 0.01
    w.add(1, 2); // 0.5
    expect(w.full).toBe(true);
    expect(w.lowest()).toBeCloseTo(0.01);
    w.add(1, 4); // 0.25: the 0.01 window leaves
    expect(w.count).toBe(2);
    expect(w.lowest()).toBeCloseTo(0.25);
  });

  it("skips a window with no input power (nothing played reached the line)", () => {
    const w = new AttenuationWindows(1, 2);
    w.add(0, 0);
    expect(w.count).toBe(0);
    w.add(1, 10);
    expect(w.lowest()).toBeCloseTo(0.1);
  });
});
