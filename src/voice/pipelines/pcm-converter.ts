import { isCodecError } from "../../codecs/index.js";
import { createResampler, type Resampler } from "../../codecs/index.js";
import { TalkError } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";

/**
 * Converts one PCM16 stream between formats (rate and channel count), keeping
 * resampler state across chunks. One converter per stream (a turn's input, a
 * TTS job's output); close() frees the resampler.
 */
export class PcmConverter {
  readonly from: AudioFormat;
  readonly to: AudioFormat;
  readonly #resampler: Resampler | undefined;
  #closed = false;

  constructor(from: AudioFormat, to: AudioFormat) {
    if (from.encoding !== "pcm16" || to.encoding !== "pcm16") {
      throw new TalkError(
        "invalid_audio",
        `Only PCM16 is converted here, not ${from.encoding} -> ${to.encoding}.`,
      );
    }
    this.from = from;
    this.to = to;
    try {
      // Channels are mapped before resampling, so the resampler runs at the output's layout.
      this.#resampler =
        from.sampleRate === to.sampleRate
          ? undefined
          : createResampler({ from: from.sampleRate, to: to.sampleRate, channels: to.channels });
    } catch (err) {
      throw asTalkError(err, `No conversion from ${from.sampleRate} Hz to ${to.sampleRate} Hz.`);
    }
  }

  /** The converted samples that are ready (may be empty while the filter fills). */
  convert(pcm: Int16Array): Int16Array {
    if (this.#closed) throw new TalkError("invalid_state", "The converter is closed.");
    const mapped = mapChannels(pcm, this.from.channels, this.to.channels);
    if (!this.#resampler) return mapped;
    try {
      return this.#resampler.process(mapped);
    } catch (err) {
      throw asTalkError(err, "Resampling failed.");
    }
  }

  /** Drains the filter tail at the end of the stream. */
  flush(): Int16Array {
    if (this.#closed || !this.#resampler) return new Int16Array(0);
    return this.#resampler.flush();
  }

  /** Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#resampler?.close();
  }
}

function mapChannels(pcm: Int16Array, from: number, to: number): Int16Array {
  if (from === to) return pcm;
  if (from === 2 && to === 1) {
    if (pcm.length % 2 !== 0)
      throw new TalkError("invalid_audio", "Stereo PCM needs an even number of samples.");
    const out = new Int16Array(pcm.length / 2);
    for (let i = 0; i < out.length; i++) out[i] = (pcm[2 * i]! + pcm[2 * i + 1]!) >> 1;
    return out;
  }
  if (from === 1 && to === 2) {
    const out = new Int16Array(pcm.length * 2);
    for (let i = 0; i < pcm.length; i++) out[2 * i] = out[2 * i + 1] = pcm[i]!;
    return out;
  }
  throw new TalkError("invalid_audio", `Cannot map ${from} channels to ${to}.`);
}

function asTalkError(err: unknown, message: string): TalkError {
  if (err instanceof TalkError) return err;
  if (isCodecError(err)) return new TalkError("invalid_audio", `${message} ${err.message}`, { cause: err });
  return new TalkError("internal", message, { cause: err });
}
