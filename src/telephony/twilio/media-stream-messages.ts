/**
 * The Twilio Media Streams WebSocket protocol: schemas and a parser for every
 * message Twilio sends (connected, start, media, dtmf, mark, stop), and
 * builders for the messages we send on a bidirectional stream (media, mark,
 * clear). Shapes follow Twilio's "Media Streams - WebSocket Messages" page:
 * numbers Twilio sends as strings (sequenceNumber, chunk, timestamp) stay
 * strings; unknown extra fields are ignored so an additive change on Twilio's
 * side does not break calls.
 */
import { z } from "zod";
import { TalkError } from "../../core/index.js";
import { STRICT_BASE64, base64Of } from "../carrier/base64.js";
import { scanTwilioMediaFrame } from "./media-frame-scan.js";

const digits = z.string().regex(/^\d{1,15}$/, "a decimal string");
const sid = z.string().min(1).max(64);

export const TwilioConnectedSchema = z.object({
  event: z.literal("connected"),
  protocol: z.string(),
  version: z.string(),
});

export const TwilioMediaFormatSchema = z.object({
  encoding: z.string(),
  sampleRate: z.number().int().positive(),
  channels: z.number().int().positive(),
});

export const TwilioStartSchema = z.object({
  event: z.literal("start"),
  sequenceNumber: digits,
  streamSid: sid,
  start: z.object({
    streamSid: sid,
    accountSid: sid,
    callSid: sid,
    tracks: z.array(z.enum(["inbound", "outbound"])),
    customParameters: z.record(z.string(), z.string()).default({}),
    mediaFormat: TwilioMediaFormatSchema,
  }),
});

export const TwilioMediaSchema = z.object({
  event: z.literal("media"),
  sequenceNumber: digits,
  streamSid: sid,
  media: z.object({
    track: z.enum(["inbound", "outbound"]),
    chunk: digits,
    timestamp: digits,
    payload: z.string(),
  }),
});

export const TwilioDtmfSchema = z.object({
  event: z.literal("dtmf"),
  sequenceNumber: digits,
  streamSid: sid,
  dtmf: z.object({
    track: z.string(),
    digit: z.string().regex(/^[0-9*#A-Da-d]$/, "one DTMF digit"),
  }),
});

export const TwilioMarkSchema = z.object({
  event: z.literal("mark"),
  sequenceNumber: digits,
  streamSid: sid,
  mark: z.object({ name: z.string() }),
});

export const TwilioStopSchema = z.object({
  event: z.literal("stop"),
  sequenceNumber: digits,
  streamSid: sid,
  stop: z.object({ accountSid: sid, callSid: sid }),
});

export type TwilioConnectedMessage = z.infer<typeof TwilioConnectedSchema>;
export type TwilioStartMessage = z.infer<typeof TwilioStartSchema>;
/** A media message with its payload decoded. */
export type TwilioMediaMessage = z.infer<typeof TwilioMediaSchema> & { readonly audio: Uint8Array };
export type TwilioDtmfMessage = z.infer<typeof TwilioDtmfSchema>;
export type TwilioMarkMessage = z.infer<typeof TwilioMarkSchema>;
export type TwilioStopMessage = z.infer<typeof TwilioStopSchema>;

export type TwilioStreamMessage =
  | TwilioConnectedMessage
  | TwilioStartMessage
  | TwilioMediaMessage
  | TwilioDtmfMessage
  | TwilioMarkMessage
  | TwilioStopMessage;

export type TwilioStreamEvent = TwilioStreamMessage["event"];

const SCHEMAS = {
  connected: TwilioConnectedSchema,
  start: TwilioStartSchema,
  media: TwilioMediaSchema,
  dtmf: TwilioDtmfSchema,
  mark: TwilioMarkSchema,
  stop: TwilioStopSchema,
} as const;

/**
 * Why a frame was refused, carried in `TalkError.details.reason`. Stable:
 * listed in docs/telephony.md; a retired reason is never reused.
 */
export type TwilioMessageRejection =
  | "oversized"
  | "bad_json"
  | "not_an_object"
  | "unknown_event"
  | "invalid_message"
  | "bad_base64"
  | "wrong_stream_sid";

export interface ParseTwilioMessageOptions {
  /** The stream's sid once `start` arrived; any other sid on a later message is refused. */
  expectedStreamSid?: string;
  /** Largest frame accepted, in bytes (UTF-16 units for strings). Default 65 536. */
  maxBytes?: number;
  /** Largest decoded media payload, bytes. Default 16 000 (2 s of u-law 8 kHz; Twilio sends 160). */
  maxAudioBytes?: number;
}

export type ParseTwilioMessageResult =
  | { readonly ok: true; readonly message: TwilioStreamMessage }
  | { readonly ok: false; readonly error: TalkError };

const DEFAULT_MAX_BYTES = 65_536;
const DEFAULT_MAX_AUDIO_BYTES = 16_000;

function reject(
  reason: TwilioMessageRejection,
  message: string,
  details: Record<string, unknown> = {},
): ParseTwilioMessageResult {
  const code =
    reason === "oversized"
      ? "payload_too_large"
      : reason === "bad_base64"
        ? "invalid_audio"
        : "invalid_request";
  return { ok: false, error: new TalkError(code, message, { details: { reason, ...details } }) };
}

/**
 * Parses one WebSocket text frame from Twilio. Never throws: a frame that is
 * not a valid message yields a coded TalkError (`details.reason` says which
 * check failed) that the adapter logs and counts without touching other calls.
 */
export function parseTwilioMessage(
  raw: string | Buffer | ArrayBuffer | Buffer[],
  options: ParseTwilioMessageOptions = {},
): ParseTwilioMessageResult {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const maxAudioBytes = options.maxAudioBytes ?? DEFAULT_MAX_AUDIO_BYTES;
  // A stream's media frames as Twilio sends them are read in place; any other frame takes the general path.
  if (Buffer.isBuffer(raw) && options.expectedStreamSid !== undefined && raw.byteLength <= maxBytes) {
    const media = scanTwilioMediaFrame(raw, options.expectedStreamSid, maxPayloadChars(maxAudioBytes));
    if (media) return { ok: true, message: media };
  }
  const text = typeof raw === "string" ? raw : rawToString(raw, maxBytes);
  if (text === undefined || text.length > maxBytes) {
    return reject("oversized", `Frame exceeds ${maxBytes} bytes.`, { maxBytes });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return reject("bad_json", "Frame is not valid JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return reject("not_an_object", "Frame is not a JSON object.");
  }
  const event = (value as { event?: unknown }).event;
  if (typeof event !== "string" || !Object.hasOwn(SCHEMAS, event)) {
    return reject("unknown_event", `Unknown event ${JSON.stringify(String(event)).slice(0, 64)}.`);
  }
  // `media` is 50 frames/s per call: checked by hand (the same rules as TwilioMediaSchema); anything the
  // fast check does not accept goes through the schema, which names the failing field.
  // `mark` echoes come every ~100 ms of answer: the same by-hand check.
  const fast =
    event === "media"
      ? mediaFast(value as Record<string, unknown>)
      : event === "mark"
        ? markFast(value as Record<string, unknown>)
        : undefined;
  const parsed = fast
    ? { success: true as const, data: fast }
    : SCHEMAS[event as TwilioStreamEvent].safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join(".") ?? "";
    return reject("invalid_message", `Invalid ${event} message: ${path} ${issue?.message ?? ""}`.trim(), {
      event,
      path,
    });
  }
  const message = parsed.data as
    Exclude<TwilioStreamMessage, TwilioMediaMessage> | z.infer<typeof TwilioMediaSchema>;
  if (message.event !== "connected") {
    const expected = options.expectedStreamSid;
    const sids =
      message.event === "start" ? [message.streamSid, message.start.streamSid] : [message.streamSid];
    if (message.event === "start" && message.streamSid !== message.start.streamSid) {
      return reject("wrong_stream_sid", "start.streamSid differs from the message's streamSid.", { event });
    }
    if (expected !== undefined && sids.some((s) => s !== expected)) {
      return reject("wrong_stream_sid", "Message belongs to another stream.", { event });
    }
  }
  if (message.event === "media") {
    const payload = message.media.payload;
    if (payload.length > maxPayloadChars(maxAudioBytes)) {
      return reject("oversized", `Media payload exceeds ${maxAudioBytes} bytes.`, { maxAudioBytes });
    }
    if (payload.length === 0 || !STRICT_BASE64.test(payload)) {
      return reject("bad_base64", "Media payload is not valid base64.");
    }
    const buf = Buffer.from(payload, "base64");
    const audio = new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    return { ok: true, message: { ...message, audio } };
  }
  return { ok: true, message };
}

/** Base64 characters of `maxAudioBytes` of audio. */
const maxPayloadChars = (maxAudioBytes: number): number => Math.ceil(maxAudioBytes / 3) * 4;

const DIGITS = /^\d{1,15}$/;
const isDigits = (v: unknown): v is string => typeof v === "string" && DIGITS.test(v);
const isSid = (v: unknown): v is string => typeof v === "string" && v.length >= 1 && v.length <= 64;

/** A well-formed media message as TwilioMediaSchema would return it, or undefined (then the schema decides). */
function mediaFast(v: Record<string, unknown>): z.infer<typeof TwilioMediaSchema> | undefined {
  const media = v["media"];
  if (typeof media !== "object" || media === null || Array.isArray(media)) return undefined;
  const { track, chunk, timestamp, payload } = media as Record<string, unknown>;
  if (track !== "inbound" && track !== "outbound") return undefined;
  if (!isDigits(chunk) || !isDigits(timestamp) || typeof payload !== "string") return undefined;
  const { sequenceNumber, streamSid } = v;
  if (!isDigits(sequenceNumber) || !isSid(streamSid)) return undefined;
  return { event: "media", sequenceNumber, streamSid, media: { track, chunk, timestamp, payload } };
}

/** A well-formed mark message as TwilioMarkSchema would return it, or undefined (then the schema decides). */
function markFast(v: Record<string, unknown>): z.infer<typeof TwilioMarkSchema> | undefined {
  const mark = v["mark"];
  if (typeof mark !== "object" || mark === null || Array.isArray(mark)) return undefined;
  const { name } = mark as Record<string, unknown>;
  const { sequenceNumber, streamSid } = v;
  if (typeof name !== "string" || !isDigits(sequenceNumber) || !isSid(streamSid)) return undefined;
  return { event: "mark", sequenceNumber, streamSid, mark: { name } };
}

function rawToString(raw: Buffer | ArrayBuffer | Buffer[], maxBytes: number): string | undefined {
  const size = Array.isArray(raw) ? raw.reduce((n, b) => n + b.byteLength, 0) : raw.byteLength;
  if (size > maxBytes) return undefined;
  if (Array.isArray(raw)) return Buffer.concat(raw).toString("utf8");
  return (raw instanceof ArrayBuffer ? Buffer.from(raw) : raw).toString("utf8");
}

// ---------------------------------------------------------------------------
// What we send (bidirectional streams only)
// ---------------------------------------------------------------------------

export interface TwilioOutboundMedia {
  event: "media";
  streamSid: string;
  media: { payload: string };
}
export interface TwilioOutboundMark {
  event: "mark";
  streamSid: string;
  mark: { name: string };
}
export interface TwilioOutboundClear {
  event: "clear";
  streamSid: string;
}
export type TwilioOutboundMessage = TwilioOutboundMedia | TwilioOutboundMark | TwilioOutboundClear;

/** A `media` frame: u-law 8 kHz audio, base64 (Twilio accepts any length). */
export function buildMediaMessage(streamSid: string | undefined, audio: Uint8Array): string {
  return mediaMessageBuilder(streamSid)(audio);
}

/**
 * `media` frames of one stream from a template: the sid is JSON-escaped once
 * and base64 needs no escaping, so each frame is one concatenation instead of
 * a JSON.stringify of a fresh object (the same text, byte for byte).
 */
export function mediaMessageBuilder(streamSid: string | undefined): (audio: Uint8Array) => string {
  // No sid yet: the key is left out, as JSON.stringify leaves out an undefined value.
  const sid = streamSid === undefined ? "" : `"streamSid":${JSON.stringify(streamSid)},`;
  const head = `{"event":"media",${sid}"media":{"payload":"`;
  return (audio) => `${head}${base64Of(audio)}"}}`;
}

/** A `mark`: Twilio echoes it with the same name once the audio sent before it has played (or was cleared). */
export function buildMarkMessage(streamSid: string, name: string): string {
  return JSON.stringify({ event: "mark", streamSid, mark: { name } } satisfies TwilioOutboundMark);
}

/** `clear`: Twilio drops the audio it buffered and echoes every pending mark. */
export function buildClearMessage(streamSid: string): string {
  return JSON.stringify({ event: "clear", streamSid } satisfies TwilioOutboundClear);
}

/** True when a start message announces the format Twilio documents for streams: u-law, 8 kHz, mono. */
export function isMulaw8kMono(format: TwilioStartMessage["start"]["mediaFormat"]): boolean {
  return format.encoding === "audio/x-mulaw" && format.sampleRate === 8000 && format.channels === 1;
}
