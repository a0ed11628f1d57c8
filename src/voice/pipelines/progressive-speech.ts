import type { TalkLogger } from "../../core/index.js";
import type { RealtimeProviderEvent, RealtimeVoiceSession } from "../../core/index.js";
import type { ConsultProgressChannel } from "../../core/index.js";

/** An action on the provider session; returns true when it started a response (the queue then waits for it). */
type ResponseAction = () => boolean;

interface Pending {
  readonly owner: object;
  readonly action: ResponseAction;
}

/**
 * Seed 002's progressive pattern for realtime providers, whose function
 * outputs are atomic: while agent_consult runs, each complete chunk of its
 * answer is spoken with `speakText` (a response kept out of the conversation,
 * so the context does not grow per chunk), and the function output follows
 * when the consult ends. Only one response may be in progress at a time, so
 * every action waits here until the provider has finished the response before
 * it (response_started ... response_done), in order.
 */
export class ProgressiveSpeech {
  readonly #voice: () => RealtimeVoiceSession | undefined;
  readonly #logger: TalkLogger;
  readonly #queue: Pending[] = [];
  /** idle: nothing in progress; pending: we asked for a response not yet started; active: a response is running. */
  #state: "idle" | "pending" | "active" = "idle";
  /** Signals of `say` whose abort already drops their queued lines. */
  readonly #listened = new WeakSet<AbortSignal>();

  constructor(voice: () => RealtimeVoiceSession | undefined, logger: TalkLogger) {
    this.#voice = voice;
    this.#logger = logger;
  }

  /** Whether the provider session can speak text (progressive answers need it). */
  get supported(): boolean {
    return typeof this.#voice()?.speakText === "function";
  }

  /** Every provider event passes here first: it tracks whether a response is in progress. */
  observe(event: RealtimeProviderEvent): void {
    switch (event.type) {
      case "response_started":
        this.#state = "active";
        return;
      case "response_done":
        this.#state = "idle";
        this.#next();
        return;
      case "error":
        // A refused response.create never starts: do not wait for it forever.
        if (this.#state === "pending") {
          this.#state = "idle";
          this.#next();
        }
        return;
      case "closed":
        this.#queue.length = 0;
        return;
      default:
        return;
    }
  }

  /**
   * Listens for the progress of one agent_consult call. Chunks and the cue are
   * spoken in order while the turn's signal is live; `settle` runs the
   * function output after them; `close` stops listening and drops what was
   * not spoken yet (barge-in, cancel).
   */
  listen(
    channel: ConsultProgressChannel,
    sessionId: string,
    callId: string,
    signal: AbortSignal,
    report?: (kind: "cue" | "chunk", text: string) => void,
  ): { settle(submit: () => void): void; close(): void } {
    const owner = {};
    const speak = (text: string): void =>
      this.#enqueue(owner, () => {
        const voice = this.#voice();
        if (signal.aborted || !voice?.speakText) return false;
        voice.speakText(text);
        return true;
      });
    const unlisten = channel.listen(sessionId, callId, {
      cue: (text) => {
        report?.("cue", text);
        speak(text);
      },
      chunk: (text) => {
        report?.("chunk", text);
        speak(text);
      },
    });
    const onAbort = (): void => this.#drop(owner);
    signal.addEventListener("abort", onAbort, { once: true });
    return {
      settle: (submit) =>
        this.#enqueue(owner, () => {
          if (signal.aborted) return false;
          submit();
          return true;
        }),
      close: () => {
        unlisten();
        signal.removeEventListener("abort", onAbort);
        if (signal.aborted) this.#drop(owner);
      },
    };
  }

  /**
   * Speaks `text` after what is queued, in order, while `signal` is live (the
   * brain reply path: the agent's chunks); what is still queued when it
   * aborts is dropped.
   */
  say(text: string, signal: AbortSignal): void {
    if (signal.aborted) return;
    if (!this.#listened.has(signal)) {
      this.#listened.add(signal);
      signal.addEventListener("abort", () => this.#drop(signal), { once: true });
    }
    this.#enqueue(signal, () => {
      const voice = this.#voice();
      if (signal.aborted || !voice?.speakText) return false;
      voice.speakText(text);
      return true;
    });
  }

  /** Resolves once what was said under `signal` has been spoken (its last response ended), or it aborted. */
  idle(signal: AbortSignal): Promise<void> {
    if (signal.aborted || (this.#state === "idle" && this.#queue.length === 0)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        signal.removeEventListener("abort", done);
        resolve();
      };
      signal.addEventListener("abort", done, { once: true });
      this.#enqueue(signal, () => {
        done();
        return false;
      });
    });
  }

  #enqueue(owner: object, action: ResponseAction): void {
    this.#queue.push({ owner, action });
    this.#next();
  }

  #drop(owner: object): void {
    for (let i = this.#queue.length - 1; i >= 0; i--)
      if (this.#queue[i]!.owner === owner) this.#queue.splice(i, 1);
  }

  #next(): void {
    while (this.#state === "idle" && this.#queue.length > 0) {
      const { action } = this.#queue.shift()!;
      try {
        if (action()) this.#state = "pending";
      } catch (err) {
        // The provider session went away mid-answer; the pipeline reports that through its own events.
        this.#logger.warn({ err }, "progressive speech action failed");
      }
    }
  }
}
