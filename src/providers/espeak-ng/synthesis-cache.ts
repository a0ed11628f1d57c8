import type { AudioFormat } from "../../core/index.js";

/** One finished synthesis: espeak-ng's PCM as it came, chunk by chunk, and its format. */
export interface CachedSynthesis {
  readonly format: AudioFormat;
  readonly chunks: readonly Int16Array[];
}

/** Longest text kept: greetings, holding lines and apologies repeat; long answers seldom do. */
export const CACHED_TEXT_MAX_CHARS = 200;
/** Bytes of PCM kept in all: about 95 s of espeak-ng's 22 050 Hz speech. */
export const CACHE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * Finished espeak-ng syntheses of short texts, least recently used dropped first, shared by every
 * espeak-ng provider of the process. Why: a process renders the same lines again and again (each app
 * renders its apology, goodbye and holding line at start; each call speaks the greeting), and every
 * render is a process start. Spawning blocks the event loop until the child has exec'd (7-17 ms
 * measured on a 2-core VM, docs/performance.md "Text to speech"). espeak-ng is deterministic for a
 * given binary, voice, rate and text, so a replay is the same audio.
 */
export class SynthesisCache {
  readonly #entries = new Map<string, CachedSynthesis>();
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxBytes = CACHE_MAX_BYTES) {
    this.#maxBytes = maxBytes;
  }

  /** The key of a synthesis, or undefined when the text is too long to keep. */
  static key(binary: string, voice: string, wordsPerMinute: number, text: string): string | undefined {
    if (text.length > CACHED_TEXT_MAX_CHARS) return undefined;
    return JSON.stringify([binary, voice, wordsPerMinute, text]);
  }

  get(key: string): CachedSynthesis | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    // Most recently used last: Map keeps insertion order, so the first entry is the one to drop.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry;
  }

  set(key: string, entry: CachedSynthesis): void {
    const bytes = sizeOf(entry);
    if (bytes > this.#maxBytes) return;
    const old = this.#entries.get(key);
    if (old) {
      this.#entries.delete(key);
      this.#bytes -= sizeOf(old);
    }
    this.#entries.set(key, entry);
    this.#bytes += bytes;
    for (const [oldest, value] of this.#entries) {
      if (this.#bytes <= this.#maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= sizeOf(value);
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }
}

function sizeOf(entry: CachedSynthesis): number {
  return entry.chunks.reduce((n, c) => n + c.byteLength, 0);
}
