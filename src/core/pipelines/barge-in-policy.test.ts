import { describe, expect, it } from "vitest";
import { BargeInPolicy, resolveBargeIn } from "./barge-in-policy.js";

const policy = new BargeInPolicy({ interruptOnSpeech: true, confirmWithWords: true });

describe("BargeInPolicy.judge", () => {
  it("backchannels alone do not interrupt, in any case or punctuation", () => {
    expect(policy.judge("okay")).toBe("backchannel");
    expect(policy.judge("Mm-hmm.")).toBe("backchannel");
    expect(policy.judge("yeah, right")).toBe("backchannel");
    expect(policy.judge("uh-huh okay")).toBe("backchannel");
  });

  it("any other word interrupts", () => {
    expect(policy.judge("okay stop")).toBe("interrupt");
    expect(policy.judge("wait")).toBe("interrupt");
    expect(policy.judge("go forward ten meters")).toBe("interrupt");
  });

  it("no words, or only fillers, is no claim on the turn", () => {
    expect(policy.judge("")).toBe("none");
    expect(policy.judge("  ")).toBe("none");
    expect(policy.judge("ah")).toBe("none");
    expect(policy.judge("uh um")).toBe("none");
  });

  it("the list is configurable: a word left out of it interrupts", () => {
    const strict = new BargeInPolicy({ interruptOnSpeech: true, backchannels: ["mm-hmm"] });
    expect(strict.judge("okay")).toBe("interrupt");
    expect(strict.judge("mm hmm")).toBe("backchannel");
  });
});

describe("resolveBargeIn", () => {
  it("fills the defaults", () => {
    const r = resolveBargeIn();
    expect(r.confirmWithWords).toBe(false);
    expect(r.resumeAfterMs).toBe(1200);
    expect(r.backchannels).toContain("okay");
  });

  it.each([
    [{ resumeAfterMs: 50 }, "resumeAfterMs"],
    [{ resumeAfterMs: 1200.5 }, "resumeAfterMs"],
    [{ confirmWithWords: "yes" }, "confirmWithWords"],
    [{ backchannels: ["okay", "..."] }, "backchannels"],
    [{ backchannels: "okay" }, "backchannels"],
  ])("refuses %j naming the key", (options, key) => {
    expect(() => resolveBargeIn(options as never)).toThrow(
      expect.objectContaining({ code: "config_invalid", message: expect.stringContaining(`bargeIn.${key}`) }),
    );
  });
});
