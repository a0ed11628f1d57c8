import { TalkError } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";

/** Upper bound on the bytes before the data chunk; a real header is ~44 bytes. */
const MAX_HEADER_BYTES = 64 * 1024;

/**
 * Incremental RIFF/WAVE reader for a stream whose length is unknown while it
 * is written (espeak-ng --stdout writes a placeholder data size). It parses
 * the header as soon as it is complete and then passes PCM through, always in
 * whole 16-bit samples (an odd trailing byte is carried to the next push).
 */
export class WavStreamParser {
  #pending: Buffer = Buffer.alloc(0);
  #format: AudioFormat | undefined;
  #inData = false;

  /** The stream's format once the header has been read. */
  get format(): AudioFormat | undefined {
    return this.#inData ? this.#format : undefined;
  }

  /** Feeds bytes; returns the PCM bytes now available (possibly empty). */
  push(bytes: Uint8Array): Uint8Array {
    this.#pending = this.#pending.length === 0 ? Buffer.from(bytes) : Buffer.concat([this.#pending, bytes]);
    if (!this.#inData) {
      this.#readHeader();
      if (!this.#inData) return new Uint8Array(0);
    }
    const whole = this.#pending.length - (this.#pending.length % 2);
    const out = new Uint8Array(this.#pending.subarray(0, whole));
    this.#pending = this.#pending.subarray(whole);
    return out;
  }

  /** Ends the stream; throws when it ended before the header was complete. */
  end(): void {
    if (!this.#inData) throw new TalkError("provider_error", "The WAV stream ended before its data chunk.");
  }

  #readHeader(): void {
    const buf = this.#pending;
    if (buf.length < 12) return;
    if (buf.toString("ascii", 0, 4) !== "RIFF" || buf.toString("ascii", 8, 12) !== "WAVE") {
      throw new TalkError("provider_error", "The synthesizer did not produce a RIFF/WAVE stream.");
    }
    let offset = 12;
    while (offset + 8 <= buf.length) {
      const id = buf.toString("ascii", offset, offset + 4);
      const size = buf.readUInt32LE(offset + 4);
      const body = offset + 8;
      if (id === "data") {
        if (!this.#format)
          throw new TalkError("provider_error", "The WAV data chunk came before its fmt chunk.");
        this.#inData = true;
        this.#pending = buf.subarray(body);
        return;
      }
      // RIFF chunks are padded to an even size.
      const next = body + size + (size % 2);
      if (next > buf.length) break;
      if (id === "fmt ") this.#format = parseFmt(buf.subarray(body, body + size));
      offset = next;
    }
    if (buf.length > MAX_HEADER_BYTES)
      throw new TalkError("provider_error", "The WAV header is implausibly large.");
  }
}

function parseFmt(fmt: Buffer): AudioFormat {
  if (fmt.length < 16) throw new TalkError("provider_error", "The WAV fmt chunk is truncated.");
  const audioFormat = fmt.readUInt16LE(0);
  const channels = fmt.readUInt16LE(2);
  const sampleRate = fmt.readUInt32LE(4);
  const bitsPerSample = fmt.readUInt16LE(14);
  if (audioFormat !== 1 || bitsPerSample !== 16 || channels < 1 || sampleRate < 1) {
    throw new TalkError("provider_error", "The synthesizer produced WAV that is not 16-bit PCM.", {
      details: { audioFormat, bitsPerSample, channels, sampleRate },
    });
  }
  return Object.freeze({ encoding: "pcm16", sampleRate, channels });
}
