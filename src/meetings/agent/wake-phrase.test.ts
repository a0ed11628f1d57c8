import { describe, expect, it } from "vitest";
import { matchAddress, matchWakePhrase, wakeWords } from "./wake-phrase.js";

describe("matchWakePhrase", () => {
  it("finds a trigger anywhere, ignoring case and punctuation, and returns the words after it", () => {
    expect(matchWakePhrase("Well, Computer: what time is it?", ["computer"])).toEqual({
      trigger: "computer",
      rest: "what time is it",
    });
    expect(matchWakePhrase("go forward ten meters", ["go forward"])).toEqual({
      trigger: "go forward",
      rest: "ten meters",
    });
  });

  it("tolerates a recognizer's small misspellings of longer words but not of short ones", () => {
    expect(matchWakePhrase("computor please", ["computer"])?.rest).toBe("please");
    expect(matchWakePhrase("hey talkgait", ["talkgate"])?.trigger).toBe("talkgate");
    expect(matchWakePhrase("go for word", ["go forward"])).toBeUndefined();
    expect(matchWakePhrase("so forward", ["go forward"])).toBeUndefined();
  });

  it("answers undefined when no trigger is said, and ignores empty triggers", () => {
    expect(matchWakePhrase("nothing to see here", ["computer", " "])).toBeUndefined();
    expect(matchWakePhrase("", ["computer"])).toBeUndefined();
  });

  it("prefers the earliest trigger, then the longest one at the same place", () => {
    expect(matchWakePhrase("assistant computer go", ["computer", "assistant"])?.trigger).toBe("assistant");
    expect(matchWakePhrase("hey computer go", ["hey", "hey computer"])).toEqual({
      trigger: "hey computer",
      rest: "go",
    });
  });

  it("splits words on whitespace and punctuation", () => {
    expect(wakeWords(" Hello,  WORLD!  it's ")).toEqual(["hello", "world", "it's"]);
  });
});

describe("matchAddress (chat)", () => {
  it("takes a name or trigger at the start only, @ and punctuation ignored", () => {
    const names = ["Assistant", "talkgate", "hey bot"];
    expect(matchAddress("@Assistant, what is the plan?", names)).toEqual({
      trigger: "Assistant",
      rest: "what is the plan",
    });
    expect(matchAddress("Hey bot summary", names)).toEqual({ trigger: "hey bot", rest: "summary" });
    expect(matchAddress("talkgait: hi", names)?.trigger).toBe("talkgate");
    expect(matchAddress("ask the Assistant later", names)).toBeUndefined();
    expect(matchAddress("Assistant", names)).toEqual({ trigger: "Assistant", rest: "" });
    expect(matchAddress("", names)).toBeUndefined();
  });
});
