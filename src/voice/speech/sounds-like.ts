/**
 * Whether what a recognizer heard sounds like one of a few short phrases,
 * by their pronunciations: the words heard and the phrase, each spelled as
 * one sequence of phones, within a small edit distance of each other.
 *
 * Why: a short acknowledgement ("yeah", "okay", "mm-hmm") over a phone line
 * is often recognized as a neighbour of itself ("yet", "yup", "i'm"), which a
 * list of words misses and the sounds catch. The pronunciations come from the
 * recognizer's own dictionary (any phone set: the match only compares
 * symbols), so the phones are the ones it chose between.
 *
 * Pure: phones in, a verdict out.
 */

/** One word's pronunciations as phone sequences (e.g. ["Y", "AE"]); undefined for a word it does not know. */
export type Pronounce = (word: string) => readonly (readonly string[])[] | undefined;

/** Levenshtein distance between two phone sequences. */
export function phoneEdits(a: readonly string[], b: readonly string[]): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}

/** Every way to say `words` in a row (the product of each word's pronunciations, at most `limit`); undefined if a word is unknown. */
export function pronounceAll(
  words: readonly string[],
  pronounce: Pronounce,
  limit = 16,
): (readonly string[])[] | undefined {
  let out: (readonly string[])[] = [[]];
  for (const word of words) {
    const options = pronounce(word) ?? hyphenated(word, pronounce);
    if (!options || options.length === 0) return undefined;
    out = out.flatMap((prefix) => options.map((p) => [...prefix, ...p])).slice(0, limit);
  }
  return out;
}

/** "mm-hmm": a word the dictionary lacks, said as its hyphen-separated parts. */
function hyphenated(word: string, pronounce: Pronounce): (readonly string[])[] | undefined {
  const parts = word.split("-").filter(Boolean);
  if (parts.length < 2) return undefined;
  return pronounceAll(parts, pronounce);
}

/**
 * Whether some pronunciation of `heard` is within `maxEditsPerPhone` x (the target's length) phone edits of
 * some pronunciation of a target phrase. A phrase's pronunciations are precomputed by the caller.
 */
export function soundsLike(
  heard: readonly string[],
  targets: readonly (readonly string[])[],
  pronounce: Pronounce,
  maxEditsPerPhone: number,
): boolean {
  if (heard.length === 0 || targets.length === 0) return false;
  const said = pronounceAll(heard, pronounce);
  if (!said) return false;
  return said.some((s) =>
    targets.some((t) => t.length > 0 && phoneEdits(s, t) <= Math.floor(maxEditsPerPhone * t.length)),
  );
}
