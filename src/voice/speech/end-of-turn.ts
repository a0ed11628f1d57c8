/**
 * The end-of-turn rule: how much silence after the caller's speech ends
 * their turn, given what the streaming recognizer has heard so far.
 *
 * One fixed silence (talk.input.silenceTimeoutMs, 800 ms) is a compromise
 * between cutting a caller off mid-thought and answering late. The words
 * say which way to lean: a sentence that ended ("... to Boston.") can be
 * answered sooner; a filler ("um") or a trailing conjunction ("and",
 * "because") means more is coming. The recognizer's punctuation (when it
 * gives any) marks a finished sentence; words without it (a local
 * recognizer gives none) ending on a content word count as probably
 * complete: halfway between `minMs` and the fixed silence.
 *
 * Pure: text in, milliseconds out. Config is validated by resolveEndOfTurn.
 */
import { TalkError } from "../../core/index.js";

/** talk.input.endOfTurn. */
export interface EndOfTurnOptions {
  /** "fixed": always talk.input.silenceTimeoutMs; "adaptive": by the transcript. Default "fixed". */
  mode?: "fixed" | "adaptive";
  /** Silence after a finished sentence, ms (multiple of 10, 100-5000). Default 300. */
  minMs?: number;
  /** Silence after a filler or a trailing conjunction, ms (multiple of 10, minMs-10000). Default 1500. */
  maxMs?: number;
  /**
   * Consult the agent on the running words once the adaptive rule would end the turn, before the
   * endpoint does; the answer is used when the final words are the same (pipelines/prepared-answer.ts).
   * Default true.
   */
  prepareAnswer?: boolean;
}

export interface ResolvedEndOfTurn {
  readonly mode: "fixed" | "adaptive";
  readonly minMs: number;
  readonly maxMs: number;
  /** talk.input.silenceTimeoutMs: the fixed endpoint, and the adaptive one when nothing was recognized. */
  readonly silenceMs: number;
  readonly prepareAnswer: boolean;
}

/** Words after which the caller is not done: fillers. */
const FILLERS = new Set(["um", "umm", "uh", "uhh", "er", "erm", "hmm", "ah", "eh"]);
/** Words a finished sentence does not end on: conjunctions, and prepositions and articles that need more. */
const TRAILING = new Set([
  "and",
  "but",
  "so",
  "because",
  "cause",
  "or",
  "then",
  "if",
  "that",
  "which",
  "with",
  "to",
  "of",
  "for",
  "the",
  "a",
  "an",
  "my",
  "like",
]);

/** Validates talk.input.endOfTurn (config_invalid naming the key); defaults filled in. */
export function resolveEndOfTurn(
  options: EndOfTurnOptions = {},
  silenceMs: number,
  key = "talk.input.endOfTurn",
): ResolvedEndOfTurn {
  const { mode = "fixed", minMs = 300, maxMs = 1500, prepareAnswer = true } = options;
  if (mode !== "fixed" && mode !== "adaptive")
    throw new TalkError("config_invalid", `${key}.mode must be "fixed" or "adaptive", got ${String(mode)}.`);
  const tens = (v: unknown): boolean => typeof v === "number" && Number.isInteger(v) && v % 10 === 0;
  if (!tens(minMs) || minMs < 100 || minMs > 5000)
    throw new TalkError(
      "config_invalid",
      `${key}.minMs must be a multiple of 10 from 100 to 5000, got ${minMs}.`,
    );
  if (!tens(maxMs) || maxMs < minMs || maxMs > 10_000)
    throw new TalkError(
      "config_invalid",
      `${key}.maxMs must be a multiple of 10 from minMs (${minMs}) to 10000, got ${maxMs}.`,
    );
  if (typeof prepareAnswer !== "boolean")
    throw new TalkError(
      "config_invalid",
      `${key}.prepareAnswer must be true or false, got ${String(prepareAnswer)}.`,
    );
  return Object.freeze({ mode, minMs, maxMs, silenceMs, prepareAnswer });
}

/** Why the endpoint is what it is (tests, the bench, debug logs). */
export type EndpointReason = "fixed" | "no_words" | "sentence_end" | "incomplete" | "words";

/** The silence that ends the turn after `transcript` (the recognizer's running text), ms, and why. */
export function endOfTurnSilence(
  transcript: string,
  o: ResolvedEndOfTurn,
): { ms: number; reason: EndpointReason } {
  if (o.mode === "fixed") return { ms: o.silenceMs, reason: "fixed" };
  const clamp = (ms: number): number => Math.min(o.maxMs, Math.max(o.minMs, Math.round(ms / 10) * 10));
  const text = transcript.trim();
  const words = text.toLowerCase().match(/[a-z0-9']+/g) ?? [];
  const last = words.at(-1);
  if (last === undefined) return { ms: clamp(o.silenceMs), reason: "no_words" };
  if (FILLERS.has(last) || TRAILING.has(last)) return { ms: o.maxMs, reason: "incomplete" };
  if (/[.?!]["')\]]*$/.test(text)) return { ms: o.minMs, reason: "sentence_end" };
  return { ms: clamp((o.minMs + o.silenceMs) / 2), reason: "words" };
}

/**
 * The silence after `transcript` at which the turn's answer may be prepared (the adaptive rule's endpoint
 * for these words, whichever rule ends the turn), ms; undefined when there is nothing to prepare: no
 * words yet, or preparation off.
 */
export function prepareSilence(transcript: string, o: ResolvedEndOfTurn): number | undefined {
  if (!o.prepareAnswer || !/[a-z0-9]/i.test(transcript)) return undefined;
  return endOfTurnSilence(transcript, { ...o, mode: "adaptive" }).ms;
}
