import { TalkError } from "../../core/index.js";
import { toSpeakable } from "./speakable-text.js";

/**
 * A streaming chunker for agent answers (seed 002, "time to first word"): it
 * cuts the text at natural boundaries so each chunk can go to TTS as soon as
 * it is complete, instead of waiting for the whole answer.
 *
 * Boundaries, strongest first: paragraph, list item and line break (any
 * whitespace run holding a newline), sentence end, clause end (, ; : and a
 * free-standing dash), word (last resort). Cuts only ever fall on whitespace,
 * so a number ("3.14"), a URL or an email is never split; a sentence end is
 * not taken after an abbreviation ("e.g.", "Dr.", "U.S.") or an ordered-list
 * marker ("1.").
 *
 * Rules:
 * 1. As soon as the chunk would be at least `minChars` long and a strong
 *    boundary (sentence or stronger) is known, cut there. A strong boundary is
 *    never passed over to wait for a stronger one later: waiting costs
 *    latency and the cut is equally natural for speech.
 * 2. When `maxChars` is reached without a strong boundary, cut at the best
 *    boundary in [minChars, maxChars] (clause before word, the latest of
 *    equals so chunks stay long); failing that at the latest word boundary;
 *    failing that (one token longer than maxChars) hard at maxChars.
 * The first chunk uses `firstChunkMinChars` / `firstChunkMaxChars` so speech
 * starts early.
 *
 * Chunk safety: every boundary decision uses a bounded look-ahead and is made
 * only once that look-ahead is present, so the chunks do not depend on how
 * the text was split into deltas (one character at a time gives the same
 * chunks as one push). Chunks are trimmed; whitespace between chunks is
 * dropped.
 */
export interface SmartChunkerOptions {
  /** Smallest chunk cut at a strong boundary, after the first. Default 120. */
  minChars?: number;
  /** Largest chunk; the answer is cut at a weaker boundary rather than exceed it. Default 400. */
  maxChars?: number;
  /** Smallest first chunk: a short first sentence starts speech early. Default 20. */
  firstChunkMinChars?: number;
  /** Largest first chunk. Default 200. */
  firstChunkMaxChars?: number;
  /**
   * Pass each chunk through `toSpeakable` (markdown removed) and drop chunks
   * that become empty (a lone "---" or code fence). Default false: the raw
   * chunk is kept for captions and the caller converts before TTS.
   */
  speakable?: boolean;
}

export interface SmartChunker {
  /** Appends a text delta; returns the chunks this delta completed, in order. */
  push(textDelta: string): string[];
  /** Ends the text; returns the remaining chunks. The chunker can be reused afterwards. */
  flush(): string[];
}

export const SMART_CHUNKER_DEFAULTS: Readonly<Required<SmartChunkerOptions>> = Object.freeze({
  minChars: 120,
  maxChars: 400,
  firstChunkMinChars: 20,
  firstChunkMaxChars: 200,
  speakable: false,
});

export function createSmartChunker(options: SmartChunkerOptions = {}): SmartChunker {
  return new SmartChunkerImpl(options);
}

/** Splits a complete text the same way the streaming chunker would. */
export function chunkText(text: string, options: SmartChunkerOptions = {}): string[] {
  const chunker = createSmartChunker(options);
  return [...chunker.push(text), ...chunker.flush()];
}

/** How strong a boundary is; `None` marks a whitespace that must not be cut (after "1." or "-" opening a line). */
const enum Strength {
  None = 0,
  Word = 1,
  Clause = 2,
  Strong = 3,
}

interface Candidate {
  /** Chunk end (exclusive) in the buffer. */
  end: number;
  strength: Strength;
}

/**
 * Whitespace runs are inspected for a newline up to this many characters:
 * a bounded look-ahead keeps decisions independent of delta boundaries even
 * for a flood of spaces.
 */
const RUN_LOOKAHEAD = 16;

class SmartChunkerImpl implements SmartChunker {
  readonly #options: Readonly<Required<SmartChunkerOptions>>;
  #buf = "";
  #emitted = 0;
  // Incremental scanner state, reset after every cut.
  #candidates: Candidate[] = [];
  /** Start of the token being scanned. */
  #tokenStart = 0;
  /** Where the search for the token's end resumes. */
  #probe = 0;
  /** End of a token whose boundary is not decided yet. */
  #pendingEnd: number | undefined;
  /** Skipping a whitespace run after a decided boundary. */
  #skipping = false;
  /** The token starts a line (list markers are recognised only there). */
  #lineStart = true;

  constructor(options: SmartChunkerOptions) {
    const merged = { ...SMART_CHUNKER_DEFAULTS };
    for (const [key, value] of Object.entries(options)) {
      if (value !== undefined) (merged as Record<string, unknown>)[key] = value;
    }
    validateOptions(merged);
    this.#options = Object.freeze(merged);
  }

  push(textDelta: string): string[] {
    if (typeof textDelta !== "string") throw new TalkError("invalid_params", "push() takes a string.");
    if (textDelta.length === 0) return [];
    if (this.#buf.length === 0) {
      // Whitespace between chunks is dropped at once so it cannot shift positions later.
      textDelta = trimStart(textDelta);
      if (textDelta.length === 0) return [];
    }
    this.#buf += textDelta;
    const out: string[] = [];
    for (let cut = this.#nextCut(false); cut !== undefined; cut = this.#nextCut(false)) this.#emit(cut, out);
    return out;
  }

  flush(): string[] {
    const out: string[] = [];
    while (this.#buf.length > 0) {
      if (trimEnd(this.#buf).length <= this.#limits().max) {
        this.#emit(this.#buf.length, out);
        break;
      }
      const cut = this.#nextCut(true);
      // With the end of the text known every boundary is decided, so rule 2 always cuts.
      this.#emit(cut ?? this.#buf.length, out);
    }
    this.#emitted = 0;
    return out;
  }

  #limits(): { min: number; max: number } {
    const o = this.#options;
    return this.#emitted === 0
      ? { min: o.firstChunkMinChars, max: o.firstChunkMaxChars }
      : { min: o.minChars, max: o.maxChars };
  }

  #emit(cut: number, out: string[]): void {
    const raw = trimEnd(this.#buf.slice(0, cut));
    this.#buf = trimStart(this.#buf.slice(cut));
    this.#candidates = [];
    this.#tokenStart = 0;
    this.#probe = 0;
    this.#pendingEnd = undefined;
    this.#skipping = false;
    this.#lineStart = true;
    if (raw.length === 0) return;
    const chunk = this.#options.speakable ? toSpeakable(raw) : raw;
    if (chunk.length === 0) return;
    // Only a chunk that is passed on counts: a dropped "---" must not use up the short first chunk.
    this.#emitted++;
    out.push(chunk);
  }

  /** The next cut position, or undefined when more text is needed. */
  #nextCut(final: boolean): number | undefined {
    const { min, max } = this.#limits();
    const buf = this.#buf;
    for (;;) {
      if (this.#skipping) {
        while (this.#probe < buf.length && isSpace(buf.charCodeAt(this.#probe))) {
          if (buf.charCodeAt(this.#probe) === 10) this.#lineStart = true;
          this.#probe++;
        }
        if (this.#probe >= buf.length) break;
        this.#skipping = false;
        this.#tokenStart = this.#probe;
      }
      if (this.#pendingEnd === undefined) {
        while (this.#probe < buf.length && !isSpace(buf.charCodeAt(this.#probe))) this.#probe++;
        if (this.#probe >= buf.length) break;
        this.#pendingEnd = this.#probe;
      }
      const end = this.#pendingEnd;
      const strength = classify(buf, this.#tokenStart, end, this.#lineStart, final);
      if (strength === undefined) break;
      this.#pendingEnd = undefined;
      this.#skipping = true;
      this.#lineStart = false;
      this.#probe = end;
      if (end > max) break;
      if (strength === Strength.Strong && end >= min) return end;
      if (strength !== Strength.None) this.#candidates.push({ end, strength });
    }
    // Rule 2 needs every boundary up to max decided: the first undecided one lies beyond max.
    const frontier = final ? Infinity : this.#pendingEnd !== undefined ? this.#pendingEnd : buf.length;
    if (frontier <= max || buf.length <= max) return undefined;
    return this.#fallbackCut(min, max);
  }

  #fallbackCut(min: number, max: number): number {
    let best: Candidate | undefined;
    let latest: Candidate | undefined;
    for (const c of this.#candidates) {
      if (c.end > max) break;
      latest = c;
      if (c.end >= min && (!best || c.strength >= best.strength)) best = c;
    }
    if (best) return best.end;
    if (latest) return latest.end;
    // One token longer than max: nothing natural exists; avoid splitting a surrogate pair.
    const code = this.#buf.charCodeAt(max - 1);
    return code >= 0xd800 && code <= 0xdbff ? max - 1 : max;
  }
}

/**
 * The boundary strength after the token buf[start, end) (buf[end] is
 * whitespace), or undefined when the look-ahead is not there yet.
 */
function classify(
  buf: string,
  start: number,
  end: number,
  lineStart: boolean,
  final: boolean,
): Strength | undefined {
  const token = buf.slice(start, end);
  if (lineStart && LIST_MARKER.test(token)) return Strength.None;
  const byToken = tokenStrength(token, lineStart);
  if (byToken === Strength.Strong) return Strength.Strong;
  const stop = Math.min(buf.length, end + RUN_LOOKAHEAD);
  let i = end;
  for (; i < stop; i++) {
    const code = buf.charCodeAt(i);
    if (code === 10 || code === 13 || code === 0x2028 || code === 0x2029) return Strength.Strong;
    if (!isSpace(code)) return byToken;
  }
  // The run is longer than the look-ahead (decided as seen) or reaches the end of the text.
  if (i === end + RUN_LOOKAHEAD || final) return byToken;
  return undefined;
}

function tokenStrength(token: string, lineStart: boolean): Strength {
  let last = token.length - 1;
  while (last > 0 && CLOSERS.has(token[last]!)) last--;
  const ch = token[last]!;
  if (ch === "!" || ch === "?" || ch === "…" || ch === "。" || ch === "！" || ch === "？")
    return Strength.Strong;
  if (ch === ".") return isAbbreviation(token.slice(0, last + 1)) ? Strength.Word : Strength.Strong;
  if (ch === "," || ch === ";" || ch === ":" || ch === "，" || ch === "；") return Strength.Clause;
  if (!lineStart && DASH.test(token)) return Strength.Clause;
  return Strength.Word;
}

/**
 * Tokens ending in "." that do not end a sentence. Words that are also
 * common sentence-final words ("no.", "sun.", "etc.") are left out: missing a
 * boundary only makes a chunk longer, a false one cuts mid-sentence.
 */
function isAbbreviation(token: string): boolean {
  let start = 0;
  while (start < token.length - 1 && OPENERS.has(token[start]!)) start++;
  const word = token.slice(start).toLowerCase();
  if (ABBREVIATIONS.has(word)) return true;
  // Initials and dotted acronyms: "J.", "U.S.", "e.g.", "a.m.", "Ph.D."
  return /^(?:\p{L}\.)+$/u.test(word) || /^(?:\p{L}{1,2}\.){2,}$/u.test(word);
}

const ABBREVIATIONS = new Set(
  (
    "mr. mrs. ms. mx. dr. prof. sr. jr. st. mt. ft. rev. hon. gen. col. capt. lt. sgt. cpl. gov. sen. rep. pres. " +
    "vs. approx. appt. apt. ave. blvd. dept. est. fig. figs. inc. ltd. corp. vol. vols. pp. ch. sec. eds. al. " +
    "cf. viz. ca. incl. misc. tel. ext. feb. apr. jun. jul. aug. sep. sept. oct. nov. dec. tue. tues. thu. thur. thurs."
  ).split(" "),
);

/** Closing punctuation and markdown after a sentence end: `He said "yes."` or `**Done.**`. */
const CLOSERS = new Set(['"', "'", ")", "]", "}", "”", "’", "»", "*", "_", "`"]);
const OPENERS = new Set(['"', "'", "(", "[", "{", "“", "‘", "«", "*", "_", "`"]);
/** A line opening with "-", "*", "+", "•", "1." or "1)" (a list item), or "#" (a heading). */
const LIST_MARKER = /^(?:[-*+•]|\d{1,3}[.)]|#{1,6})$/;
const DASH = /^(?:-{1,2}|[–—])$/;

function isSpace(code: number): boolean {
  return (
    code === 32 ||
    (code >= 9 && code <= 13) ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

function trimStart(s: string): string {
  let i = 0;
  while (i < s.length && isSpace(s.charCodeAt(i))) i++;
  return i === 0 ? s : s.slice(i);
}

function trimEnd(s: string): string {
  let i = s.length;
  while (i > 0 && isSpace(s.charCodeAt(i - 1))) i--;
  return i === s.length ? s : s.slice(0, i);
}

function validateOptions(o: Required<SmartChunkerOptions>): void {
  const bad = (field: string, why: string): never => {
    throw new TalkError("config_invalid", `smart chunker: ${field} ${why}`);
  };
  for (const field of ["minChars", "maxChars", "firstChunkMinChars", "firstChunkMaxChars"] as const) {
    if (!Number.isInteger(o[field]) || o[field] < 1) bad(field, "must be a positive integer");
  }
  if (o.minChars > o.maxChars) bad("minChars", "must not exceed maxChars");
  if (o.firstChunkMinChars > o.firstChunkMaxChars)
    bad("firstChunkMinChars", "must not exceed firstChunkMaxChars");
  if (typeof o.speakable !== "boolean") bad("speakable", "must be a boolean");
}
