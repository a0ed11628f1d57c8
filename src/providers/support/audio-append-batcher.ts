/**
 * The caller's audio on its way into a realtime provider's socket, sent in
 * pieces of `appendMs` instead of one message per carrier frame.
 *
 * A phone line delivers a 20 ms frame 50 times a second, in silence too; each
 * frame sent on as its own `input_audio_buffer.append` costs a JSON message,
 * a WebSocket frame and a socket write, the largest per-frame costs of a
 * relayed call (docs/performance.md). LiveKit Agents' realtime plugins send
 * 100 ms pieces for the same reason. The price is latency on the provider's
 * side only: the oldest frame of a piece reaches it up to `appendMs - 20` ms
 * later. talkgate's own barge-in decision reads every frame as it arrives.
 *
 * Order: the owner calls `flush()` before it sends anything else on the
 * socket (a commit, a clear, a response), so held audio always goes first.
 * Held audio waits at most `appendMs` of wall time plus one 20 ms sweep: when frames stop
 * (a paused stream, a client that sends only while its user speaks) one
 * shared sweep, running only while some batcher holds audio, sends it.
 */
/** The sweep's bookkeeping on a batcher: a key of this module's own, not part of the batcher's API. */
const SWEEP_SLOT: unique symbol = Symbol("sweepSlot");

export class AudioAppendBatcher {
  readonly #targetBytes: number;
  readonly #maxHoldMs: number;
  readonly #send: (base64: string) => void;
  #buffer: Buffer | undefined;
  #bytes = 0;
  #heldSince = 0;
  /** Where the sweep keeps this batcher while it holds audio (its index in the sweep's list), else -1. */
  [SWEEP_SLOT] = -1;
  #closed = false;

  /**
   * @param appendMs the piece to send; 0 (or a piece no larger than one frame) sends every frame as it comes
   * @param bytesPerSecond of the audio pushed (8 000 for G.711 at 8 kHz, 48 000 for PCM16 at 24 kHz)
   * @param send sends one piece, base64
   */
  constructor(appendMs: number, bytesPerSecond: number, send: (base64: string) => void) {
    const ms = Number.isFinite(appendMs) && appendMs > 0 ? appendMs : 0;
    this.#targetBytes = ms > 0 ? Math.max(1, Math.round((ms * bytesPerSecond) / 1000)) : 0;
    this.#maxHoldMs = ms;
    this.#send = send;
  }

  /** Audio bytes held now (not yet sent). */
  get heldBytes(): number {
    return this.#bytes;
  }

  /**
   * One piece of input. `base64` is the same bytes already encoded (a
   * carrier's payload), sent as it is when the piece goes out alone.
   */
  push(data: Uint8Array, base64?: string): void {
    if (this.#closed) return;
    if (this.#bytes === 0 && data.byteLength >= this.#targetBytes) {
      this.#send(base64 ?? encode(data));
      return;
    }
    if (this.#bytes + data.byteLength > this.#targetBytes * 2) this.flush();
    if (data.byteLength > this.#targetBytes) {
      this.#send(base64 ?? encode(data));
      return;
    }
    this.#buffer ??= Buffer.allocUnsafe(this.#targetBytes * 2);
    if (this.#bytes === 0) {
      this.#heldSince = performance.now();
      SWEEP.hold(this);
    }
    this.#buffer.set(data, this.#bytes);
    this.#bytes += data.byteLength;
    if (this.#bytes >= this.#targetBytes) this.flush();
  }

  /** Sends what is held now (before any other message of the session). */
  flush(): void {
    if (this.#bytes === 0) return;
    const piece = this.#buffer!.toString("base64", 0, this.#bytes);
    this.#bytes = 0;
    SWEEP.release(this);
    this.#send(piece);
  }

  /**
   * Sends what has waited `appendMs` (the sweep's call). A send that fails here
   * (the socket closed under the session) drops the piece: there is no caller
   * to tell, and the session's own close or loss event reports the socket.
   */
  flushIfDue(now: number): void {
    if (this.#bytes === 0 || now - this.#heldSince < this.#maxHoldMs) return;
    try {
      this.flush();
    } catch {
      // Dropped with the socket (see above).
    }
  }

  /** Drops what is held and sends nothing more. Idempotent. */
  close(): void {
    this.#closed = true;
    this.#bytes = 0;
    SWEEP.release(this);
  }
}

function encode(data: Uint8Array): string {
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64");
}

/**
 * One timer for every batcher of the process, running only while one holds
 * audio: per-call timers would cost a timer per piece per call. The batchers
 * holding audio are a list each knows its place in (added at the end, removed
 * by moving the last into its place), not a Set: a batcher joins and leaves
 * once per piece, and a Set under that churn rebuilt its table over and over,
 * tables that outlived the young generation (about 50 KB/s at 100 relayed
 * calls, docs/performance.md). The list's array keeps its capacity.
 */
class AppendSweep {
  static readonly INTERVAL_MS = 20;
  readonly #holding: AudioAppendBatcher[] = [];
  #timer: NodeJS.Timeout | undefined;

  hold(batcher: AudioAppendBatcher): void {
    if (batcher[SWEEP_SLOT] >= 0) return;
    batcher[SWEEP_SLOT] = this.#holding.length;
    this.#holding.push(batcher);
    if (this.#timer) return;
    this.#timer = setInterval(() => this.#sweep(), AppendSweep.INTERVAL_MS);
    this.#timer.unref();
  }

  release(batcher: AudioAppendBatcher): void {
    const slot = batcher[SWEEP_SLOT];
    if (slot < 0) return;
    batcher[SWEEP_SLOT] = -1;
    const last = this.#holding.pop()!;
    if (last !== batcher) {
      this.#holding[slot] = last;
      last[SWEEP_SLOT] = slot;
    }
    if (this.#holding.length > 0 || !this.#timer) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #sweep(): void {
    const now = performance.now();
    // Backwards: a batcher that flushes leaves the list, and the one moved into its place was already seen.
    for (let i = this.#holding.length - 1; i >= 0; i--) this.#holding[i]?.flushIfDue(now);
  }
}

const SWEEP = new AppendSweep();
