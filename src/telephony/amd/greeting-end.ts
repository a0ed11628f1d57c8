/**
 * The end of a machine's greeting heard on the line itself, for a carrier
 * whose detection reports a machine but never the end of its greeting
 * (Plivo): once the greeting was heard (at least `minSpeechMs` of audio above
 * `thresholdDbfs`), `silenceMs` of continuous audio below it (the greeting
 * and its beep are over) ends it. Counted in samples received, not wall time.
 */
export interface GreetingEndOptions {
  /** Level a 20 ms frame must exceed to count as sound, dBFS. Default -45 (the local VAD's). */
  thresholdDbfs?: number;
  /** Sound heard before a silence counts, ms. Default 500. */
  minSpeechMs?: number;
  /** Continuous silence that ends the greeting, ms. Default 1500. */
  silenceMs?: number;
}

export class GreetingEnd {
  readonly #threshold: number;
  readonly #minSpeechMs: number;
  readonly #silenceMs: number;
  #speechMs = 0;
  #silentMs = 0;
  #ended = false;

  constructor(options: GreetingEndOptions = {}) {
    this.#threshold = options.thresholdDbfs ?? -45;
    this.#minSpeechMs = options.minSpeechMs ?? 500;
    this.#silenceMs = options.silenceMs ?? 1500;
  }

  /** Feeds caller audio (PCM16 mono); true once, when the greeting ended with this audio. */
  push(pcm: Int16Array, sampleRate: number): boolean {
    if (this.#ended || sampleRate <= 0) return false;
    const frame = Math.max(1, Math.round(sampleRate / 50));
    for (let start = 0; start < pcm.length; start += frame) {
      const end = Math.min(pcm.length, start + frame);
      let sum = 0;
      for (let i = start; i < end; i++) sum += pcm[i]! * pcm[i]!;
      const rms = Math.sqrt(sum / (end - start)) / 32768;
      const dbfs = rms > 0 ? 20 * Math.log10(rms) : -120;
      const ms = ((end - start) * 1000) / sampleRate;
      if (dbfs > this.#threshold) {
        this.#speechMs += ms;
        this.#silentMs = 0;
      } else if (this.#speechMs >= this.#minSpeechMs) {
        this.#silentMs += ms;
        if (this.#silentMs >= this.#silenceMs) {
          this.#ended = true;
          return true;
        }
      }
    }
    return false;
  }
}
