import type { TalkLogger } from "../../core/index.js";
import type { ChatMessage } from "../platforms/platform-driver.js";

/** Messages waiting to be posted; beyond this the newest are dropped (logged), never the process's memory. */
const MAX_PENDING = 20;
/** Message keys remembered to tell new messages from ones already seen. */
const MAX_REMEMBERED = 5000;

export interface BotChatDeps {
  botId: string;
  /** The platform's limit per message, characters. */
  maxChars: number;
  /** Posts one message (at most maxChars) on the page; rejects when the page did not take it. */
  post(text: string): Promise<void>;
  /** Each message seen for the first time, in order (the bot's own posts included). */
  onMessage(message: ChatMessage): void;
  logger: TalkLogger;
}

/**
 * A bot's side of the meeting's chat, platform-neutral. Reading: the driver
 * answers what the page shows; `observe()` finds the messages not seen before
 * (a multiset of sender, time and text, so a list the platform trims or
 * re-renders is fine and two equal messages count twice). Writing: `say()`
 * queues text, split at word boundaries into the platform's message size,
 * posted one at a time in order.
 */
export class BotChat {
  readonly #deps: BotChatDeps;
  /** Key -> how many messages with that key were seen (insertion order = age). */
  readonly #seen = new Map<string, number>();
  #pending: string[] = [];
  #posting = false;
  #closed = false;

  constructor(deps: BotChatDeps) {
    this.#deps = deps;
  }

  /** The page's current messages: the new ones go to onMessage, oldest first. */
  observe(messages: readonly ChatMessage[]): void {
    const counts = new Map<string, number>();
    for (const message of messages) {
      const key = `${message.from}\u0000${message.at}\u0000${message.text}`;
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      if (n <= (this.#seen.get(key) ?? 0)) continue;
      this.#seen.delete(key);
      this.#seen.set(key, n);
      if (this.#seen.size > MAX_REMEMBERED) this.#seen.delete(this.#seen.keys().next().value!);
      try {
        this.#deps.onMessage(message);
      } catch (err) {
        this.#deps.logger.warn({ err, botId: this.#deps.botId }, "meeting: chat message not handled");
      }
    }
  }

  /** Queues text for the chat (split to the platform's size). Ignored once closed or when blank. */
  say(text: string): void {
    if (this.#closed) return;
    const parts = splitMessage(text, this.#deps.maxChars);
    for (const part of parts) {
      if (this.#pending.length >= MAX_PENDING) {
        this.#deps.logger.warn({ botId: this.#deps.botId }, "meeting: chat queue full; message dropped");
        break;
      }
      this.#pending.push(part);
    }
    void this.#drain();
  }

  /** Stops posting; what is still queued is dropped. Idempotent. */
  close(): void {
    this.#closed = true;
    this.#pending = [];
  }

  async #drain(): Promise<void> {
    if (this.#posting) return;
    this.#posting = true;
    try {
      while (!this.#closed && this.#pending.length > 0) {
        const text = this.#pending.shift()!;
        try {
          await this.#deps.post(text);
        } catch (err) {
          this.#deps.logger.warn({ err, botId: this.#deps.botId }, "meeting: chat message not posted");
        }
      }
    } finally {
      this.#posting = false;
    }
  }
}

/**
 * Text cut into messages of at most `maxChars`: at the last space before the
 * limit when there is one in the second half, else hard; parts trimmed, blank
 * parts dropped.
 */
export function splitMessage(text: string, maxChars: number): string[] {
  const out: string[] = [];
  let rest = text.trim();
  const limit = Math.max(1, Math.floor(maxChars));
  while (rest.length > limit) {
    let cut = rest.lastIndexOf(" ", limit);
    if (cut < limit / 2) cut = limit;
    out.push(rest.slice(0, cut).trim());
    rest = rest.slice(cut).trim();
  }
  if (rest !== "") out.push(rest);
  return out.filter((p) => p !== "");
}
