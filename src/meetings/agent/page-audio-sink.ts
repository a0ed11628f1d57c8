import { bytesFromPcm16 } from "../../codecs/index.js";
import type { AudioChunk } from "../../core/index.js";
import { expectPcm } from "../../core/index.js";
import type { TalkAudioSink } from "../../voice/index.js";
import type { TerminalReason } from "../../core/index.js";
import { encodeCaptureFrame } from "../bot/capture-framing.js";

/** Track id of assistant audio frames sent to the page (the page ignores it; it names the stream in logs). */
export const ASSISTANT_TRACK_ID = "assistant";

/** Lead the page schedules each buffer with (capture-script.ts: currentTime + 0.05). */
const PAGE_LEAD_MS = 50;

/**
 * Where a meeting assistant's speech goes: PCM16 frames (capture-framing,
 * kind 2) down the bot page's capture socket, into the Web Audio microphone
 * the injected script created; `{type:"clear"}` stops playback at once.
 *
 * The page plays in real time, so a playout clock here knows until when the
 * meeting hears the assistant: `drained()` resolves at that moment (done
 * means heard, so the answer stays interruptible while it plays) and
 * `audibleUntil` drives the echo gate and barge-in.
 */
export class PageAudioSink implements TalkAudioSink {
  readonly #send: (data: Uint8Array | string) => void;
  readonly #now: () => number;
  #playhead = 0;
  #waiters = new Set<() => void>();
  #timer: NodeJS.Timeout | undefined;
  /** Turns whose audio the meeting must not hear (answers given in chat only). Bounded. */
  readonly #muted = new Set<string>();

  constructor(send: (data: Uint8Array | string) => void, now: () => number = Date.now) {
    this.#send = send;
    this.#now = now;
  }

  /** Epoch ms until which assistant audio plays in the meeting (0 when nothing was written). */
  get audibleUntil(): number {
    return this.#playhead;
  }

  /** Whether the meeting hears the assistant now, or did within `tailMs`. */
  audible(tailMs = 0): boolean {
    return this.#now() < this.#playhead + tailMs;
  }

  /** Drops every chunk of `turnId` from now on (an answer meant for the chat only). */
  mute(turnId: string): void {
    this.#muted.add(turnId);
    if (this.#muted.size > 100) this.#muted.delete(this.#muted.values().next().value!);
  }

  write(chunk: AudioChunk, meta: { turnId: string; itemId: string }): void {
    if (this.#muted.has(meta.turnId)) return;
    // The page's microphone plays samples: encoded audio is refused (invalid_audio), never played as noise.
    const { samples, format } = expectPcm(chunk, "A meeting's microphone");
    const frames = samples.length / format.channels;
    if (frames <= 0) return;
    this.#send(
      encodeCaptureFrame({
        kind: "pcm16",
        trackId: ASSISTANT_TRACK_ID,
        channels: format.channels,
        sampleRate: format.sampleRate,
        payload: bytesFromPcm16(samples),
      }),
    );
    const start = Math.max(this.#playhead, this.#now() + PAGE_LEAD_MS);
    this.#playhead = start + (frames * 1000) / format.sampleRate;
    this.#schedule();
  }

  clear(_meta: { turnId: string; itemId?: string; reason: TerminalReason }): void {
    this.#send(JSON.stringify({ type: "clear" }));
    this.#playhead = 0;
    this.#settle();
  }

  drained(_itemId: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted || !this.audible()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        this.#waiters.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.#waiters.add(done);
      signal.addEventListener("abort", done, { once: true });
      this.#schedule();
    });
  }

  /** Releases waiters (the bot is leaving). Idempotent. */
  close(): void {
    this.#playhead = 0;
    this.#settle();
  }

  #schedule(): void {
    if (this.#waiters.size === 0) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(
      () => (this.audible() ? this.#schedule() : this.#settle()),
      Math.max(1, this.#playhead - this.#now()),
    );
  }

  #settle(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const done of [...this.#waiters]) done();
  }
}
