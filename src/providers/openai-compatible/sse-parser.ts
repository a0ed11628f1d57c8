import { TalkError } from "../../core/index.js";

/**
 * A server-sent events parser (WHATWG "event stream interpretation"), pure
 * and incremental: bytes go in as the network delivers them, split anywhere
 * (inside a line, between "\r" and "\n", inside a UTF-8 sequence), and
 * complete events come out.
 *
 * Our own ~100 lines rather than a dependency: the format is small, and we
 * need exact control over limits and over how a stream may end.
 */

export interface SseEvent {
  /** The `event:` field; "message" when absent. */
  event: string;
  /** The `data:` lines joined with "\n". */
  data: string;
  /** The last `id:` seen, if any. */
  id?: string;
}

export interface SseParserOptions {
  /** Longest line or event accepted, in characters; a longer one is a provider error. Default 1 MiB. */
  maxEventChars?: number;
}

const DEFAULT_MAX_EVENT_CHARS = 1024 * 1024;

export class SseParser {
  readonly #maxEventChars: number;
  readonly #decoder = new TextDecoder("utf-8");
  /** Part of a line not yet terminated. */
  #line = "";
  /** The previous chunk ended with "\r": a "\n" opening the next one belongs to it. */
  #afterCr = false;
  #data: string[] = [];
  #dataChars = 0;
  #event = "";
  #lastId: string | undefined;

  constructor(options: SseParserOptions = {}) {
    this.#maxEventChars = options.maxEventChars ?? DEFAULT_MAX_EVENT_CHARS;
    if (!Number.isInteger(this.#maxEventChars) || this.#maxEventChars < 1) {
      throw new TalkError("config_invalid", "SSE parser: maxEventChars must be a positive integer");
    }
  }

  /** Feeds bytes (or already decoded text); returns the events they completed. */
  push(chunk: Uint8Array | string): SseEvent[] {
    const text = typeof chunk === "string" ? chunk : this.#decoder.decode(chunk, { stream: true });
    const events: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code !== 10 && code !== 13) continue;
      if (code === 10 && i === 0 && this.#afterCr && this.#line.length === 0) {
        // The "\n" of a "\r\n" split across two chunks.
        this.#afterCr = false;
        start = 1;
        continue;
      }
      this.#line += text.slice(start, i);
      this.#processLine(events);
      if (code === 13 && text.charCodeAt(i + 1) === 10) i++;
      start = i + 1;
      this.#afterCr = code === 13 && i === text.length - 1;
    }
    if (start < text.length) {
      this.#afterCr = false;
      this.#line += text.slice(start);
      if (this.#line.length > this.#maxEventChars) throw tooLong(this.#maxEventChars);
    }
    return events;
  }

  /**
   * Ends the stream. The standard drops an event not closed by a blank line;
   * we dispatch it, because some servers end with "data: [DONE]\n" and no
   * blank line, and a lost terminator would turn a good answer into an error.
   */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    const rest = this.#decoder.decode();
    if (rest.length > 0) events.push(...this.push(rest));
    if (this.#line.length > 0) this.#processLine(events);
    this.#dispatch(events);
    return events;
  }

  #processLine(events: SseEvent[]): void {
    const line = this.#line;
    this.#line = "";
    if (line.length === 0) {
      this.#dispatch(events);
      return;
    }
    if (line.charCodeAt(0) === 58 /* ":" comment, e.g. keep-alive */) return;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    switch (field) {
      case "data":
        this.#dataChars += value.length + 1;
        if (this.#dataChars > this.#maxEventChars) throw tooLong(this.#maxEventChars);
        this.#data.push(value);
        break;
      case "event":
        this.#event = value;
        break;
      case "id":
        if (!value.includes("\0")) this.#lastId = value;
        break;
      default:
        // "retry" and unknown fields: reconnection is not ours to do, unknown fields are ignored by the standard.
        break;
    }
  }

  #dispatch(events: SseEvent[]): void {
    if (this.#data.length > 0) {
      const event: SseEvent = { event: this.#event || "message", data: this.#data.join("\n") };
      if (this.#lastId !== undefined) event.id = this.#lastId;
      events.push(event);
    }
    this.#data = [];
    this.#dataChars = 0;
    this.#event = "";
  }
}

function tooLong(max: number): TalkError {
  return new TalkError(
    "provider_error",
    `The provider sent a server-sent event longer than ${max} characters.`,
  );
}
