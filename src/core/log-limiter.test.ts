import { afterEach, describe, expect, it, vi } from "vitest";
import { LimitedLog, WindowedLogLimiter } from "./log-limiter.js";
import type { TalkLogger } from "./logger.js";

afterEach(() => {
  vi.useRealTimers();
});

/** A logger that keeps its warn lines. */
function recording(): { logger: TalkLogger; lines: { fields: Record<string, unknown>; msg: string }[] } {
  const lines: { fields: Record<string, unknown>; msg: string }[] = [];
  const warn = (fields: unknown, msg?: string): void =>
    void lines.push({ fields: fields as Record<string, unknown>, msg: msg ?? "" });
  const noop = (): void => {};
  return { logger: { warn, info: noop, debug: noop, error: noop } as unknown as TalkLogger, lines };
}

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

  it("reports what a window suppressed at its end, once, and the next window's first line carries nothing", () => {
    vi.useFakeTimers();
    const reports: [string, number][] = [];
    const limiter = new WindowedLogLimiter({
      perWindow: 2,
      windowMs: 1000,
      report: (reason, n) => reports.push([reason, n]),
    });
    for (let i = 0; i < 50; i++) limiter.take("token_invalid");
    limiter.take("signature");
    expect(reports).toEqual([]);
    vi.advanceTimersByTime(1000);
    // A reason that suppressed nothing is not reported.
    expect(reports).toEqual([["token_invalid", 48]]);
    expect(limiter.take("token_invalid")).toEqual({ log: true, suppressed: 0 });
    vi.advanceTimersByTime(5000);
    expect(reports).toHaveLength(1);
  });

  it("close() reports the open windows' counts at once", () => {
    const reports: [string, number][] = [];
    const limiter = new WindowedLogLimiter({ perWindow: 1, report: (r, n) => reports.push([r, n]) });
    for (let i = 0; i < 5; i++) limiter.take("a");
    limiter.close();
    limiter.close();
    expect(reports).toEqual([["a", 4]]);
  });

  it("refuses a bad option with config_invalid", () => {
    expect(() => new WindowedLogLimiter({ perWindow: 0 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });
});

describe("LimitedLog", () => {
  it("writes 10 lines per key per minute, then one line with the count and the first suppressed line's fields", () => {
    vi.useFakeTimers();
    const { logger, lines } = recording();
    const log = new LimitedLog(logger);
    for (let i = 0; i < 2000; i++)
      log.warn(
        "twilio:token:invalid",
        { carrier: "twilio", reason: "invalid", ip: `10.0.0.${i % 250}` },
        "token refused",
      );
    log.warn("twilio:signature", { carrier: "twilio" }, "signature rejected");
    expect(lines).toHaveLength(11);
    vi.advanceTimersByTime(60_000);
    expect(lines).toHaveLength(12);
    expect(lines[11]).toEqual({
      fields: { carrier: "twilio", reason: "invalid", ip: "10.0.0.10", suppressed: 1990, windowEnded: true },
      msg: "token refused (1990 more not logged)",
    });
    // The next flood is logged again, and its first line owes nothing.
    log.warn("twilio:token:invalid", { reason: "invalid" }, "token refused");
    expect(lines[12]).toEqual({ fields: { reason: "invalid" }, msg: "token refused" });
  });

  it("close() writes the counts of the windows still open", () => {
    const { logger, lines } = recording();
    const log = new LimitedLog(logger, { perWindow: 1 });
    log.warn("k", { a: 1 }, "refused");
    log.warn("k", { a: 2 }, "refused");
    log.warn("k", { a: 3 }, "refused");
    log.close();
    expect(lines.map((l) => l.fields)).toEqual([{ a: 1 }, { a: 2, suppressed: 2, windowEnded: true }]);
  });
});
