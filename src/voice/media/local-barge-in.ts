/**
 * Barge-in on a leg whose turns are the realtime provider's, decided here
 * (talk.input.echoCancellation.realtime): the leg's speech gate on the
 * caller's cleaned audio (echo removed) says when the caller talks over the
 * answer, and the one BargeInPolicy (through the leg's bargeIn) says whether
 * that cuts it. The provider's own speech_started no longer does (the
 * leg answers the pipeline's trigger with "no" and the speech is only noted).
 *
 * Nor does the provider hear what the canceller leaves of the assistant's own
 * voice: while the line plays the answer (and for the echo's tail after), the
 * provider gets silence in place of the caller's audio, until the gate heard
 * speech that cut the answer (or the answer ended meanwhile); then the speech
 * goes on from its pre-roll, to its end. A
 * canceller needs seconds to converge, and the first syllables' residue is
 * loud enough for a server VAD (measured: -28 dBFS over the first 500 ms of a
 * 6 dB speakerphone echo, then below -55): heard, it would start a turn and
 * an answer to nobody. Outside the answer the caller's audio passes as it is,
 * and the provider's VAD ends the turns. The pre-roll re-sent after the
 * silence that stood for it puts the provider's input clock that much (300 ms
 * at most) ahead of the line's: its audio positions are its own, nothing
 * here maps them onto the line.
 */
import type { BargeInSource } from "../pipelines/barge-in-policy.js";
import type { SessionController } from "../pipelines/session-controller.js";
import type { SpeechDetectorFactory } from "./input-processing.js";
import { SpeechGate } from "./speech-gate.js";

export interface LocalBargeInContext {
  controller: SessionController;
  gate: SpeechGate;
  /** The leg's barge-in: cancels the active output when the policy says so, or clears a tail. True: it cut. */
  bargeIn(source: BargeInSource): boolean;
  /** Whether the line plays assistant audio now (an output, or a tail the sink still holds). */
  playing(): boolean;
  /** How long the echo outlasts what was played (the canceller's tail), ms. */
  echoTailMs: number;
}

export class LocalBargeIn {
  readonly #ctx: LocalBargeInContext;
  /** Audio since the line last played assistant audio, ms (starts past the tail: nothing played yet). */
  #sincePlayedMs: number;
  /** The gate's speech is the caller's (it cut the answer, or none played): it reaches the provider to its end. */
  #heard = false;
  /**
   * What the provider gets in place of a guarded frame, reused frame after frame: the controller copies or
   * converts the PCM it is given (realtime-input.ts) and never writes into it.
   */
  #silence = new Int16Array(0);

  constructor(ctx: LocalBargeInContext) {
    this.#ctx = ctx;
    this.#sincePlayedMs = ctx.echoTailMs;
  }

  /** Caller audio (echo removed): a speech onset barges in first; the provider hears it unless it is echo. */
  audio(pcm: Int16Array): void {
    const { gate, controller } = this.#ctx;
    const event = gate.process(pcm);
    const guarded = this.#guarded();
    if (event === "speech-start") {
      // The line is cleared before the frame that confirmed the onset goes on (the caller hears the cut sooner).
      const cut = this.#ctx.bargeIn("local_vad");
      // The caller's speech, unless the policy keeps the answer playing over it (a protected greeting): the
      // provider hears it to its end, also when an answer starts meanwhile.
      if (!guarded || cut || !this.#ctx.playing()) {
        this.#heard = true;
        if (guarded) {
          // From its pre-roll (which includes this frame): the provider got silence in its place.
          for (const frame of gate.takePreRoll()) controller.appendPcm(frame);
          this.#advance(pcm.length);
          return;
        }
      }
    } else if (event === "speech-end") {
      this.#heard = false;
    }
    this.#advance(pcm.length);
    controller.appendPcm(guarded && !this.#heard ? this.#silenceOf(pcm.length) : pcm);
  }

  #silenceOf(samples: number): Int16Array {
    if (this.#silence.length !== samples) this.#silence = new Int16Array(samples);
    return this.#silence;
  }

  /** Whether what the caller's channel carries now may be the answer's echo. */
  #guarded(): boolean {
    return this.#ctx.playing() || this.#sincePlayedMs < this.#ctx.echoTailMs;
  }

  #advance(samples: number): void {
    if (this.#ctx.playing()) this.#sincePlayedMs = 0;
    else this.#sincePlayedMs += (samples / this.#ctx.gate.sampleRate) * 1000;
  }
}

/** The gate of a leg that decides only barge-in: the telephony VAD's threshold and onset, at the leg's rate. */
export function bargeInGate(
  options: { threshold: number; minSpeechMs: number; silenceMs: number },
  sampleRate: number,
  detector: SpeechDetectorFactory | undefined,
): SpeechGate {
  return new SpeechGate({ ...options, sampleRate, ...(detector ? { detector } : {}) });
}
