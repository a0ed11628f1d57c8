/**
 * A call's greeting: spoken once, when the leg has started and the stream is
 * connected, unless it is held (answering-machine detection first): while
 * held, caller audio does not reach the assistant (an optional listener hears
 * it as PCM). Its first `protectMs` cannot be interrupted; the item is known
 * from the session's first `output.audio.started` after it was said.
 */
import type { TalkEvent, TalkOutput } from "../core/index.js";
import type { MediaLeg } from "../voice/index.js";

export interface CallGreetingOptions {
  /** What is said, read when it is said (the recording notice first, then the greeting). */
  text(): string;
  protectMs: number;
  /** Held from the start (caller audio dropped, greeting not spoken) until `release()`. */
  held: boolean;
  leg: Pick<MediaLeg, "takesText" | "say" | "cancelOutput">;
  /** Whether the leg started and the stream is connected (the greeting can be heard). */
  ready(): boolean;
  /** Whether the leg started (its output can be cancelled). */
  legStarted(): boolean;
  /** A greeting the provider cannot speak verbatim: the call goes on without it, and this says why. */
  onUnspoken(err: unknown): void;
}

export class CallGreeting {
  readonly #o: CallGreetingOptions;
  #held: boolean;
  #greeted = false;
  #pending = false;
  #itemId: string | undefined;
  #startedAt = 0;
  #heldAudio: ((pcm: Int16Array, sampleRate: number) => void) | undefined;

  constructor(options: CallGreetingOptions) {
    this.#o = options;
    this.#held = options.held;
  }

  /** Caller audio is kept from the assistant (it goes to `heldAudio`). */
  get held(): boolean {
    return this.#held;
  }

  /** Speaks the greeting, once, when not held and the call is ready. */
  greet(): void {
    if (this.#held || this.#greeted || !this.#o.ready()) return;
    this.#greeted = true;
    const text = this.#o.text();
    if (text && this.#o.leg.takesText) {
      this.#pending = true;
      try {
        // Spoken as content (the provider reads it out), never turned into instructions.
        this.#o.leg.say(text);
      } catch (err) {
        this.#pending = false;
        this.#o.onUnspoken(err);
      }
    }
  }

  /** Caller audio reaches the assistant again and the greeting is spoken (once), now or as the stream starts. */
  release(): void {
    if (!this.#held) return;
    this.#held = false;
    this.greet();
  }

  /** Stops the assistant (its answer cut) and keeps caller audio from it; `onAudio` hears that audio. */
  hold(onAudio?: (pcm: Int16Array, sampleRate: number) => void): void {
    this.#held = true;
    this.#heldAudio = onAudio;
    this.#greeted = true;
    if (this.#o.legStarted()) this.#o.leg.cancelOutput("cancelled");
  }

  /** Caller audio while held, as PCM. */
  heldAudio(pcm: Int16Array, sampleRate: number): void {
    this.#heldAudio?.(pcm, sampleRate);
  }

  /** Greeting protection: the greeting cannot be interrupted during its first protectMs. */
  interruptible(output: TalkOutput): boolean {
    if (output.itemId !== this.#itemId) return true;
    return Date.now() - this.#startedAt >= this.#o.protectMs;
  }

  onSessionEvent(event: TalkEvent): void {
    if (event.type === "output.audio.started" && this.#pending && event.itemId) {
      this.#pending = false;
      this.#itemId = event.itemId;
      this.#startedAt = Date.now();
    }
  }
}
