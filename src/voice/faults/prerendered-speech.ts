import { bytesFromPcm16, encodeAlaw, encodeMulaw } from "../../codecs/index.js";
import { TalkError } from "../../core/index.js";
import { PcmConverter } from "../pipelines/pcm-converter.js";
import { audioFromBytes, durationMs, type AudioChunk, type AudioFormat } from "../../core/index.js";

/** A rendered line in one format: the bytes a sink takes as they are. */
export interface RenderedLine {
  readonly text: string;
  readonly format: AudioFormat;
  /** The line's bytes in `format` (PCM16 little-endian, or G.711). */
  readonly data: Uint8Array;
  /** The same audio as a chunk of its kind, to write to a sink. */
  readonly audio: AudioChunk;
  readonly durationMs: number;
}

/**
 * A line rendered once at start-up (by the local TTS) as PCM16, then kept in
 * every format a leg asks for: audio that cannot fail when a provider has,
 * because nothing is synthesized, fetched or decoded at the moment it is
 * needed. `audioFor(format)` converts once per format and caches.
 */
export class PrerenderedSpeech {
  readonly text: string;
  readonly #pcm: Int16Array;
  readonly #format: AudioFormat;
  readonly #cache = new Map<string, RenderedLine>();

  constructor(text: string, pcm: Int16Array, format: AudioFormat) {
    if (format.encoding !== "pcm16")
      throw new TalkError("config_invalid", "Pre-rendered speech is given as PCM16.");
    if (pcm.length === 0) throw new TalkError("config_invalid", `The line "${text}" rendered to no audio.`);
    this.text = text;
    this.#pcm = pcm;
    this.#format = format;
  }

  /** The line in `format` (PCM16 at any rate, G.711 u-law or A-law); converted on first use, then cached. */
  audioFor(format: AudioFormat): RenderedLine {
    const key = `${format.encoding}/${format.sampleRate}/${format.channels}`;
    let line = this.#cache.get(key);
    if (!line) {
      const data = this.#render(format);
      line = Object.freeze({
        text: this.text,
        format,
        data,
        audio: audioFromBytes(data, format),
        durationMs: durationMs(format, data.byteLength),
      });
      this.#cache.set(key, line);
    }
    return line;
  }

  #render(format: AudioFormat): Uint8Array {
    const pcmTarget: AudioFormat = {
      encoding: "pcm16",
      sampleRate: format.sampleRate,
      channels: format.channels,
    };
    const converter = new PcmConverter(this.#format, pcmTarget);
    let pcm: Int16Array;
    try {
      const head = converter.convert(this.#pcm);
      const tail = converter.flush();
      pcm = new Int16Array(head.length + tail.length);
      pcm.set(head);
      pcm.set(tail, head.length);
    } finally {
      converter.close();
    }
    switch (format.encoding) {
      case "pcm16":
        return bytesFromPcm16(pcm).slice();
      case "g711_ulaw":
        return encodeMulaw(pcm);
      case "g711_alaw":
        return encodeAlaw(pcm);
      default:
        throw new TalkError("invalid_audio", `Pre-rendered speech cannot be given as ${format.encoding}.`);
    }
  }
}

/** The lines of the failure path: spoken on a fault, before a hang-up with `provider_lost`, and while a provider is late. */
export interface FaultSpeech {
  apology: PrerenderedSpeech;
  goodbye: PrerenderedSpeech;
  /** talk.faults.holding: said once a turn when a recognizer or synthesizer is late. */
  holding?: PrerenderedSpeech;
}
