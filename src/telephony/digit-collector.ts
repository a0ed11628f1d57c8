/**
 * Keypad input the agent asked for (collect_digits): while a collection runs,
 * the caller's digits go to it (and are events of the session) instead of
 * reaching the agent as text. One collection at a time; it ends at the count,
 * at the terminator, after `timeoutMs` without a key, on caller speech when
 * asked to, or when its signal aborts (the turn was cancelled, the call ended).
 */
import { TalkError } from "../core/index.js";
import type { CollectDigitsRequest, CollectedDigits } from "../core/index.js";

interface Collection {
  readonly request: CollectDigitsRequest;
  digits: string;
  timer: NodeJS.Timeout | undefined;
  finish(reason: CollectedDigits["reason"]): void;
}

export class DigitCollector {
  #current: Collection | undefined;

  /** The turn of the collection running, if any (the digits' events carry it). */
  get turnId(): string | undefined {
    return this.#current?.request.turnId;
  }

  collect(request: CollectDigitsRequest, signal: AbortSignal): Promise<CollectedDigits> {
    if (this.#current)
      throw new TalkError("invalid_state", "Digits are already being collected on this call.");
    signal.throwIfAborted();
    return new Promise<CollectedDigits>((resolve, reject) => {
      const onAbort = (): void => {
        end();
        reject(signal.reason instanceof Error ? signal.reason : new TalkError("cancelled"));
      };
      const end = (): void => {
        clearTimeout(collection.timer);
        signal.removeEventListener("abort", onAbort);
        if (this.#current === collection) this.#current = undefined;
      };
      const collection: Collection = {
        request,
        digits: "",
        timer: undefined,
        finish: (reason) => {
          end();
          resolve({ digits: collection.digits, reason });
        },
      };
      this.#current = collection;
      this.#arm(collection);
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** A key the caller pressed: true when a collection took it. */
  offer(digit: string): boolean {
    const c = this.#current;
    if (!c) return false;
    if (digit === c.request.terminator) {
      c.finish("terminator");
      return true;
    }
    c.digits += digit;
    if (c.request.count !== undefined && c.digits.length >= c.request.count) c.finish("count");
    else this.#arm(c);
    return true;
  }

  /** The caller spoke: a collection that gives way to speech ends. */
  speech(): void {
    const c = this.#current;
    if (c?.request.cancelOnSpeech) c.finish("speech");
  }

  /** The call ends: a running collection ends with what it has. */
  close(): void {
    this.#current?.finish("timeout");
  }

  #arm(c: Collection): void {
    clearTimeout(c.timer);
    c.timer = setTimeout(() => c.finish("timeout"), c.request.timeoutMs);
  }
}
