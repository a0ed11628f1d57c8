import { createHmac } from "node:crypto";
import type { TalkLogger } from "../../core/index.js";
import type { MeetingsWebhookOptions } from "../meetings-options.js";
import { interruptibleSleep } from "./interruptible-sleep.js";

/**
 * Signs a webhook body: hex HMAC-SHA256 over `<timestamp>.<body>` with the
 * shared secret. Receivers recompute it, compare in constant time, and
 * reject stale timestamps (replay).
 */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/**
 * Delivers a bot's lifecycle events to one URL, in order (one queue per
 * notifier, i.e. per bot), each retried with exponential backoff on a network
 * error, a timeout, 429 or 5xx. A 4xx other than 429 is final: retrying the
 * same body cannot help.
 */
export class WebhookNotifier {
  readonly #options: Required<MeetingsWebhookOptions>;
  readonly #logger: TalkLogger;
  readonly #signal: AbortSignal;
  #tail: Promise<void> = Promise.resolve();

  constructor(options: Required<MeetingsWebhookOptions>, logger: TalkLogger, signal: AbortSignal) {
    this.#options = options;
    this.#logger = logger;
    this.#signal = signal;
  }

  /** Queues one delivery; the returned promise settles when it was delivered or given up (never rejects). */
  notify(event: Record<string, unknown>): Promise<void> {
    const body = JSON.stringify(event);
    this.#tail = this.#tail.then(() => this.#deliver(body));
    return this.#tail;
  }

  /** Resolves when every queued delivery is done. */
  idle(): Promise<void> {
    return this.#tail;
  }

  async #deliver(body: string): Promise<void> {
    const { url, secret, maxAttempts, initialBackoffMs, timeoutMs } = this.#options;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (this.#signal.aborted) return;
      const timestamp = String(Math.floor(Date.now() / 1000));
      let retry = true;
      let why = "";
      try {
        const response = await fetch(url, {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-talkgate-timestamp": timestamp,
            "x-talkgate-signature": signWebhook(secret, timestamp, body),
            "x-talkgate-attempt": String(attempt),
          },
          body,
          signal: AbortSignal.any([this.#signal, AbortSignal.timeout(timeoutMs)]),
        });
        await response.body?.cancel();
        if (response.ok) return;
        retry = response.status === 429 || response.status >= 500;
        why = `HTTP ${response.status}`;
      } catch (err) {
        why = (err as Error).message;
      }
      if (!retry || attempt === maxAttempts) {
        this.#logger.warn({ url: new URL(url).origin, attempt, why }, "meeting webhook not delivered");
        return;
      }
      await interruptibleSleep(initialBackoffMs * 2 ** (attempt - 1), this.#signal);
    }
  }
}
