/**
 * Cuts a stream of PCM16 chunks of any size into exact frames (10, 20 or
 * 40 ms). Network chunks rarely line up with codec frames; this keeps the
 * remainder between pushes in one preallocated frame buffer, so the hot path
 * allocates nothing.
 */
import { CodecError } from "./codec-error.js";

export interface FrameAssemblerOptions {
  /** Rate in Hz; with frameMs it must give a whole number of samples per frame. Required. */
  sampleRate: number;
  /** Interleaved channels. Default 1. */
  channels?: number;
  /** Frame duration: 10, 20 or 40 ms. Default 20. */
  frameMs?: number;
}

export interface FrameAssembler {
  /** Samples per frame, all channels together. */
  readonly frameLength: number;
  /** Samples held back until the next push completes a frame. */
  readonly pending: number;
  /**
   * Adds a chunk and calls `onFrame` for every frame it completes, in order.
   * The frame is a view that is valid only until `onFrame` returns (copy it
   * with slice() to keep it). Returns the number of frames emitted.
   */
  push(pcm: Int16Array, onFrame: (frame: Int16Array) => void): number;
  /**
   * Ends the stream: emits the remainder zero-padded to a whole frame (when
   * `pad` is true, the default) or drops it, and empties the assembler.
   */
  flush(onFrame: (frame: Int16Array) => void, pad?: boolean): number;
  /** Drops the remainder. */
  reset(): void;
}

export function createFrameAssembler(options: FrameAssemblerOptions): FrameAssembler {
  if (options === null || typeof options !== "object")
    throw new CodecError("invalid_options", "createFrameAssembler needs { sampleRate }");
  const { sampleRate, channels = 1, frameMs = 20 } = options;
  if (
    typeof sampleRate !== "number" ||
    !Number.isInteger(sampleRate) ||
    sampleRate <= 0 ||
    sampleRate > 384_000
  ) {
    throw new CodecError(
      "unsupported_rate",
      `sampleRate must be a positive integer, got ${String(sampleRate)}`,
    );
  }
  if (!Number.isInteger(channels) || channels < 1 || channels > 8) {
    throw new CodecError("invalid_options", `channels must be 1..8, got ${String(channels)}`);
  }
  if (frameMs !== 10 && frameMs !== 20 && frameMs !== 40) {
    throw new CodecError("invalid_options", `frameMs must be 10, 20 or 40, got ${String(frameMs)}`);
  }
  const perChannel = (sampleRate * frameMs) / 1000;
  if (!Number.isInteger(perChannel)) {
    throw new CodecError(
      "unsupported_rate",
      `${frameMs} ms at ${sampleRate} Hz is not a whole number of samples`,
    );
  }
  return new PcmFrameAssembler(perChannel * channels, channels);
}

class PcmFrameAssembler implements FrameAssembler {
  readonly frameLength: number;
  #channels: number;
  #buf: Int16Array;
  #fill = 0;

  constructor(frameLength: number, channels: number) {
    this.frameLength = frameLength;
    this.#channels = channels;
    this.#buf = new Int16Array(frameLength);
  }

  get pending(): number {
    return this.#fill;
  }

  push(pcm: Int16Array, onFrame: (frame: Int16Array) => void): number {
    if (!(pcm instanceof Int16Array))
      throw new CodecError("invalid_audio", "frame assembler input must be an Int16Array");
    if (pcm.length % this.#channels !== 0) {
      throw new CodecError(
        "invalid_audio",
        `${pcm.length} samples are not a whole number of ${this.#channels}-channel frames`,
      );
    }
    const n = this.frameLength;
    let offset = 0;
    let emitted = 0;
    if (this.#fill > 0) {
      const take = Math.min(n - this.#fill, pcm.length);
      this.#buf.set(pcm.subarray(0, take), this.#fill);
      this.#fill += take;
      offset = take;
      if (this.#fill < n) return 0;
      this.#fill = 0;
      onFrame(this.#buf);
      emitted++;
    }
    // Whole frames inside the chunk go out as views of it: no copy.
    for (; offset + n <= pcm.length; offset += n) {
      onFrame(pcm.subarray(offset, offset + n));
      emitted++;
    }
    if (offset < pcm.length) {
      this.#buf.set(pcm.subarray(offset), 0);
      this.#fill = pcm.length - offset;
    }
    return emitted;
  }

  flush(onFrame: (frame: Int16Array) => void, pad = true): number {
    if (this.#fill === 0) return 0;
    const had = this.#fill;
    this.#fill = 0;
    if (!pad) return 0;
    this.#buf.fill(0, had);
    onFrame(this.#buf);
    return 1;
  }

  reset(): void {
    this.#fill = 0;
  }
}
