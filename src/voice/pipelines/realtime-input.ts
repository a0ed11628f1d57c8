import { bytesFromPcm16 } from "../../codecs/index.js";
import type { RealtimeVoiceSession } from "../../core/index.js";
import type { AudioChunk, AudioFormat } from "../../core/index.js";
import {
  audioByteLength,
  bytesPerSecond,
  encodedChunk,
  pcmChunk,
  sameAudioFormat,
} from "../../core/index.js";
import { PcmConverter } from "./pcm-converter.js";

/**
 * The caller's audio on its way to a realtime provider session: converted to
 * the provider's format (or passed through as it is, e.g. u-law to a
 * provider that takes u-law), and held while no provider session is up (it
 * connects, or reconnects after a fault), the oldest dropped past `heldAudioMs`.
 */
export class RealtimeInput {
  /** The format the provider session is asked to take. */
  readonly providerFormat: AudioFormat;
  readonly #format: AudioFormat;
  readonly #heldAudioMs: number;
  /** Undefined when the input passes through as is. */
  readonly #converter: PcmConverter | undefined;
  /** Told the input bytes of each piece as it reaches the provider (input.audio.appended). */
  readonly #onForward: ((bytes: number) => void) | undefined;
  #held: AudioChunk[] = [];
  #heldBytes = 0;

  constructor(
    format: AudioFormat,
    accepted: readonly AudioFormat[] | undefined,
    heldAudioMs: number,
    onForward?: (bytes: number) => void,
  ) {
    this.#format = format;
    this.#onForward = onForward;
    this.#heldAudioMs = heldAudioMs;
    this.providerFormat = providerFormat(format, accepted);
    this.#converter = sameAudioFormat(format, this.providerFormat)
      ? undefined
      : new PcmConverter(format, this.providerFormat);
  }

  /**
   * Input samples, or encoded bytes passed through: to `voice` when there is
   * one, else held. `base64` is the passthrough bytes' encoding as the caller
   * received it, sent on as it is.
   */
  push(audio: AudioChunk, voice: RealtimeVoiceSession | undefined, base64?: string): void {
    if (voice) this.#forward(audio, voice, base64);
    else this.#hold(audio);
  }

  /** Forwards what was held to a session that is now up. */
  flush(voice: RealtimeVoiceSession): void {
    const held = this.#held;
    this.clear();
    for (const audio of held) this.#forward(audio, voice);
  }

  clear(): void {
    this.#held = [];
    this.#heldBytes = 0;
  }

  close(): void {
    this.clear();
    this.#converter?.close();
  }

  #forward(audio: AudioChunk, voice: RealtimeVoiceSession, base64?: string): void {
    this.#onForward?.(audioByteLength(audio));
    // Not copied: a session that keeps audio past appendAudio copies it (provider-types.ts).
    if (audio.kind === "encoded") {
      voice.appendAudio(audio.bytes, base64);
      return;
    }
    const pcm = this.#converter ? this.#converter.convert(audio.samples) : audio.samples;
    if (pcm.length > 0) voice.appendAudio(bytesFromPcm16(pcm));
  }

  #hold(audio: AudioChunk): void {
    const limit = (this.#heldAudioMs * bytesPerSecond(this.#format)) / 1000;
    // Copied: the caller may reuse its buffers once push returns.
    this.#held.push(
      audio.kind === "pcm"
        ? pcmChunk(audio.samples.slice(), audio.format)
        : encodedChunk(audio.bytes.slice(), audio.format),
    );
    this.#heldBytes += audioByteLength(audio);
    while (this.#heldBytes > limit && this.#held.length > 0)
      this.#heldBytes -= audioByteLength(this.#held.shift()!);
  }
}

/**
 * The format the provider session is asked for: the session's own when the
 * provider takes it (or declares nothing), else its first PCM16 format, which
 * the pipeline converts to and from.
 */
export function providerFormat(
  wanted: AudioFormat,
  accepted: readonly AudioFormat[] | undefined,
): AudioFormat {
  if (!accepted || accepted.length === 0 || accepted.some((f) => sameAudioFormat(f, wanted))) return wanted;
  return accepted.find((f) => f.encoding === "pcm16") ?? accepted[0]!;
}
