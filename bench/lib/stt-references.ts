/**
 * The Debian pocketsphinx-testdata recordings that come with a reference
 * transcript (5 LibriVox sentences, "go forward ten meters", "go somewhere and
 * do something", a TIDIGITS number string: 85 words, 37.6 s), and the word
 * error count the recognizer benches score them with.
 */
import { readFileSync } from "node:fs";
import { phoneEdits } from "../../src/voice/speech/sounds-like.js";

const DATA = "/usr/share/pocketsphinx/test/data";
const AUSTEN = `${DATA}/librivox/sense_and_sensibility_01_austen_64kb-`;

/** [file, reference transcript] */
export const STT_REFERENCES: readonly (readonly [string, string])[] = [
  [`${DATA}/goforward.raw`, "go forward ten meters"],
  [`${DATA}/something.raw`, "go somewhere and do something"],
  [`${DATA}/tidigits/dhd.2934z.raw`, "two nine three four zero"],
  [
    `${AUSTEN}0870.wav`,
    "and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them",
  ],
  [`${AUSTEN}0880.wav`, "he was not an ill disposed young man"],
  [`${AUSTEN}0890.wav`, "unless to be rather cold hearted and rather selfish is to be ill disposed"],
  [
    `${AUSTEN}0920.wav`,
    "had he married a more a amiable woman he might have been made still more respectable than he was",
  ],
  [`${AUSTEN}0930.wav`, "he might even have been made amiable himself"],
];

/** A reference recording's 16 kHz mono PCM16 (.raw, or .wav with the plain 44-byte header). */
export function referencePcm(path: string): Int16Array {
  let bytes = readFileSync(path);
  if (path.endsWith(".wav")) bytes = bytes.subarray(44);
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/** Word errors of `hyp` against `ref`: substitutions, insertions and deletions (the Levenshtein distance the
 * barge-in policy uses over phones, here over words). */
export const wordErrors: (ref: readonly string[], hyp: readonly string[]) => number = phoneEdits;

/**
 * Every recording of the turn-taking corpus with a transcript, by file name without its extension: the
 * references above and the cards recordings, whose transcripts Debian ships beside them
 * (cards/cards.transcription, Sphinx's `<s> words </s> (id)` lines).
 */
export function recordingTranscripts(): Map<string, string> {
  const byName = new Map(STT_REFERENCES.map(([path, text]) => [baseName(path), text]));
  try {
    for (const line of readFileSync(`${DATA}/cards/cards.transcription`, "utf8").split("\n")) {
      const m = /^<s>\s*(.*?)\s*<\/s>\s*\((\w+)\)/.exec(line.trim());
      if (m) byName.set(m[2]!, m[1]!);
    }
  } catch {
    // Without the file the cards recordings are not scored.
  }
  return byName;
}

function baseName(path: string): string {
  return path
    .split("/")
    .pop()!
    .replace(/\.(raw|wav)$/, "");
}

/** A reference transcript's words and a recognizer's, alike: lower case, hyphens split, digits as words. */
export function transcriptWords(text: string): string[] {
  const digits = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"];
  return (
    text
      .toLowerCase()
      .replace(/-/g, " ")
      .match(/[a-z0-9']+/g) ?? []
  ).map((w) => (/^(10|[0-9])$/.test(w) ? digits[Number(w)]! : w));
}
