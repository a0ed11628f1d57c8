/**
 * The line's noise under an answer, for the echo guard: minimum statistics of the caller channel's 20 ms
 * frame levels (as received, before the canceller), kept two ways.
 *
 * - `noise`: the quietest frame of the last second. Between an answer's words that is the line's noise;
 *   through a continuous answer it is the echo's own quietest part (-40 dBFS on a -66 dBFS line), and the
 *   guard's bar 10 dB over it held callers at -28..-36 dBFS talking over the answer as residual echo.
 * - `echoFree`: the quietest frame of the last second that the echo cannot account for (what the reference
 *   around the echo's delay returns, at the measured return, under a quarter of the frame's power), held
 *   through a second with none, never over `noise` and never more than 10 dB under it. On a line it falls
 *   back to the line's noise under an answer; babble or noise that switches on mid-answer is not the echo's
 *   and lifts it as it lifts `noise`; a room's reverberation, which the reference at the delay does not
 *   predict, keeps it near `noise`.
 *
 * Measured in docs/performance.md (bench/onset-latency.bench.ts): the quietest frame of the caller channel
 * with the predicted echo subtracted instead fell under the noise of the corpus's noisy calls, whose
 * measured return counts the noise as echo (false onsets 9 -> 16 of 36 calls).
 */

/** Blocks kept and frames per block: the quietest frame of the last second. */
const BLOCKS = 5;
const BLOCK_FRAMES = 10;
/** A frame is the echo's when the echo predicted for it is at least this share of its power (6 dB under). */
const ECHO_SHARE = 0.25;
/** `echoFree` is never more than this under `noise` (power ratio, 10 dB). */
const MAX_BELOW = 0.1;

export class LineNoise {
  readonly #blocks: number[] = [];
  #blockMin = Number.POSITIVE_INFINITY;
  readonly #echoFreeBlocks: number[] = [];
  #echoFreeMin = Number.POSITIVE_INFINITY;
  #fill = 0;

  /**
   * One caller-channel frame: its power and the echo's predicted in it (power; 0 where nothing could
   * return, Infinity where the guard cannot tell yet).
   */
  frame(level: number, predictedEcho: number): void {
    if (level < this.#blockMin) this.#blockMin = level;
    if (predictedEcho < level * ECHO_SHARE && level < this.#echoFreeMin) this.#echoFreeMin = level;
    if (++this.#fill < BLOCK_FRAMES) return;
    push(this.#blocks, this.#blockMin);
    // A block the echo filled throughout says nothing of the noise: the older blocks stand.
    if (this.#echoFreeMin !== Number.POSITIVE_INFINITY) push(this.#echoFreeBlocks, this.#echoFreeMin);
    this.#blockMin = Number.POSITIVE_INFINITY;
    this.#echoFreeMin = Number.POSITIVE_INFINITY;
    this.#fill = 0;
  }

  /** The quietest frame of the last second (mean square). */
  get noise(): number {
    return Math.min(this.#blockMin, ...this.#blocks);
  }

  /** The quietest frame the echo cannot account for, within 10 dB under `noise` (mean square). */
  get echoFree(): number {
    const noise = this.noise;
    const echoFree = Math.min(this.#echoFreeMin, ...this.#echoFreeBlocks);
    if (echoFree === Number.POSITIVE_INFINITY) return noise;
    return Math.min(noise, Math.max(echoFree, noise * MAX_BELOW));
  }
}

function push(blocks: number[], value: number): void {
  blocks.push(value);
  if (blocks.length > BLOCKS) blocks.shift();
}
