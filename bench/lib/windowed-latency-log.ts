/**
 * A LatencyLog for long runs measured in consecutive windows (the soak):
 * every frame is counted in the window it was sent in, and its arrival is
 * credited to that same window even when it lands after the next one opened,
 * so no frame in flight at a boundary reads as lost. A window's figures are
 * read once it has been closed long enough for its last frames to arrive;
 * reading it frees its samples.
 */
import { LatencyLog } from "./frame-stamp.js";

export interface LatencyWindow {
  readonly start: number;
  end: number;
  sent: number;
  arrived: number;
  samples: number[];
}

export interface WindowFigures {
  sent: number;
  arrived: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
}

export class WindowedLatencyLog extends LatencyLog {
  /** Open and not yet read windows, oldest first; the last one is the current one. */
  readonly #windows: LatencyWindow[] = [];

  /** Closes the current window (if any) at now and opens the next one; returns the new window. */
  roll(now = performance.now()): LatencyWindow {
    const current = this.#windows.at(-1);
    if (current) current.end = now;
    const next: LatencyWindow = { start: now, end: Infinity, sent: 0, arrived: 0, samples: [] };
    this.#windows.push(next);
    return next;
  }

  /** Closes the current window without opening another (frames sent after it are not counted). */
  stop(now = performance.now()): void {
    const current = this.#windows.at(-1);
    if (current && current.end === Infinity) current.end = now;
  }

  override open(): void {
    this.roll();
  }

  override close(): void {
    this.stop();
  }

  override countSent(sentAt: number): void {
    const w = this.#windowOf(sentAt);
    if (w) w.sent++;
  }

  override record(sentAt: number, now = performance.now()): void {
    const w = this.#windowOf(sentAt);
    if (!w) return;
    w.arrived++;
    w.samples.push(now - sentAt);
  }

  /** The figures of `window` (closed; call after its frames had time to arrive), and forgets it. */
  take(window: LatencyWindow): WindowFigures {
    const at = this.#windows.indexOf(window);
    if (at >= 0) this.#windows.splice(at, 1);
    const sorted = Float64Array.from(window.samples).sort();
    window.samples = [];
    const pick = (q: number): number =>
      sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
    return {
      sent: window.sent,
      arrived: window.arrived,
      p50: pick(0.5),
      p99: pick(0.99),
      p999: pick(0.999),
      max: sorted.length === 0 ? NaN : sorted[sorted.length - 1]!,
    };
  }

  #windowOf(sentAt: number): LatencyWindow | undefined {
    // Newest first: almost every frame belongs to the current window.
    for (let i = this.#windows.length - 1; i >= 0; i--) {
      const w = this.#windows[i]!;
      if (sentAt >= w.start) return sentAt < w.end ? w : undefined;
    }
    return undefined;
  }
}
