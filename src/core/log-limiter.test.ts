import { describe, expect, it } from "vitest";
import { WindowedLogLimiter } from "./log-limiter.js";

describe("WindowedLogLimiter", () => {
  it("logs perWindow lines per reason per window and reports what it suppressed on the next window's first line", () => {
    let now = 0;
    const limiter = new WindowedLogLimiter({ perWindow: 3, windowMs: 1000, now: () => now });
    const first = Array.from({ length: 1000 }, () => limiter.take("invalid_utf8"));
    expect(first.filter((d) => d.log)).toHaveLength(3);
    // Another reason has its own budget.
    expect(limiter.take("frame_too_large")).toEqual({ log: true, suppressed: 0 });
    now = 1000;
    expect(limiter.take("invalid_utf8")).toEqual({ log: true, suppressed: 997 });
    // Not per process lifetime: a later flood is logged again.
    now = 5000;
    expect(limiter.take("invalid_utf8")).toEqual({ log: true, suppressed: 0 });
  });

  it("refuses a bad option with config_invalid", () => {
    expect(() => new WindowedLogLimiter({ perWindow: 0 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });
});
