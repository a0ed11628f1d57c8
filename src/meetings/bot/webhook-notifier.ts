import { createHmac } from "node:crypto";
import type { TalkLogger } from "../../core/index.js";
import type { MeetingsWebhookOptions } from "../meetings-options.js";
import { interruptibleSleep, linkedSignal } from "../../core/index.js";
import { standardSignature, webhookKey } from "./webhook-signing.js";

export { standardSignature, webhookKey } from "./webhook-signing.js";

/**
 * The legacy signature (`x-talkgate-signature`): hex HMAC-SHA256 over
 * `<timestamp>.<body>` with the secret string. Kept beside the Standard
 * Webhooks headers so existing receivers keep working (the spec's migration
 * advice: add its headers, keep the old ones).
 */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** Deliveries waiting per bot; beyond this new events are dropped (logged) rather than held without bound. */
const MAX_QUEUED = 1000;
/** Longest wait a receiver's Retry-After may ask for, ms. */
const MAX_RETRY_AFTER_MS = 60_000;

/**
 * Delivers a bot's events to one URL in the Standard Webhooks form, in order
 * (one queue per notifier, i.e. per bot). Each event has an id fixed by the
 * caller (the same on every attempt, and derived from the event so a
 * receiver can use it as an idempotency key), `webhook-timestamp` of the
 * attempt, and `webhook-signature` with one `v1,` signature per configured
 * secret (current first, then previous ones during a rotation). Network
 * errors, timeouts, 429 and 5xx are retried with doubling backoff (±20 %
 * jitter; a Retry-After up to 60 s is honoured); 410 Gone stops deliveries to
 * the endpoint for this bot; other statuses are final.
 */
export class WebhookNotifier {
  readonly #options: Required<MeetingsWebhookOptions>;
  readonly #keys: Buffer[];
  readonly #logger: TalkLogger;
  readonly #signal: AbortSignal;
  #tail: Promise<void> = Promise.resolve();
  #queued = 0;
  #gone = false;

  constructor(options: Required<MeetingsWebhookOptions>, logger: TalkLogger, signal: AbortSignal) {
    this.#options = options;
    this.#keys = [options.secret, ...options.previousSecrets].map(webhookKey);
    this.#logger = logger;
    this.#signal = signal;
  }

  /** Whether events of this type are wanted (`meetings.webhook.events`). */
  wants(type: string): boolean {
    return this.#options.events.includes(type);
  }

  /**
   * Queues one delivery of `event` with the message id `id` (no "."); the
   * returned promise settles when it was delivered or given up (never rejects).
   */
  notify(event: Record<string, unknown>, id: string): Promise<void> {
    if (this.#gone || this.#signal.aborted) return this.#tail;
    if (this.#queued >= MAX_QUEUED) {
      this.#logger.warn({ id }, "meeting webhook queue full; event dropped");
      return this.#tail;
    }
    const body = JSON.stringify(event);
    this.#queued++;
    this.#tail = this.#tail.then(() => this.#deliver(id, body)).finally(() => this.#queued--);
    return this.#tail;
  }

  /** Resolves when every queued delivery is done. */
  idle(): Promise<void> {
    return this.#tail;
  }

  async #deliver(id: string, body: string): Promise<void> {
    const { url, secret, maxAttempts, initialBackoffMs, timeoutMs } = this.#options;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (this.#signal.aborted || this.#gone) return;
      const timestamp = String(Math.floor(Date.now() / 1000));
      let retry = true;
      let why = "";
      let retryAfterMs = 0;
      // Not AbortSignal.any: the notifier's signal is the process's shutdown, which would keep a trace of every delivery.
      const request = linkedSignal([this.#signal], timeoutMs);
      try {
        const response = await fetch(url, {
          method: "POST",
          redirect: "manual",
          headers: {
            "content-type": "application/json",
            "webhook-id": id,
            "webhook-timestamp": timestamp,
            "webhook-signature": this.#keys.map((k) => standardSignature(k, id, timestamp, body)).join(" "),
            "x-talkgate-timestamp": timestamp,
            "x-talkgate-signature": signWebhook(secret, timestamp, body),
            "x-talkgate-attempt": String(attempt),
          },
          body,
          signal: request.signal,
        });
        await response.body?.cancel();
        if (response.ok) return;
        if (response.status === 410) {
          this.#gone = true;
          this.#logger.warn(
            { url: new URL(url).origin },
            "meeting webhook endpoint answered 410 Gone; no more deliveries to it for this bot",
          );
          return;
        }
        retry = response.status === 429 || response.status >= 500;
        why = `HTTP ${response.status}`;
        const after = Number(response.headers.get("retry-after"));
        if (Number.isFinite(after) && after > 0) retryAfterMs = Math.min(after * 1000, MAX_RETRY_AFTER_MS);
      } catch (err) {
        why = (err as Error).message;
      } finally {
        request.unlink();
      }
      if (!retry || attempt === maxAttempts) {
        this.#logger.warn({ url: new URL(url).origin, id, attempt, why }, "meeting webhook not delivered");
        return;
      }
      const backoff = initialBackoffMs * 2 ** (attempt - 1) * (0.8 + 0.4 * Math.random());
      await interruptibleSleep(Math.max(backoff, retryAfterMs), this.#signal);
    }
  }
}
