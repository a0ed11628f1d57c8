/**
 * Tolerant wake-phrase matching over recognized text. Local recognizers
 * (pocketsphinx) misspell and split words, so a trigger matches a run of
 * words where each word is equal, or within a small edit distance for longer
 * words ("computor" for "computer"), ignoring case and punctuation.
 */

/** What a caption said about the wake phrase. */
export interface WakeMatch {
  /** The trigger that matched, as configured. */
  trigger: string;
  /** Words after the trigger (the question when it was said in the same breath); "" when none. */
  rest: string;
}

/** Lowercase words without punctuation. */
export function wakeWords(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{N}' ]+/gu, " ")
    .split(/\s+/)
    .filter((w) => w !== "");
}

/** Edit distance allowed for a word of this length: exact up to 3 letters, 1 up to 7, 2 beyond. */
export function tolerance(word: string): number {
  return word.length <= 3 ? 0 : word.length <= 7 ? 1 : 2;
}

function editDistance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      best = Math.min(best, value);
    }
    if (best > max) return max + 1;
    previous = current;
  }
  return previous[b.length]!;
}

function wordMatches(heard: string, wanted: string): boolean {
  return heard === wanted || editDistance(heard, wanted, tolerance(wanted)) <= tolerance(wanted);
}

/**
 * The first trigger found in `text` (earliest position; the longer trigger on
 * a tie), or undefined. Triggers are phrases of one or more words.
 */
export function matchWakePhrase(text: string, triggers: readonly string[]): WakeMatch | undefined {
  const words = wakeWords(text);
  let found: { at: number; length: number; trigger: string } | undefined;
  for (const trigger of triggers) {
    const wanted = wakeWords(trigger);
    if (wanted.length === 0) continue;
    for (let at = 0; at + wanted.length <= words.length; at++) {
      if (found && (at > found.at || (at === found.at && wanted.length <= found.length))) break;
      if (wanted.every((w, k) => wordMatches(words[at + k]!, w))) {
        found = { at, length: wanted.length, trigger };
        break;
      }
    }
  }
  if (!found) return undefined;
  return { trigger: found.trigger, rest: words.slice(found.at + found.length).join(" ") };
}

/**
 * Whether a typed chat message is addressed to the assistant: it starts with
 * one of `names` (its display name, a wake trigger), `@` and punctuation
 * ignored ("@Assistant, what is..."). Typed text is not misheard, so unlike
 * speech the name must come first: "my computer crashed" is not addressed to
 * a bot triggered by "computer". Matching is otherwise the wake phrase's.
 */
export function matchAddress(text: string, names: readonly string[]): WakeMatch | undefined {
  const words = wakeWords(text);
  let found: { length: number; trigger: string } | undefined;
  for (const name of names) {
    const wanted = wakeWords(name);
    if (wanted.length === 0 || wanted.length > words.length) continue;
    if (found && wanted.length <= found.length) continue;
    if (wanted.every((w, k) => wordMatches(words[k]!, w))) found = { length: wanted.length, trigger: name };
  }
  if (!found) return undefined;
  return { trigger: found.trigger, rest: words.slice(found.length).join(" ") };
}
