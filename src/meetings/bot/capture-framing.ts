import { TalkError } from "../../core/index.js";
import type { RtpSourceSample, TrackSourceReport } from "./speaker-attribution.js";

/**
 * The binary framing of the capture socket between the bot's page and the
 * server (one WebSocket per bot). Media rides in binary frames, control in
 * JSON text frames.
 *
 * Binary frame, little-endian:
 *
 * | offset | size | field                                                        |
 * | ------ | ---- | ------------------------------------------------------------ |
 * | 0      | 1    | kind: 1 = Opus packet, 2 = PCM16 samples, 3 = track ended,   |
 * |        |      | 4 = silence (the page skipped encoding silent audio)         |
 * | 1      | 1    | channels (1 or 2; PCM16 interleaved)                         |
 * | 2      | 2    | track id length N in bytes (1..255)                          |
 * | 4      | 4    | sample rate in Hz (Opus: the encoder's input rate)           |
 * | 8      | N    | track id, UTF-8 (the page's MediaStreamTrack.id)             |
 * | 8+N    | rest | payload: one Opus packet, or PCM16 samples; empty for "ended" |
 * |        |      | silence: uint32, the number of silent samples at the rate    |
 *
 * Server -> page binary frames carry assistant audio in the same layout with
 * kind 2 and the track id "assistant".
 */
export const FRAME_KIND = Object.freeze({ opus: 1, pcm16: 2, ended: 3, silence: 4 });
export type FrameKind = "opus" | "pcm16" | "ended" | "silence";

export const HEADER_BYTES = 8;
const MAX_TRACK_ID_BYTES = 255;
/** The most silence one frame may claim: the page reports it every 100 ms; more is a broken or hostile page. */
export const MAX_SILENCE_SECONDS = 10;

export interface CaptureFrame {
  kind: FrameKind;
  trackId: string;
  channels: number;
  sampleRate: number;
  payload: Uint8Array;
}

const KIND_NAMES: Record<number, FrameKind> = { 1: "opus", 2: "pcm16", 3: "ended", 4: "silence" };

/** Parses one binary frame. Throws invalid_audio on anything malformed (the caller drops it). */
export function decodeCaptureFrame(data: Uint8Array): CaptureFrame {
  if (data.byteLength < HEADER_BYTES)
    throw new TalkError("invalid_audio", "capture frame shorter than its header");
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const kind = KIND_NAMES[view.getUint8(0)];
  const channels = view.getUint8(1);
  const idLength = view.getUint16(2, true);
  const sampleRate = view.getUint32(4, true);
  if (!kind) throw new TalkError("invalid_audio", `unknown capture frame kind ${view.getUint8(0)}`);
  if (idLength === 0 || idLength > MAX_TRACK_ID_BYTES || HEADER_BYTES + idLength > data.byteLength) {
    throw new TalkError("invalid_audio", "capture frame track id length out of range");
  }
  if (kind !== "ended" && (channels < 1 || channels > 2 || sampleRate < 8000 || sampleRate > 192_000)) {
    throw new TalkError("invalid_audio", "capture frame format out of range");
  }
  const trackId = new TextDecoder().decode(data.subarray(HEADER_BYTES, HEADER_BYTES + idLength));
  const payload = data.subarray(HEADER_BYTES + idLength);
  if (kind === "pcm16" && payload.byteLength % (2 * channels) !== 0) {
    throw new TalkError("invalid_audio", "PCM16 payload is not whole samples");
  }
  if (kind === "silence") {
    if (payload.byteLength !== 4)
      throw new TalkError("invalid_audio", "silence frame payload is not 4 bytes");
    const samples = new DataView(payload.buffer, payload.byteOffset, 4).getUint32(0, true);
    if (samples === 0 || samples > sampleRate * MAX_SILENCE_SECONDS)
      throw new TalkError("invalid_audio", `silence frame claims ${samples} samples`);
  }
  return { kind, trackId, channels, sampleRate, payload };
}

/** A silence frame's sample count (at its sample rate); decodeCaptureFrame has checked it. */
export function silenceSamples(frame: CaptureFrame): number {
  return new DataView(frame.payload.buffer, frame.payload.byteOffset, 4).getUint32(0, true);
}

/** The payload of a silence frame of `samples` samples. */
export function silencePayload(samples: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, samples, true);
  return out;
}

/** Builds one binary frame (server side: assistant audio; tests: page frames). */
export function encodeCaptureFrame(frame: CaptureFrame): Uint8Array {
  const id = new TextEncoder().encode(frame.trackId);
  if (id.byteLength === 0 || id.byteLength > MAX_TRACK_ID_BYTES)
    throw new TalkError("invalid_params", "track id must be 1..255 bytes");
  const out = new Uint8Array(HEADER_BYTES + id.byteLength + frame.payload.byteLength);
  const view = new DataView(out.buffer);
  view.setUint8(0, FRAME_KIND[frame.kind]);
  view.setUint8(1, frame.channels);
  view.setUint16(2, id.byteLength, true);
  view.setUint32(4, frame.sampleRate, true);
  out.set(id, HEADER_BYTES);
  out.set(frame.payload, HEADER_BYTES + id.byteLength);
  return out;
}

/**
 * Text frames from the page. `sources` comes every ~200 ms while someone
 * speaks: per remote track, the RTP sources whose packets arrived since the
 * previous report and were not silent, as `[source, audioLevel | null]`
 * (RTCRtpReceiver.getSynchronizationSources / getContributingSources).
 */
export type CaptureControlMessage =
  | { type: "hello"; webCodecs: boolean; userAgent: string }
  | { type: "track"; trackId: string; streamIds: string[]; encoding: "opus" | "pcm16" }
  | { type: "capture-error"; trackId?: string; message: string }
  | { type: "capture-notice"; trackId?: string; message: string }
  | { type: "sources"; tracks: { trackId: string; ssrc: SourcePair[]; csrc: SourcePair[] }[] };

/** One source on the wire: [SSRC or CSRC, audio level 0..1 or null]. */
export type SourcePair = [number, number | null];

/** Limits of a `sources` message: a receiver has one SSRC and at most 15 CSRCs (RFC 3550). */
const MAX_SOURCE_TRACKS = 64;
const MAX_SOURCES = 16;

/**
 * Checks a `sources` message from the page. Throws invalid_params on anything
 * malformed (the caller drops the message); the page is the meeting's, so
 * nothing it sends is trusted.
 */
export function parseSourcesMessage(message: unknown): TrackSourceReport[] {
  const bad = (why: string): never => {
    throw new TalkError("invalid_params", `capture sources message: ${why}`);
  };
  const tracks = (message as { tracks?: unknown } | null)?.tracks;
  if (!Array.isArray(tracks) || tracks.length > MAX_SOURCE_TRACKS) return bad("tracks must be a short list");
  const samples = (list: unknown): RtpSourceSample[] => {
    if (list === undefined) return [];
    if (!Array.isArray(list) || list.length > MAX_SOURCES) return bad("sources must be a short list");
    return list.map((pair: unknown) => {
      if (!Array.isArray(pair) || pair.length !== 2) return bad("a source is [id, level]");
      const [source, level] = pair as unknown[];
      if (typeof source !== "number" || !Number.isInteger(source) || source < 0 || source > 0xffff_ffff)
        return bad("a source id is a 32-bit unsigned integer");
      if (level !== null && (typeof level !== "number" || !(level >= 0 && level <= 1)))
        return bad("an audio level is null or 0..1");
      return { source, level: level as number | null };
    });
  };
  return tracks.map((t: unknown) => {
    const track = t as { trackId?: unknown; ssrc?: unknown; csrc?: unknown } | null;
    if (typeof track?.trackId !== "string" || track.trackId.length === 0 || track.trackId.length > 255)
      return bad("trackId must be a non-empty string");
    return { trackId: track.trackId, ssrc: samples(track.ssrc), csrc: samples(track.csrc) };
  });
}
