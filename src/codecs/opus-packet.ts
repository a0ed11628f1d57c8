/**
 * Reading the table-of-contents byte of an Opus packet (RFC 6716 section
 * 3.1): enough to reject what is plainly not a packet before it reaches
 * native code, to know how much audio a lost packet stood for, and whether a
 * packet carries in-band FEC for its predecessor.
 */
import { CodecError } from "./codec-error.js";

export type OpusMode = "silk" | "hybrid" | "celt";

export interface OpusPacketInfo {
  readonly mode: OpusMode;
  /** 4 (narrowband) .. 20 (fullband) kHz audio bandwidth. */
  readonly bandwidthKhz: 4 | 6 | 8 | 12 | 20;
  readonly stereo: boolean;
  readonly frameCount: number;
  /** Duration of one frame in microseconds (2,500 .. 60,000). */
  readonly frameDurationUs: number;
  /** Duration of the whole packet in microseconds. */
  readonly durationUs: number;
}

const SILK_US = [10_000, 20_000, 40_000, 60_000] as const;
const CELT_US = [2_500, 5_000, 10_000, 20_000] as const;
const MAX_PACKET_DURATION_US = 120_000;

/** Parses the TOC (and frame count) of `packet`; throws `invalid_packet` for what cannot be an Opus packet. */
export function parseOpusPacket(packet: Uint8Array): OpusPacketInfo {
  if (!(packet instanceof Uint8Array))
    throw new CodecError("invalid_packet", "an Opus packet must be a Uint8Array");
  if (packet.length === 0)
    throw new CodecError("invalid_packet", "empty Opus packet (a lost packet is decodeLost())");
  const toc = packet[0]!;
  const config = toc >> 3;
  let mode: OpusMode;
  let bandwidthKhz: OpusPacketInfo["bandwidthKhz"];
  let frameDurationUs: number;
  if (config < 12) {
    mode = "silk";
    bandwidthKhz = ([4, 6, 8] as const)[config >> 2]!;
    frameDurationUs = SILK_US[config & 3]!;
  } else if (config < 16) {
    mode = "hybrid";
    bandwidthKhz = config < 14 ? 12 : 20;
    frameDurationUs = config & 1 ? 20_000 : 10_000;
  } else {
    mode = "celt";
    bandwidthKhz = ([4, 8, 12, 20] as const)[(config - 16) >> 2]!;
    frameDurationUs = CELT_US[config & 3]!;
  }
  let frameCount: number;
  switch (toc & 3) {
    case 0:
      frameCount = 1;
      break;
    case 1:
      if ((packet.length - 1) % 2 !== 0) {
        throw new CodecError("invalid_packet", "Opus code-1 packet with an odd payload length (truncated?)");
      }
      frameCount = 2;
      break;
    case 2:
      if (packet.length < 2)
        throw new CodecError("invalid_packet", "Opus code-2 packet without a frame length (truncated)");
      frameCount = 2;
      break;
    default:
      if (packet.length < 2)
        throw new CodecError("invalid_packet", "Opus code-3 packet without a frame count (truncated)");
      frameCount = packet[1]! & 0x3f;
      if (frameCount === 0) throw new CodecError("invalid_packet", "Opus code-3 packet with zero frames");
  }
  const durationUs = frameCount * frameDurationUs;
  if (durationUs > MAX_PACKET_DURATION_US) {
    throw new CodecError("invalid_packet", `Opus packet of ${durationUs / 1000} ms exceeds the 120 ms limit`);
  }
  return { mode, bandwidthKhz, stereo: (toc & 4) !== 0, frameCount, frameDurationUs, durationUs };
}

/**
 * Whether `packet` carries in-band FEC (SILK LBRR data) for the packet before
 * it. Mirrors libopus 1.5's opus_packet_has_lbrr() for single-frame packets:
 * the LBRR flag is the bit after the per-frame VAD flags, and both are coded
 * with probability 1/2, so they are the first bits of the range-coded frame.
 */
export function opusPacketHasFec(packet: Uint8Array): boolean {
  const info = parseOpusPacket(packet);
  if (info.mode === "celt" || (packet[0]! & 3) !== 0 || packet.length < 2) return false;
  const silkFrames = info.frameDurationUs > 20_000 ? info.frameDurationUs / 20_000 : 1;
  return ((packet[1]! >> (7 - silkFrames)) & 1) === 1;
}

/** A packet that carries no audio for `durationUs`: libopus conceals (PLC) exactly that long. */
export function concealmentPacket(lastToc: number, durationUs: number): Uint8Array {
  const info = parseOpusPacket(new Uint8Array([lastToc & 0xfc]));
  const count = Math.max(1, Math.round(durationUs / info.frameDurationUs));
  // Code 0 with no payload = one empty frame; code 3 CBR with no payload = `count` empty frames.
  return count === 1 ? new Uint8Array([lastToc & 0xfc]) : new Uint8Array([(lastToc & 0xfc) | 3, count]);
}
