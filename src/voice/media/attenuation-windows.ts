/**
 * The echo canceller's measured attenuation, for the residual detector (double-talk.ts): over consecutive windows of
 * frames under echo, each window's output-to-input power ratio, the last few kept. Their lowest is the most the
 * filter took off lately, so what a frame's input times it leaves is the residual echo a caller must stand over.
 */
/** The canceller's attenuation over consecutive windows of frames under echo: each window's output-to-input power ratio. */
export class AttenuationWindows {
  #output = 0;
  #input = 0;
  #frames = 0;
  readonly #ratios: number[] = [];
  /** The lowest of #ratios, kept as each window closes (read on frames the residual test weighs). */
  #lowest = Number.POSITIVE_INFINITY;

  constructor(
    readonly frames: number,
    readonly kept: number,
  ) {}

  /** Windows measured (at most `kept`). */
  get count(): number {
    return this.#ratios.length;
  }

  /** All `kept` windows measured. */
  get full(): boolean {
    return this.#ratios.length >= this.kept;
  }

  /** The lowest ratio of the windows kept: the most the canceller took off lately. */
  lowest(): number {
    return this.#lowest;
  }

  /** One frame under echo: its output and input power. */
  add(output: number, input: number): void {
    this.#output += output;
    this.#input += input;
    if (++this.#frames < this.frames) return;
    if (this.#input > 0) {
      this.#ratios.push(this.#output / this.#input);
      if (this.#ratios.length > this.kept) this.#ratios.shift();
      this.#lowest = Math.min(...this.#ratios);
    }
    this.#output = 0;
    this.#input = 0;
    this.#frames = 0;
  }
}
