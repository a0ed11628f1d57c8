import { describe, expect, it } from "vitest";
import { matchWakePhrase, wakeWords } from "./wake-phrase.js";

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
