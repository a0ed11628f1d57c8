import type { TalkOutput } from "../session-types.js";

/** Where the speech that may interrupt came from: the realtime provider's detector or a local VAD. */
export type BargeInSource = "provider" | "local_vad";

export interface BargeInPolicyOptions {
  /** talk.input.interruptOnSpeech: speech while the assistant talks cancels the answer. Default true. */
  interruptOnSpeech: boolean;
  /**
   * The adapter's hook: false keeps `output` playing (the speech is only
   * noted), e.g. the first seconds of a phone greeting. Default: every output
   * is interruptible.
   */
  interruptible?: ((output: TalkOutput) => boolean) | undefined;
}

/**
 * The one rule that decides whether caller speech interrupts the answer that
 * is playing. Every trigger asks it: the realtime relay on the provider's
 * speech_started, a media leg on its local VAD's speech onset, a meeting's
 * echo gate on an utterance long enough to be real. What counts as speech
 * is the trigger's business (on a phone leg with echo cancellation: speech
 * that survived the canceller and its residual test, media/echo-guard.ts,
 * for the gate's `minSpeechMs`); whether it interrupts is decided here only.
 */
export class BargeInPolicy {
  readonly #options: BargeInPolicyOptions;

  constructor(options: BargeInPolicyOptions) {
    this.#options = options;
  }

  /** Whether speech now interrupts `output`. */
  interrupts(output: TalkOutput): boolean {
    if (!this.#options.interruptOnSpeech) return false;
    return this.#options.interruptible?.(output) !== false;
  }
}
