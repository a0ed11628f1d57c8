import { describe, expect, it } from "vitest";
import { DENY_ALL_TOOLS, ToolPolicy } from "./tool-policy.js";

describe("ToolPolicy", () => {
  it("lets deny win over allow, including over a * allow", () => {
    const policy = new ToolPolicy({ allow: ["*"], deny: ["bash"] });
    expect(policy.evaluate("bash")).toEqual({ allowed: false, reason: "denied", pattern: "bash" });
    expect(policy.isAllowed("read")).toBe(true);
    expect(new ToolPolicy({ allow: ["bash"], deny: ["ba*"] }).isAllowed("bash")).toBe(false);
  });

  it("allows everything not denied when no allow list is given, and nothing with an empty one", () => {
    expect(new ToolPolicy({ deny: ["browser"] }).isAllowed("read")).toBe(true);
    expect(DENY_ALL_TOOLS.evaluate("read")).toEqual({ allowed: false, reason: "not_allowed" });
  });

  it("matches * anywhere in a pattern, and nothing else as a wildcard", () => {
    const policy = new ToolPolicy({ allow: ["fs_*", "*_status"] });
    expect(policy.isAllowed("fs_read")).toBe(true);
    expect(policy.isAllowed("call_status")).toBe(true);
    expect(policy.isAllowed("fsread")).toBe(false);
    expect(new ToolPolicy({ allow: ["a.b"] }).isAllowed("axb")).toBe(false);
  });

  it("a policy within another refuses what the outer one refuses, with the outer decision", () => {
    const general = new ToolPolicy({ allow: ["*"], deny: ["shell"] });
    const selection = new ToolPolicy({ allow: ["echo", "shell"], within: general });
    expect(selection.isAllowed("echo")).toBe(true);
    expect(selection.evaluate("shell")).toEqual({ allowed: false, reason: "denied", pattern: "shell" });
    expect(selection.evaluate("get_time")).toEqual({ allowed: false, reason: "not_allowed" });
    expect(general.isAllowed("get_time")).toBe(true);
    expect(() => new ToolPolicy({ within: {} as never })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });

  it("rejects malformed lists with config_invalid at construction", () => {
    expect(() => new ToolPolicy({ allow: ["ok", ""] })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => new ToolPolicy({ deny: "bash" as never })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });
});
