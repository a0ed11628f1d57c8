import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { NOOP_LOGGER } from "../core/logger.js";
import { DEBIAN_CMUDICT, loadPronunciations, pronouncerOf } from "./pronunciations.js";

const DICT = ["okay OW K EY", "yeah Y AE", "the DH AH", "the(2) DH IY", "yet Y EH T"].join("\n");

describe("pronouncerOf", () => {
  const pronounce = pronouncerOf(DICT);

  it("finds a word's pronunciations, alternates included, in any case", () => {
    expect(pronounce("okay")).toEqual([["OW", "K", "EY"]]);
    expect(pronounce("The")).toEqual([
      ["DH", "AH"],
      ["DH", "IY"],
    ]);
    expect(pronounce("yet")).toEqual([["Y", "EH", "T"]]);
  });

  it("knows no word it lacks, nor a prefix of one", () => {
    expect(pronounce("zork")).toBeUndefined();
    expect(pronounce("ye")).toBeUndefined();
    expect(pronounce("oka")).toBeUndefined();
  });
});

describe("loadPronunciations (talk.input.bargeIn)", () => {
  it("refuses a dictionary that cannot be read with config_invalid naming the key", () => {
    expect(() =>
      loadPronunciations({ pronunciations: "/nonexistent/cmudict.dict" }, NOOP_LOGGER),
    ).toThrowError(
      expect.objectContaining({ code: "config_invalid", message: expect.stringContaining("pronunciations") }),
    );
  });

  it("reads none when matching by sound is off", () => {
    expect(loadPronunciations({ matchBySound: false }, NOOP_LOGGER)).toBeUndefined();
  });

  it.runIf(existsSync(DEBIAN_CMUDICT))("reads Debian's dictionary by default", () => {
    const pronounce = loadPronunciations({}, NOOP_LOGGER)!;
    expect(pronounce("okay")).toEqual([["OW", "K", "EY"]]);
    expect(pronounce("uh-huh")).toEqual([["AH", "HH", "AH"]]);
  });
});
