import { describe, expect, it } from "vitest";
import { TalkError } from "../../core/errors.js";
import {
  chunkText,
  createSmartChunker,
  SMART_CHUNKER_DEFAULTS,
  type SmartChunkerOptions,
} from "./smart-chunker.js";

/** Deterministic PRNG so a failing property case can be replayed. */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function charByChar(text: string, options: SmartChunkerOptions): string[] {
  const chunker = createSmartChunker(options);
  const out: string[] = [];
  for (const ch of text) out.push(...chunker.push(ch));
  return [...out, ...chunker.flush()];
}

function randomSplits(text: string, options: SmartChunkerOptions, rand: () => number): string[] {
  const chunker = createSmartChunker(options);
  const out: string[] = [];
  let i = 0;
  while (i < text.length) {
    const n = 1 + Math.floor(rand() * 12);
    out.push(...chunker.push(text.slice(i, i + n)));
    i += n;
  }
  return [...out, ...chunker.flush()];
}

const normalize = (s: string): string => s.replace(/\s+/g, " ").trim();

const SMALL: SmartChunkerOptions = {
  firstChunkMinChars: 10,
  firstChunkMaxChars: 60,
  minChars: 20,
  maxChars: 60,
};

const LONG_ANSWER = [
  "Sure, here is what I found about your trip to Boston on Friday.",
  "",
  "Your flight leaves at 9:45 a.m. from gate B12, and the fare was $312.50 including taxes; Dr. Smith's office confirmed the appointment at 2 p.m. at 100 Main St. in Cambridge.",
  "",
  "Things to bring:",
  "- your passport, e.g. for the hotel check-in",
  "- the printed confirmation (see https://example.com/trips/4711?ref=mail.)",
  "- a charger",
  "",
  "1. Check in online 24 hours before.",
  "2. Arrive at the airport by 8:15.",
  "3. Call +1 555 0100 or write to travel.desk@example.org if anything changes.",
  "",
  "The weather in the U.S. northeast will be mild, around 3.5 degrees above the seasonal average, with a light breeze from the west and no rain expected before the evening, when a front moves in from the Great Lakes region and brings clouds",
  "That is all for now! Anything else?",
].join("\n");

describe("smart chunker: boundaries", () => {
  it("holds text back until a sentence ends after firstChunkMinChars", () => {
    const chunker = createSmartChunker({ firstChunkMinChars: 20 });
    expect(chunker.push("Hi. Here is")).toEqual([]);
    expect(chunker.push(" the plan.")).toEqual([]);
    // The sentence end is only known once whitespace follows the full stop.
    expect(chunker.push(" Next")).toEqual(["Hi. Here is the plan."]);
    expect(chunker.flush()).toEqual(["Next"]);
  });

  it("groups later sentences until minChars is reached", () => {
    const text = "First sentence is here. One. Two. Three. Four. Five. Six and a longer one. End.";
    const chunks = chunkText(text, {
      firstChunkMinChars: 10,
      minChars: 30,
      maxChars: 100,
      firstChunkMaxChars: 100,
    });
    expect(chunks).toEqual([
      "First sentence is here.",
      "One. Two. Three. Four. Five. Six and a longer one.",
      "End.",
    ]);
  });

  it("cuts at a paragraph break or a line break even without punctuation", () => {
    expect(chunkText("A heading without a stop\n\nThen the body text.", SMALL)).toEqual([
      "A heading without a stop",
      "Then the body text.",
    ]);
    expect(chunkText("Items you asked about\n- apples and pears\n- bread", SMALL)).toEqual([
      "Items you asked about",
      "- apples and pears\n- bread",
    ]);
  });

  it("never cuts after an ordered-list number or a bullet at a line start", () => {
    const chunks = chunkText("Steps follow here:\n1. Open the door now please.\n2. Walk in.", {
      ...SMALL,
      firstChunkMinChars: 1,
      minChars: 1,
    });
    expect(chunks).toEqual(["Steps follow here:", "1. Open the door now please.", "2. Walk in."]);
  });

  it("does not end a sentence at abbreviations, initials or acronyms", () => {
    const text =
      "We met Dr. Who and J. R. Smith, e.g. at 5 p.m. in the U.S. capital, vs. last year. Done here.";
    const chunks = chunkText(text, {
      firstChunkMinChars: 1,
      firstChunkMaxChars: 200,
      minChars: 1,
      maxChars: 200,
    });
    expect(chunks).toEqual([
      "We met Dr. Who and J. R. Smith, e.g. at 5 p.m. in the U.S. capital, vs. last year.",
      "Done here.",
    ]);
  });

  it("never splits a number, URL or email even when forced to cut at words", () => {
    const text = "pi is 3.14159 and the page https://example.com/a.b?c=d.e lists mail.me@example.org too";
    const chunks = chunkText(text, {
      firstChunkMinChars: 1,
      firstChunkMaxChars: 32,
      minChars: 1,
      maxChars: 32,
    });
    expect(chunks.length).toBeGreaterThan(2);
    for (const token of ["3.14159", "https://example.com/a.b?c=d.e", "mail.me@example.org"]) {
      expect(chunks.some((c) => c.split(" ").includes(token))).toBe(true);
    }
    expect(normalize(chunks.join(" "))).toBe(text);
  });

  it("takes a sentence end after closing quotes and markdown", () => {
    expect(chunkText('He said "stop here." Then **it is done.** Next one', SMALL)).toEqual([
      'He said "stop here."',
      "Then **it is done.**",
      "Next one",
    ]);
  });

  it("does not treat a full stop without following space as a sentence end", () => {
    expect(chunkText("Version 2.0.1 shipped today.Next part", SMALL)).toEqual([
      "Version 2.0.1 shipped today.Next part",
    ]);
  });

  it("falls back to the latest clause within maxChars when no sentence ends in time", () => {
    const text =
      "one two three, four five six, seven eight nine ten eleven, twelve thirteen fourteen fifteen sixteen";
    const chunks = chunkText(text, {
      firstChunkMinChars: 10,
      firstChunkMaxChars: 60,
      minChars: 10,
      maxChars: 60,
    });
    expect(chunks[0]).toBe("one two three, four five six, seven eight nine ten eleven,");
    expect(normalize(chunks.join(" "))).toBe(text);
  });

  it("falls back to a word boundary and never exceeds maxChars", () => {
    const words = Array.from({ length: 60 }, (_, i) => `word${i}`).join(" ");
    const chunks = chunkText(words, {
      firstChunkMinChars: 10,
      firstChunkMaxChars: 50,
      minChars: 20,
      maxChars: 50,
    });
    expect(chunks.length).toBeGreaterThan(5);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(50);
      expect(c).toMatch(/^word\d+( word\d+)*$/);
    }
    expect(chunks.join(" ")).toBe(words);
  });

  it("hard-cuts a single token longer than maxChars at maxChars", () => {
    const token = "x".repeat(130);
    expect(
      chunkText(`${token} tail`, {
        firstChunkMinChars: 5,
        firstChunkMaxChars: 50,
        minChars: 5,
        maxChars: 50,
      }),
    ).toEqual(["x".repeat(50), "x".repeat(50), `${"x".repeat(30)} tail`]);
  });

  it("ignores leading and whitespace-only deltas", () => {
    const chunker = createSmartChunker(SMALL);
    expect(chunker.push("   \n\n ")).toEqual([]);
    expect(chunker.push("  ")).toEqual([]);
    expect(chunker.flush()).toEqual([]);
  });

  it("resets after flush so the next answer gets the short first chunk again", () => {
    const chunker = createSmartChunker({
      firstChunkMinChars: 5,
      firstChunkMaxChars: 100,
      minChars: 50,
      maxChars: 100,
    });
    expect(chunker.push("Hello there. General. ")).toEqual(["Hello there."]);
    expect(chunker.flush()).toEqual(["General."]);
    expect(chunker.push("Again now. More. ")).toEqual(["Again now."]);
  });

  it("returns speakable chunks without markdown when asked, dropping empty ones", () => {
    const text =
      "## Summary\n\n**Bold** claim with a [link](https://x.example) here.\n\n---\n\n- `code` item done.";
    const chunks = chunkText(text, { ...SMALL, firstChunkMinChars: 1, minChars: 1, speakable: true });
    expect(chunks).toEqual(["Summary", "Bold claim with a link here.", "code item done."]);
  });

  it("keeps the short first-chunk limits for the first chunk actually spoken", () => {
    const options = {
      firstChunkMinChars: 5,
      firstChunkMaxChars: 100,
      minChars: 100,
      maxChars: 200,
      speakable: true,
    };
    expect(chunkText("---\n\nHi there friend. More text follows here.", options)).toEqual([
      "Hi there friend.",
      "More text follows here.",
    ]);
  });

  it("documents and uses its defaults", () => {
    expect(SMART_CHUNKER_DEFAULTS).toEqual({
      minChars: 120,
      maxChars: 400,
      firstChunkMinChars: 20,
      firstChunkMaxChars: 200,
      speakable: false,
    });
    const chunks = chunkText(LONG_ANSWER.repeat(3));
    expect(chunks[0]!.length).toBeLessThanOrEqual(200);
    for (const c of chunks.slice(1, -1)) expect(c.length).toBeLessThanOrEqual(400);
  });

  it("rejects invalid options with config_invalid at construction", () => {
    for (const bad of [
      { minChars: 0 },
      { maxChars: 1.5 },
      { minChars: 500, maxChars: 400 },
      { firstChunkMinChars: 300 },
    ]) {
      expect(() => createSmartChunker(bad)).toThrow(TalkError);
      try {
        createSmartChunker(bad);
      } catch (err) {
        expect((err as TalkError).code).toBe("config_invalid");
      }
    }
  });
});

describe("smart chunker: chunk safety", () => {
  const optionSets: SmartChunkerOptions[] = [
    {},
    SMALL,
    { firstChunkMinChars: 1, firstChunkMaxChars: 8, minChars: 1, maxChars: 8 },
    { firstChunkMinChars: 40, firstChunkMaxChars: 90, minChars: 70, maxChars: 90 },
  ];
  const texts = [
    LONG_ANSWER,
    "short",
    "A.  B.\n\n\n\n   C!   " + " ".repeat(40) + "D, e; f: g — h",
    "x".repeat(300) + " " + "y ".repeat(100),
    "Emoji 😀😀😀😀😀😀 test. " + "😀".repeat(50) + " end.",
  ];

  it("gives the same chunks one character at a time as in one push", () => {
    for (const options of optionSets) {
      for (const text of texts) expect(charByChar(text, options)).toEqual(chunkText(text, options));
    }
  });

  it("gives the same chunks for random split points, keeps every word and respects maxChars", () => {
    const rand = mulberry32(20260304);
    const vocabulary = [
      "word",
      "3.14",
      "e.g.",
      "Dr.",
      "U.S.",
      "end.",
      "stop!",
      "why?",
      "a,",
      "b;",
      "c:",
      "—",
      "\n",
      "\n\n",
      "\n- ",
      "\n1. ",
      "https://x.io/a.b",
      "me@x.org",
      "**bold**",
      "  ",
    ];
    for (let round = 0; round < 150; round++) {
      const parts: string[] = [];
      const n = 20 + Math.floor(rand() * 200);
      for (let i = 0; i < n; i++) parts.push(vocabulary[Math.floor(rand() * vocabulary.length)]!);
      const text = parts.join(" ");
      const options = optionSets[round % optionSets.length]!;
      const whole = chunkText(text, options);
      expect(randomSplits(text, options, rand)).toEqual(whole);
      const max = options.maxChars ?? SMART_CHUNKER_DEFAULTS.maxChars;
      const firstMax = options.firstChunkMaxChars ?? SMART_CHUNKER_DEFAULTS.firstChunkMaxChars;
      expect(whole.join("").replace(/\s+/g, "")).toBe(text.replace(/\s+/g, ""));
      // Tokens are only ever split when one is longer than maxChars (16 is the longest here).
      if (Math.min(max, firstMax) >= 16) expect(normalize(whole.join(" "))).toBe(normalize(text));
      whole.forEach((c, i) => expect(c.length).toBeLessThanOrEqual(Math.max(i === 0 ? firstMax : max, 0)));
    }
  });
});
