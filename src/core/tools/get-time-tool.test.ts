import { describe, expect, it } from "vitest";
import { createGetTimeTool } from "./get-time-tool.js";

describe("get_time tool", () => {
  it("answers the clock's time in the configured zone", async () => {
    const tool = createGetTimeTool({ timeZone: "UTC", now: () => Date.UTC(2026, 10, 21, 12, 30) });
    const out = JSON.parse(await tool.handler({}, { signal: new AbortController().signal } as never));
    expect(out.iso).toBe("2026-11-21T12:30:00.000Z");
    expect(out.local).toContain("November 21, 2026");
  });

  it("refuses an unknown time zone when it is created", () => {
    expect(() => createGetTimeTool({ timeZone: "Mars/Olympus" })).toThrow(RangeError);
  });
});
