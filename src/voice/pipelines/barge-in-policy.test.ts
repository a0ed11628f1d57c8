import { describe, expect, it } from "vitest";
import type { Pronounce } from "../speech/sounds-like.js";
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

describe("BargeInPolicy.judge by sound (matchBySound, a pronunciation dictionary)", () => {
  /** CMU dictionary entries of the words below. */
  const DICT: Record<string, string[][]> = {
    yep: [["Y", "EH", "P"]],
    yet: [["Y", "EH", "T"]],
    yeah: [["Y", "AE"]],
    okay: [["OW", "K", "EY"]],
    ok: [["OW", "K", "EY"]],
    right: [["R", "AY", "T"]],
    write: [["R", "AY", "T"]],
    wait: [["W", "EY", "T"]],
    stop: [["S", "T", "AA", "P"]],
    now: [["N", "AW"]],
    i: [["AY"]],
    o: [["OW"]],
    k: [["K", "EY"]],
    kay: [["K", "EY"]],
    a: [["EY"], ["AH"]],
    mhm: [["AH", "M", "HH", "AH", "M"]],
    mm: [["M"]],
    hmm: [["HH", "M"]],
  };
  const pronounce: Pronounce = (w) => DICT[w];
  const bySound = new BargeInPolicy({ interruptOnSpeech: true, confirmWithWords: true, pronounce });

  it("a word that sounds like a backchannel is one", () => {
    expect(bySound.judge("yet")).toBe("backchannel");
    expect(bySound.judge("write")).toBe("backchannel");
  });

  it("an interruption that sounds like no backchannel still interrupts", () => {
    expect(bySound.judge("wait")).toBe("interrupt");
    expect(bySound.judge("stop")).toBe("interrupt");
    expect(bySound.judge("yet stop")).toBe("interrupt");
    expect(bySound.judge("unknownword")).toBe("interrupt");
  });

  it("three words are never a backchannel by sound", () => {
    expect(bySound.judge("o kay")).toBe("backchannel");
    expect(bySound.judge("o k a")).toBe("interrupt");
  });

  it("is off with matchBySound false, or without a dictionary", () => {
    const off = new BargeInPolicy({
      interruptOnSpeech: true,
      confirmWithWords: true,
      matchBySound: false,
      pronounce,
    });
    expect(off.judge("yet")).toBe("interrupt");
    expect(policy.judge("yet")).toBe("interrupt");
    expect(off.judge("yeah")).toBe("backchannel");
  });
});

describe("resolveBargeIn", () => {
  it("fills the defaults", () => {
    const r = resolveBargeIn();
    expect(r.confirmWithWords).toBe(false);
    expect(r.resumeAfterMs).toBe(1200);
    expect(r.maxHoldMs).toBe(4000);
    expect(r.matchBySound).toBe(true);
    expect(r.pronounce).toBeUndefined();
    expect(r.backchannels).toContain("okay");
  });

  it("holds at least as long as the grace when only the grace is raised", () => {
    expect(resolveBargeIn({ resumeAfterMs: 5000 }).maxHoldMs).toBe(5000);
    expect(resolveBargeIn({ resumeAfterMs: 800, maxHoldMs: 800 }).maxHoldMs).toBe(800);
  });

  it.each([
    [{ resumeAfterMs: 50 }, "resumeAfterMs"],
    [{ resumeAfterMs: 1200.5 }, "resumeAfterMs"],
    [{ maxHoldMs: 1000 }, "maxHoldMs"],
    [{ resumeAfterMs: 2000, maxHoldMs: 1500 }, "maxHoldMs"],
    [{ maxHoldMs: 30_001 }, "maxHoldMs"],
    [{ maxHoldMs: "4s" }, "maxHoldMs"],
    [{ confirmWithWords: "yes" }, "confirmWithWords"],
    [{ matchBySound: 1 }, "matchBySound"],
    [{ backchannels: ["okay", "..."] }, "backchannels"],
    [{ backchannels: "okay" }, "backchannels"],
  ])("refuses %j naming the key", (options, key) => {
    expect(() => resolveBargeIn(options as never)).toThrow(
      expect.objectContaining({ code: "config_invalid", message: expect.stringContaining(`bargeIn.${key}`) }),
    );
  });
});
