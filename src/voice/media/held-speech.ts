/**
 * Caller speech over an answer that is held, not yet cut
 * (talk.input.bargeIn.confirmWithWords): its audio is kept (from the gate's
 * pre-roll on) so the turn it may become hears all of it, and a recognizer
 * runs on it so its words decide. Audio time decides when the wait is over.
 */
import type { WordProbe } from "../pipelines/controller-types.js";

const MAX_FRAMES = 1500;

export class HeldSpeech {
  /** Caller audio position of the onset, ms (the leg's input clock). */
  readonly onsetMs: number;
  readonly #frames: Int16Array[] = [];
  #probe: WordProbe | undefined;
  /** Silence the recognizer hears after the speech ended. */
  #silence: Int16Array | undefined;
  /** The recognizer's running text. */
  text = "";
  /** The answer was resumed (the window passed, or the speech ended); late words may still interrupt. */
  resumed = false;
  /**
   * Input position where the speech ended, ms: the recognizer goes on hearing the line (its own
   * endpointing reports the words of an utterance only after it) for a grace, and words still cut.
   */
  endedAtMs: number | undefined;

  constructor(onsetMs: number, preRoll: Int16Array[]) {
    this.onsetMs = onsetMs;
    for (const frame of preRoll) this.#frames.push(frame);
  }

  /** Attaches the recognizer and feeds it what was kept so far. */
  listen(probe: WordProbe | undefined): void {
    this.#probe = probe;
    for (const frame of this.#frames) probe?.write(frame);
  }

  /**
   * Keeps `pcm` and lets the recognizer hear it; after the speech ended (`endedAtMs` set) the recognizer
   * hears silence of the same length instead. It only needs time to conclude then, and what the line
   * carries after the gate's end is not speech: echo residue of the resumed answer, which a recognizer
   * that re-reads the whole utterance heard as words ("Okay." -> "Okay, but?") and cut the answer the
   * backchannel had resumed (docs/notes/performance-history.md, "Local recognizers").
   */
  add(pcm: Int16Array): void {
    this.#frames.push(pcm);
    // A noise that never ends must not grow this without bound: the turn it may become keeps the last 30 s.
    if (this.#frames.length > MAX_FRAMES) this.#frames.shift();
    if (this.endedAtMs === undefined) {
      this.#probe?.write(pcm);
      return;
    }
    // One zeroed frame serves the whole grace: the line's frames all have the leg's frame length.
    if (this.#silence?.length !== pcm.length) this.#silence = new Int16Array(pcm.length);
    this.#probe?.write(this.#silence);
  }

  /** Ends the recognizer and hands over the audio kept (the turn it becomes). */
  release(): Int16Array[] {
    void this.#probe?.finish();
    this.#probe = undefined;
    return this.#frames.splice(0);
  }
}
