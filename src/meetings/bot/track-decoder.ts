import { createOpusDecoder, createResampler, type OpusDecoder, type Resampler } from "../../codecs/index.js";
import { TalkError } from "../../core/index.js";
import { silenceSamples, type CaptureFrame } from "./capture-framing.js";
import { CAPTURE_RATE } from "./capture-rate.js";

/**
 * One remote track's audio, from capture frames to 16 kHz mono PCM16. Opus
 * decodes straight to 16 kHz (libopus downmixes a stereo packet); PCM16 is
 * downmixed and resampled; a silence frame (the page skipped encoding
 * silent audio) becomes as many zeros at 16 kHz, so the track's timeline and
 * its VAD run on as if the silence had been sent. State (decoder, resampler,
 * the fraction of a sample silence frames left over) lives as long as the
 * track.
 */
export class TrackDecoder {
  readonly trackId: string;
  #opus: OpusDecoder | undefined;
  #resampler: Resampler | undefined;
  #closed = false;
  /** Silence not yet turned into whole 16 kHz samples: (samples at the frame's rate) x 16 000, remainder. */
  #silenceRest = 0;
  #silenceRate = 0;

  constructor(trackId: string) {
    this.trackId = trackId;
  }

  /** Returns the frame's audio at 16 kHz mono (empty for an "ended" frame). Throws invalid_audio on a bad packet. */
  decode(frame: CaptureFrame): Int16Array {
    if (this.#closed) throw new TalkError("invalid_state", "The track decoder is closed.");
    if (frame.kind === "ended") return new Int16Array(0);
    if (frame.kind === "silence") return this.#silence(frame);
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

  #silence(frame: CaptureFrame): Int16Array {
    if (frame.sampleRate !== this.#silenceRate) {
      this.#silenceRate = frame.sampleRate;
      this.#silenceRest = 0;
    }
    const scaled = silenceSamples(frame) * CAPTURE_RATE + this.#silenceRest;
    this.#silenceRest = scaled % frame.sampleRate;
    return new Int16Array(Math.floor(scaled / frame.sampleRate));
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
