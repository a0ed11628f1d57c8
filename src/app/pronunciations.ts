/**
 * A pronunciation dictionary in the CMU format ("word PH ON ES", alternates as
 * "word(2) ..."), read once at start, for the barge-in policy's sound-alike
 * backchannels (talk.input.bargeIn.matchBySound, voice/speech/sounds-like.ts).
 * Debian's pocketsphinx-en-us ships one (134,000 words, 3.6 MB).
 */
import { existsSync, readFileSync } from "node:fs";
import { TalkError, type TalkLogger } from "../core/index.js";
import { type Pronounce } from "../voice/index.js";

/** Debian's CMU dictionary (package pocketsphinx-en-us), the default when it is installed. */
export const DEBIAN_CMUDICT = "/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict";

/** The pronunciations of `text` (a CMU-format dictionary) as a lookup. */
export function pronouncerOf(text: string): Pronounce {
  // One pass at start, word -> its pronunciations ("Y EH S|Y AE S"): 0.1-0.2 s and 15 MB of heap for
  // Debian's dictionary; then a lookup is a map access (searching the text per word took 7 ms a word).
  const entries = new Map<string, string>();
  for (const line of text.split("\n")) {
    const space = line.indexOf(" ");
    if (space <= 0 || line.startsWith(";;;")) continue;
    const word = line.slice(0, space).replace(ALTERNATE, "").toLowerCase();
    const phones = line.slice(space + 1).trim();
    if (phones === "") continue;
    const known = entries.get(word);
    entries.set(word, known === undefined ? phones : `${known}|${phones}`);
  }
  return (word) =>
    entries
      .get(word.toLowerCase())
      ?.split("|")
      .map((p) => p.split(/\s+/));
}

/** "word(2)": the second pronunciation of "word". */
const ALTERNATE = /\(\d+\)$/;

/**
 * talk.input.bargeIn.pronunciations: the dictionary at `path` (default: Debian's, when installed); undefined,
 * with a note in the log, when matching by sound is off or there is no dictionary.
 */
export function loadPronunciations(
  options: { matchBySound?: boolean; pronunciations?: string | undefined },
  logger: TalkLogger,
): Pronounce | undefined {
  if (options.matchBySound === false) return undefined;
  const path = options.pronunciations ?? (existsSync(DEBIAN_CMUDICT) ? DEBIAN_CMUDICT : undefined);
  if (path === undefined) {
    logger.info(
      "talk.input.bargeIn: no pronunciation dictionary (pocketsphinx-en-us not installed); backchannels match by word only",
    );
    return undefined;
  }
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new TalkError(
      "config_invalid",
      `talk.input.bargeIn.pronunciations: cannot read ${path} (${(err as Error).message}).`,
    );
  }
  return pronouncerOf(text);
}
