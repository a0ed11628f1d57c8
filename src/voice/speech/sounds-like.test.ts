import { describe, expect, it } from "vitest";
import { phoneEdits, pronounceAll, soundsLike, type Pronounce } from "./sounds-like.js";

/** A few CMU dictionary entries. */
const DICT: Record<string, string[][]> = {
  yeah: [["Y", "AE"]],
  yet: [["Y", "EH", "T"]],
  yep: [["Y", "EH", "P"]],
  okay: [["OW", "K", "EY"]],
  eight: [["EY", "T"]],
  wait: [["W", "EY", "T"]],
  mm: [["M"]],
  hmm: [["HH", "M"]],
  right: [["R", "AY", "T"]],
  the: [
    ["DH", "AH"],
    ["DH", "IY"],
  ],
};
const pronounce: Pronounce = (w) => DICT[w];

describe("phoneEdits", () => {
  it("counts substitutions, insertions and deletions", () => {
    expect(phoneEdits(["Y", "EH", "T"], ["Y", "EH", "P"])).toBe(1);
    expect(phoneEdits(["Y", "AE"], ["Y", "EH", "P"])).toBe(2);
    expect(phoneEdits([], ["M"])).toBe(1);
    expect(phoneEdits(["R", "AY", "T"], ["R", "AY", "T"])).toBe(0);
  });
});

describe("pronounceAll", () => {
  it("spells a phrase as every combination of its words' pronunciations", () => {
    expect(pronounceAll(["the", "yeah"], pronounce)).toEqual([
      ["DH", "AH", "Y", "AE"],
      ["DH", "IY", "Y", "AE"],
    ]);
  });

  it("says a hyphenated word the dictionary lacks as its parts; an unknown word has no pronunciation", () => {
    expect(pronounceAll(["mm-hmm"], pronounce)).toEqual([["M", "HH", "M"]]);
    expect(pronounceAll(["yeah", "zork"], pronounce)).toBeUndefined();
  });
});

describe("soundsLike", () => {
  const targets = [...pronounceAll(["yep"], pronounce)!, ...pronounceAll(["okay"], pronounce)!];

  it("takes a word one phone in three away from a target", () => {
    expect(soundsLike(["yet"], targets, pronounce, 1 / 3)).toBe(true);
  });

  it("refuses what is further away, or unknown, or nothing", () => {
    expect(soundsLike(["wait"], targets, pronounce, 1 / 3)).toBe(false);
    expect(soundsLike(["eight"], targets, pronounce, 1 / 3)).toBe(false);
    expect(soundsLike(["zork"], targets, pronounce, 1 / 3)).toBe(false);
    expect(soundsLike([], targets, pronounce, 1 / 3)).toBe(false);
  });

  it("the allowance scales with the target's length", () => {
    expect(soundsLike(["yeah"], targets, pronounce, 1 / 3)).toBe(false);
    expect(soundsLike(["yeah"], targets, pronounce, 2 / 3)).toBe(true);
    expect(soundsLike(["yet"], targets, pronounce, 0)).toBe(false);
  });
});
