import { durationMs } from "../codecs/index.js";
import type { AudioFormat } from "../core/index.js";
import type { PlaybackPosition } from "./protocol/talk-methods.js";

/**
 * What a Talk API client has played of a session's assistant audio, from the
 * positions it reports (`playback` on appendAudio and the cancel verbs): the
 * Gateway's counterpart of the playback tracker a phone call keeps from the
 * carrier's echoed marks. Per output item, from that item's first sample:
 * audio sent (`talk.audio` frames) and the last position the client reported.
 *
 * Until the client reports a position the Gateway knows nothing of its
 * playback: heardMs is undefined (no truncation) and sent audio counts as
 * played, as before clients reported, unless the client declared at the
 * session's creation that it reports (`reporting`): then its playback is
 * estimated from the first audio sent. Once it reports, playback between
 * reports is taken to run at real time from the last report (capped at what
 * was sent), so an answer still playing on the client is still playing here.
 */
export class ClientPlayback {
  readonly #items = new Map<string, ItemPlayback>();
  readonly #maxItems: number;
  readonly #now: () => number;
  #reported = false;

  /** `reporting`: the client declared it reports playback (talk.session.create's playbackReports). */
  constructor(options: { maxItems?: number; now?: () => number; reporting?: boolean } = {}) {
    this.#maxItems = options.maxItems ?? 64;
    this.#now = options.now ?? (() => performance.now());
    this.#reported = options.reporting ?? false;
  }

  /** True once the client reported any position, or declared it would: its reports, not the writes, say what it heard. */
  get reporting(): boolean {
    return this.#reported;
  }

  /** `byteLength` bytes of `itemId` in `format` went to the client. */
  written(itemId: string, format: AudioFormat, byteLength: number): void {
    const item = this.#item(itemId);
    const ms = durationMs(format, byteLength);
    // An encoded format without a byte rate (opus): what was sent is not known, so nothing is capped by it.
    if (ms === 0 && byteLength > 0) item.sent = Number.POSITIVE_INFINITY;
    else item.sent += ms;
  }

  /** The client says it played `playedMs` of `itemId`. An item never sent is ignored. */
  report(position: PlaybackPosition): void {
    const item = this.#items.get(position.itemId);
    if (!item) return;
    this.#reported = true;
    item.played = Math.min(position.playedMs, item.sent);
    item.reportedAt = this.#now();
  }

  /** What the client said it played of `itemId`, ms; undefined when it reports nothing (or not of this item). */
  heardMs(itemId: string): number | undefined {
    if (!this.#reported) return undefined;
    const item = this.#items.get(itemId);
    if (!item) return undefined;
    return item.played ?? 0;
  }

  /** Whether the client is still playing audio it was sent (false while it reports nothing). */
  get playing(): boolean {
    return this.remainingMs() > 0;
  }

  /** Ms of sent audio the client has not played yet, by the estimate; of one item or of all. */
  remainingMs(itemId?: string): number {
    if (!this.#reported) return 0;
    const now = this.#now();
    let remaining = 0;
    for (const [id, item] of this.#items) {
      if (itemId !== undefined && id !== itemId) continue;
      if (!Number.isFinite(item.sent)) continue;
      // Never reported: playing since its first audio was sent.
      const played = item.played ?? 0;
      const since = item.reportedAt ?? item.firstSentAt;
      const estimate = Math.min(item.sent, played + Math.max(0, now - since));
      remaining = Math.max(remaining, item.sent - estimate);
    }
    return remaining;
  }

  /**
   * The client stops the audio it holds (the session's output was cancelled):
   * nothing more of it plays, so each item's sent position falls back to
   * what was played by now.
   */
  cleared(itemId?: string): void {
    const now = this.#now();
    for (const [id, item] of this.#items) {
      if (itemId !== undefined && id !== itemId) continue;
      if (!Number.isFinite(item.sent)) continue;
      const played = item.played ?? 0;
      const since = item.reportedAt ?? item.firstSentAt;
      item.sent = Math.min(item.sent, played + Math.max(0, now - since));
    }
  }

  #item(itemId: string): ItemPlayback {
    let item = this.#items.get(itemId);
    if (!item) {
      item = { sent: 0, played: undefined, reportedAt: undefined, firstSentAt: this.#now() };
      this.#items.set(itemId, item);
      if (this.#items.size > this.#maxItems) this.#items.delete(this.#items.keys().next().value as string);
    }
    return item;
  }
}

interface ItemPlayback {
  /** Ms of the item sent to the client (infinite: an encoding without a byte rate). */
  sent: number;
  /** The last position the client reported, ms. */
  played: number | undefined;
  reportedAt: number | undefined;
  firstSentAt: number;
}

/**
 * Resolves once `playback` estimates the client has played all of `itemId`
 * that was sent, or at once while the client reports nothing; also when
 * `signal` aborts. Polls at the estimated remaining time (at least 20 ms).
 */
export function playedOut(playback: ClientPlayback, itemId: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const check = (): void => {
      const remaining = playback.remainingMs(itemId);
      if (remaining <= 0 || signal.aborted) return done();
      timer = setTimeout(check, Math.max(20, Math.ceil(remaining)));
      timer.unref?.();
    };
    signal.addEventListener("abort", done, { once: true });
    check();
  });
}
