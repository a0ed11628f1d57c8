import { TalkError } from "../../core/index.js";
import type { TalkOutput } from "../../core/index.js";
import { pronounceAll, soundsLike, type Pronounce } from "../speech/sounds-like.js";

/** Where the speech that may interrupt came from: the realtime provider's detector or a local VAD. */
export type BargeInSource = "provider" | "local_vad";

/** talk.input.bargeIn. */
export interface BargeInOptions {
  /**
   * Words that only acknowledge ("mm-hmm", "okay"): an utterance whose recognized words are all in this
   * list does not interrupt (needs `confirmWithWords`). Default DEFAULT_BACKCHANNELS.
   */
  backchannels?: readonly string[];
  /**
   * Decide the interruption on the streaming recognizer's words instead of the VAD onset: at the onset the
   * answer is held (the line cleared, what is left kept), the first word that is not a backchannel
   * interrupts it, and a backchannel or no words by the end of the speech (or within `maxHoldMs`) resumes
   * it where it was cut.
   * Only where the output can be held (stt-tts); elsewhere the onset interrupts. Default false.
   */
  confirmWithWords?: boolean;
  /**
   * After held speech ended with no interrupting word (the answer resumes then), how long its recognizer may
   * still give one, audio time, ms (100-5000): a word in this grace still cuts the answer. Default 1200.
   */
  resumeAfterMs?: number;
  /**
   * The longest an answer stays held while the caller still speaks with no interrupting word, from the
   * onset, ms (at least `resumeAfterMs`, at most 30000): then it resumes (a noise that goes on). A
   * recognizer that gives words only at a pause (the local one) confirms a long interruption within it,
   * where a shorter hold resumed the answer over the caller. Default 4000.
   */
  maxHoldMs?: number;
  /**
   * Also count as a backchannel an utterance of at most two words that sounds like one: its phones within
   * one edit in three of a backchannel's, by the recognizer's pronunciation dictionary (when it has one).
   * A local recognizer on a phone line hears "yeah" as "yet", "alright" as "all right". Default true.
   */
  matchBySound?: boolean;
  /** The pronunciation dictionary matchBySound uses (the composition root reads it). Default: none (words only). */
  pronounce?: Pronounce | undefined;
}

export type ResolvedBargeIn = Readonly<{
  backchannels: readonly string[];
  confirmWithWords: boolean;
  resumeAfterMs: number;
  maxHoldMs: number;
  matchBySound: boolean;
  pronounce: Pronounce | undefined;
}>;

export const DEFAULT_BACKCHANNELS: readonly string[] = Object.freeze([
  "mm-hmm",
  "mhm",
  "mm",
  "uh-huh",
  "yeah",
  "yep",
  "okay",
  "ok",
  "right",
  "yes",
  "sure",
  "alright",
]);

/** Validates talk.input.bargeIn (config_invalid naming the key); defaults filled in. */
export function resolveBargeIn(options: BargeInOptions = {}, key = "talk.input.bargeIn"): ResolvedBargeIn {
  const {
    backchannels = DEFAULT_BACKCHANNELS,
    confirmWithWords = false,
    resumeAfterMs = 1200,
    maxHoldMs = Math.max(4000, typeof resumeAfterMs === "number" ? resumeAfterMs : 0),
    matchBySound = true,
    pronounce,
  } = options;
  if (typeof confirmWithWords !== "boolean")
    throw new TalkError("config_invalid", `${key}.confirmWithWords must be true or false.`);
  if (typeof matchBySound !== "boolean")
    throw new TalkError("config_invalid", `${key}.matchBySound must be true or false.`);
  if (
    typeof resumeAfterMs !== "number" ||
    !Number.isInteger(resumeAfterMs) ||
    resumeAfterMs < 100 ||
    resumeAfterMs > 5000
  )
    throw new TalkError(
      "config_invalid",
      `${key}.resumeAfterMs must be an integer from 100 to 5000, got ${resumeAfterMs}.`,
    );
  if (
    typeof maxHoldMs !== "number" ||
    !Number.isInteger(maxHoldMs) ||
    maxHoldMs < resumeAfterMs ||
    maxHoldMs > 30_000
  )
    throw new TalkError(
      "config_invalid",
      `${key}.maxHoldMs must be an integer from ${key}.resumeAfterMs (${resumeAfterMs}) to 30000, got ${maxHoldMs}.`,
    );
  if (
    !Array.isArray(backchannels) ||
    backchannels.length > 100 ||
    backchannels.some((b) => typeof b !== "string" || words(b).length === 0 || b.length > 40)
  )
    throw new TalkError(
      "config_invalid",
      `${key}.backchannels must be a list of at most 100 short phrases with at least one word each.`,
    );
  return Object.freeze({
    backchannels: Object.freeze([...backchannels]),
    confirmWithWords,
    resumeAfterMs,
    maxHoldMs,
    matchBySound,
    pronounce: typeof pronounce === "function" ? pronounce : undefined,
  });
}

export interface BargeInPolicyOptions extends BargeInOptions {
  /** talk.input.interruptOnSpeech: speech while the assistant talks cancels the answer. Default true. */
  interruptOnSpeech: boolean;
  /**
   * The adapter's hook: false keeps `output` playing (the speech is only
   * noted), e.g. the first seconds of a phone greeting. Default: every output
   * is interruptible.
   */
  interruptible?: ((output: TalkOutput) => boolean) | undefined;
}

/** What the words heard so far over a held answer say. */
export type WordsVerdict =
  /** A word that is not a backchannel: the caller is taking the turn. */
  | "interrupt"
  /** Only backchannels so far: the caller is listening. */
  | "backchannel"
  /** No words (yet): noise, a cough, the recognizer still behind. */
  | "none";

/**
 * The one rule that decides whether caller speech interrupts the answer that
 * is playing. Every trigger asks it: the realtime relay on the provider's
 * speech_started, a media leg on its local VAD's speech onset, a meeting's
 * echo gate on an utterance long enough to be real. What counts as speech
 * is the trigger's business (on a phone leg with echo cancellation: speech
 * that survived the canceller and its residual test, media/echo-guard.ts,
 * for the gate's `minSpeechMs`); whether it interrupts is decided here only:
 * at the onset (`interrupts`), or, with `confirmWithWords`, on the words
 * (`judge`): a backchannel never interrupts, and a held answer that got no
 * interrupting word resumes when the speech ends (or after `maxHoldMs` of it).
 */
export class BargeInPolicy {
  readonly #options: BargeInPolicyOptions;
  readonly #backchannels: Set<string>;
  /** The settings (validated). */
  readonly bargeIn: ResolvedBargeIn;

  constructor(options: BargeInPolicyOptions) {
    this.#options = options;
    this.bargeIn = resolveBargeIn(options);
    // Multi-word entries ("uh huh") are split: every word of theirs is a backchannel word.
    this.#backchannels = new Set(this.bargeIn.backchannels.flatMap((b) => words(b)));
  }

  /** Whether speech now interrupts `output` (at the onset: the output is cut or, with confirmWithWords, held). */
  interrupts(output: TalkOutput): boolean {
    if (!this.#options.interruptOnSpeech) return false;
    return this.#options.interruptible?.(output) !== false;
  }

  /** Whether the decision waits for words (the output is held at the onset, not cancelled). */
  get confirmWithWords(): boolean {
    return this.bargeIn.confirmWithWords;
  }

  /**
   * What the recognizer's running text over a held answer says (fillers, "uh" "ah", are not words here).
   * With a pronunciation dictionary, a short utterance that sounds like a backchannel counts as one
   * (matchBySound).
   */
  judge(text: string): WordsVerdict {
    const { pronounce } = this.bargeIn;
    const heard = words(text).filter((w) => !FILLERS.has(w));
    if (heard.length === 0) return "none";
    if (heard.every((w) => this.#backchannels.has(w))) return "backchannel";
    if (
      this.bargeIn.matchBySound &&
      pronounce &&
      heard.length <= MAX_SOUNDALIKE_WORDS &&
      soundsLike(heard, this.#sounds(pronounce), pronounce, EDITS_PER_PHONE)
    )
      return "backchannel";
    return "interrupt";
  }

  #soundsOf: { pronounce: Pronounce; sounds: (readonly string[])[] } | undefined;

  /** The backchannels' pronunciations by `pronounce` (one dictionary per session: computed once). */
  #sounds(pronounce: Pronounce): (readonly string[])[] {
    if (this.#soundsOf?.pronounce !== pronounce)
      this.#soundsOf = {
        pronounce,
        sounds: this.bargeIn.backchannels.flatMap((b) => pronounceAll(words(b), pronounce) ?? []),
      };
    return this.#soundsOf.sounds;
  }
}

/**
 * A sound-alike backchannel: at most this many words heard, within one phone edit in three of a
 * backchannel's phones. Measured (bench/backchannel-words.bench.ts, docs/performance.md): of 120 espeak-ng
 * backchannels over a u-law line the local recognizer's words cut 75 by the list alone, 54 with this;
 * of 144 short interruptions ("wait", "stop", "no", "hold on", ...) none more resumed. One edit in two
 * cut 52 but let "no" heard as "you" and "what" heard as "all that" resume the answer; two in three, "wait".
 */
const MAX_SOUNDALIKE_WORDS = 2;
const EDITS_PER_PHONE = 1 / 3;

/** Sounds a recognizer writes for a hesitation, a cough or a breath: no claim on the turn. */
const FILLERS = new Set(["ah", "ahh", "uh", "uhh", "um", "umm", "er", "erm", "eh", "oh", "hm", "hmm"]);

/** Lower-case words; hyphens and punctuation split ("Mm-hmm." -> mm, hmm), apostrophes stay. */
function words(text: string): string[] {
  return text.toLowerCase().match(/[a-z0-9']+/g) ?? [];
}
