import { describe, expect, it } from "vitest";
import { toSpeakable } from "./speakable-text.js";

describe("toSpeakable", () => {
  it("removes emphasis, strike-through and inline code markers but keeps the words", () => {
    expect(toSpeakable("This is **very** important, *really* _truly_ ~~not~~ `npm test` ok.")).toBe(
      "This is very important, really truly not npm test ok.",
    );
  });

  it("keeps asterisks and underscores that are not emphasis", () => {
    expect(toSpeakable("2 * 3 = 6 and 5*4 = 20 in my_snake_case name.")).toBe(
      "2 * 3 = 6 and 5*4 = 20 in my_snake_case name.",
    );
  });

  it("strips unbalanced markers left when a chunk splits a bold span", () => {
    expect(toSpeakable("**The first half of a bold")).toBe("The first half of a bold");
    expect(toSpeakable("second half.** Then more")).toBe("second half. Then more");
  });

  it("reads headings, bullets and blockquotes without their markers, with a pause per line", () => {
    expect(toSpeakable("# Plan\n- eggs\n* milk\n+ bread\n> quoted line\n1. first step")).toBe(
      "Plan. eggs. milk. bread. quoted line. 1. first step",
    );
  });

  it("reads links and images as their text, autolinks as the address", () => {
    expect(
      toSpeakable("See [the docs](https://x.example/a_b) and ![a cat](cat.png) or <https://y.example>."),
    ).toBe("See the docs and a cat or https://y.example.");
  });

  it("drops code fence lines and rules but keeps the code text", () => {
    expect(toSpeakable("Run this:\n```bash\nnpm start\n```\n---\nDone.")).toBe("Run this: npm start. Done.");
  });

  it("reads a table as comma-separated cells without the separator row", () => {
    expect(toSpeakable("| Day | Temp |\n|---|---:|\n| Mon | 20 |")).toBe("Day, Temp. Mon, 20");
  });

  it("returns an empty string for markup only", () => {
    expect(toSpeakable("```\n---\n\n  ")).toBe("");
  });

  it("leaves plain text unchanged", () => {
    const plain = "Your flight leaves at 9:45 a.m. from gate B12. Email me@example.org, or call 555-0100!";
    expect(toSpeakable(plain)).toBe(plain);
  });
});
