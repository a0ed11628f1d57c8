/**
 * Stamped 20 ms u-law frames for the telephony load: the first 15 bytes of
 * the 160 carry a marker, the call index, a sequence number and the send
 * time (performance.now()), so the receiving side of the same process times
 * the frame without a lookup. A relay that passes u-law through untouched
 * (realtime calls) delivers the stamp intact; 15 bytes are 20 base64
 * characters, read without decoding the rest.
 */
const FRAME = 160;
const MARK = 0xa5;
const template = Buffer.alloc(FRAME, 0xff);

export function stampedFrameBase64(callIdx: number, seq: number, sentAt = performance.now()): string {
  template[0] = MARK;
  template.writeUInt16BE(callIdx & 0xffff, 1);
  template.writeUInt32BE(seq >>> 0, 3);
  template.writeDoubleBE(sentAt, 7);
  return template.toString("base64");
}

/** `frames` stamped 20 ms frames in one payload (a provider delta of frames x 20 ms), sequence numbers from `seq`. */
export function stampedFramesBase64(
  callIdx: number,
  seq: number,
  frames: number,
  sentAt = performance.now(),
): string {
  if (frames === 1) return stampedFrameBase64(callIdx, seq, sentAt);
  const out = Buffer.alloc(FRAME * frames, 0xff);
  for (let i = 0; i < frames; i++) {
    const at = i * FRAME;
    out[at] = MARK;
    out.writeUInt16BE(callIdx & 0xffff, at + 1);
    out.writeUInt32BE((seq + i) >>> 0, at + 3);
    out.writeDoubleBE(sentAt, at + 7);
  }
  return out.toString("base64");
}

/** Base64 characters of one 20 ms frame (160 bytes), padded. */
export const FRAME_BASE64_CHARS = Math.ceil(FRAME / 3) * 4;

/**
 * Every stamp of a payload that may hold several frames (a relay that forwards a provider delta unsplit):
 * decoded once, a stamp read at each 160-byte frame.
 */
export function readStamps(text: string, at: number, end: number): Stamp[] {
  const bytes = Buffer.from(text.slice(at, end), "base64");
  const out: Stamp[] = [];
  for (let i = 0; i + 15 <= bytes.length; i += FRAME) {
    if (bytes[i] !== MARK) continue;
    out.push({
      callIdx: bytes.readUInt16BE(i + 1),
      seq: bytes.readUInt32BE(i + 3),
      sentAt: bytes.readDoubleBE(i + 7),
    });
  }
  return out;
}

export interface Stamp {
  callIdx: number;
  seq: number;
  sentAt: number;
}

/** The stamp of the base64 payload starting at `at` in `text`, or undefined for an unstamped frame. */
export function readStamp(text: string, at: number): Stamp | undefined {
  const head = Buffer.from(text.slice(at, at + 20), "base64");
  if (head.length < 15 || head[0] !== MARK) return undefined;
  return { callIdx: head.readUInt16BE(1), seq: head.readUInt32BE(3), sentAt: head.readDoubleBE(7) };
}

/** Latencies of frames sent inside a measuring window, and how many were sent / arrived. */
export class LatencyLog {
  windowStart = Infinity;
  windowEnd = Infinity;
  sent = 0;
  arrived = 0;
  samples: number[] = [];

  /** Opens a window from now: counts restart. */
  open(): void {
    this.windowStart = performance.now();
    this.windowEnd = Infinity;
    this.sent = 0;
    this.arrived = 0;
    this.samples = [];
  }

  close(): void {
    this.windowEnd = performance.now();
  }

  inWindow(sentAt: number): boolean {
    return sentAt >= this.windowStart && sentAt < this.windowEnd;
  }

  /** A frame stamped `sentAt` was sent (call before sending with the same time). */
  countSent(sentAt: number): void {
    if (this.inWindow(sentAt)) this.sent++;
  }

  record(sentAt: number, now = performance.now()): void {
    if (!this.inWindow(sentAt)) return;
    this.arrived++;
    this.samples.push(now - sentAt);
  }

  percentile(p: number): number {
    if (this.samples.length === 0) return NaN;
    const sorted = Float64Array.from(this.samples).sort();
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
  }
}
