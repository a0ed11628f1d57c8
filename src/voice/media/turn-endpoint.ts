/**
 * The end of a locally detected user turn, by the end-of-turn rule
 * (speech/end-of-turn.ts): the gate reports the end of speech after the
 * shortest silence the rule can ask for, and this counts the silence that
 * follows (audio time) until the rule, applied to the turn's running
 * transcript, says the turn is over. Speech before then continues the turn.
 */
import { endOfTurnSilence, prepareSilence, type ResolvedEndOfTurn } from "../speech/end-of-turn.js";

/** Quiet that is a pause in the caller's speech: its words may be asked for then, ms. */
export const PAUSE_MS = 200;

export class TurnEndpoint {
  readonly #rule: ResolvedEndOfTurn;
  #turnId: string | undefined;
  #transcript = "";
  /** Non-speech since the end of speech, ms; undefined while the caller speaks. */
  #silenceMs: number | undefined;
  /**
   * Unvoiced audio since the last voiced frame, ms, counted inside the gate's hangover too: the fixed
   * endpoint's gate reports the end of speech only after its whole silence, but the answer may be
   * prepared before that (prepareDue).
   */
  #quietMs = 0;
  /** The current quiet run was reported as a pause (pauseChange). */
  #pauseReported = false;
  /** The words an answer was last prepared for in this turn. */
  #preparedFor: string | undefined;
  /** The running words and the quiet after which their answer may be prepared: worked out per delta, not per frame. */
  #prepare: { text: string; atMs: number | undefined } = { text: "", atMs: undefined };

  constructor(rule: ResolvedEndOfTurn) {
    this.#rule = rule;
  }

  /** The silence after which the gate reports the end of speech: the shortest endpoint, ms. */
  get gateSilenceMs(): number {
    return this.#rule.mode === "fixed" ? this.#rule.silenceMs : this.#rule.minMs;
  }

  /** Silence since the end of speech, ms (0 while the caller speaks). */
  get silenceMs(): number {
    return this.#silenceMs ?? 0;
  }

  /** A new turn: its transcript starts empty. */
  begin(turnId: string): void {
    this.#turnId = turnId;
    this.#transcript = "";
    this.#silenceMs = undefined;
    this.#quietMs = 0;
    this.#pauseReported = false;
    this.#preparedFor = undefined;
    this.#prepare = { text: "", atMs: undefined };
  }

  /** A transcript.delta of the recognizer (user role). */
  transcriptDelta(turnId: string | undefined, text: string, replace: boolean): void {
    if (turnId === undefined || turnId !== this.#turnId) return;
    this.#transcript = replace ? text : this.#transcript + text;
    const words = this.#transcript.trim();
    this.#prepare = { text: words, atMs: prepareSilence(words, this.#rule) };
  }

  /** The gate heard the end of speech (after gateSilenceMs of non-speech). True: the turn ends now. */
  speechEnded(): boolean {
    this.#silenceMs = this.gateSilenceMs;
    return this.due();
  }

  /** Speech again before the endpoint: the same turn goes on. */
  speechResumed(): void {
    this.#silenceMs = undefined;
    this.#quietMs = 0;
  }

  /**
   * Voice after the end of speech that is not (yet) speech to the gate: the caller may be going on (the
   * gate confirms an onset only after minSpeechMs), so the silence starts again. As the gate itself does
   * within its hangover: with the fixed endpoint a voiced frame inside the silence restarts it, and the
   * adaptive one, whose gate ends speech sooner, must not count the caller's next words as silence.
   */
  voiceHeard(): void {
    if (this.#silenceMs !== undefined) this.#silenceMs = 0;
  }

  /** `ms` more of non-speech after the end of speech. True: the turn ends now. */
  silence(ms: number): boolean {
    if (this.#silenceMs === undefined) return false;
    this.#silenceMs += ms;
    return this.due();
  }

  /**
   * One frame of the gate's after a turn's speech began (not its onset): the end of speech starts the
   * count, speech holds it, voice the gate has not confirmed restarts it, anything else adds to it. True:
   * the turn ends now.
   */
  frame(event: "speech-end" | undefined, gate: { speaking: boolean; voiced: boolean }, ms: number): boolean {
    this.#quietMs = gate.voiced ? 0 : this.#quietMs + ms;
    if (event === "speech-end") return this.speechEnded();
    if (gate.speaking) return false;
    if (gate.voiced) {
      this.voiceHeard();
      return false;
    }
    return this.silence(ms);
  }

  /**
   * "paused" once per quiet run, when it reaches PAUSE_MS: the caller paused, and the recognizer may be
   * asked for its running words now (the endpoint and prepareDue read them); "resumed" at the first voiced
   * frame after that: the words at the pause are not the last. Undefined otherwise.
   */
  pauseChange(): "paused" | "resumed" | undefined {
    if (this.#pauseReported && this.#quietMs === 0) {
      this.#pauseReported = false;
      return "resumed";
    }
    if (this.#pauseReported || this.#quietMs < PAUSE_MS) return undefined;
    this.#pauseReported = true;
    return "paused";
  }

  /**
   * The running words, when the caller has been quiet for as long as the adaptive rule would wait after
   * them and no answer was prepared for them yet in this turn: the pipeline may consult the agent now
   * (pipelines/prepared-answer.ts). Undefined otherwise, or with preparation off.
   */
  prepareDue(): string | undefined {
    const { text, atMs } = this.#prepare;
    if (atMs === undefined || text === this.#preparedFor || this.#quietMs < atMs) return undefined;
    this.#preparedFor = text;
    return text;
  }

  /** The silence heard is the rule's endpoint for what was said. */
  due(): boolean {
    return (
      this.#silenceMs !== undefined && this.#silenceMs >= endOfTurnSilence(this.#transcript, this.#rule).ms
    );
  }
}
