import { createOpusDecoder, createResampler, type OpusDecoder, type Resampler } from "../../codecs/index.js";
import { TalkError } from "../../core/index.js";
import type { CaptureFrame } from "./capture-framing.js";
import { CAPTURE_RATE } from "./capture-rate.js";

/**
 * One remote track's audio, from capture frames to 16 kHz mono PCM16. Opus
 * decodes straight to 16 kHz (libopus downmixes a stereo packet); PCM16 is
 * downmixed and resampled. State (decoder, resampler) lives as long as the
 * track.
 */
export class TrackDecoder {
  readonly trackId: string;
  #opus: OpusDecoder | undefined;
  #resampler: Resampler | undefined;
  #closed = false;

  constructor(trackId: string) {
    this.trackId = trackId;
  }

  /** Returns the frame's audio at 16 kHz mono (empty for an "ended" frame). Throws invalid_audio on a bad packet. */
  decode(frame: CaptureFrame): Int16Array {
    if (this.#closed) throw new TalkError("invalid_state", "The track decoder is closed.");
    if (frame.kind === "ended") return new Int16Array(0);
    if (frame.kind === "opus") {
      this.#opus ??= createOpusDecoder({ sampleRate: CAPTURE_RATE, channels: 1 });
      try {
        return this.#opus.decode(frame.payload);
      } catch (err) {
        throw new TalkError("invalid_audio", "Opus packet did not decode.", { cause: err });
      }
    }
    const bytes = frame.payload.byteOffset % 2 === 0 ? frame.payload : frame.payload.slice();
    let pcm = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
    if (frame.channels === 2) pcm = downmix(pcm);
    if (frame.sampleRate === CAPTURE_RATE) return pcm.slice();
    if (this.#resampler && this.#resampler.from !== frame.sampleRate) {
      this.#resampler.close();
      this.#resampler = undefined;
    }
    try {
      this.#resampler ??= createResampler({ from: frame.sampleRate, to: CAPTURE_RATE });
    } catch (err) {
      throw new TalkError("invalid_audio", `Unsupported capture rate ${frame.sampleRate}.`, { cause: err });
    }
    return this.#resampler.process(pcm);
  }

  /** Idempotent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#opus?.close();
    this.#resampler?.close();
  }
}

function downmix(stereo: Int16Array): Int16Array {
  const mono = new Int16Array(stereo.length >> 1);
  for (let i = 0; i < mono.length; i++) mono[i] = (stereo[2 * i]! + stereo[2 * i + 1]!) >> 1;
  return mono;
}
