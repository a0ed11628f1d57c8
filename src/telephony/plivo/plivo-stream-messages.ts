/**
 * Plivo Audio Streams over WebSocket: a parser for what Plivo sends on a
 * bidirectional `<Stream>` (`start`, `media`, `dtmf`, `playedStream`,
 * `clearedAudio`) and builders for what we send (`playAudio`, `checkpoint`,
 * `clearAudio`). Shapes follow Plivo's "Stream Event Protocol"
 * and "Audio Streaming Protocol Reference" pages: `sequenceNumber` and
 * `media.chunk` are numbers, `media.timestamp` a string; `extra_headers` is
 * a string of `name=value` pairs separated by `;` (or `,`, as the XML
 * attribute writes them). There is no `connected` and no `stop`: Plivo just
 * closes the socket at the end. Unknown extra fields are ignored.
 */
import { z } from "zod";
import { STRICT_BASE64, base64Of } from "../carrier/base64.js";

/** Why a frame was refused. Stable: listed in docs/telephony.md; a retired reason is never reused. */
export type PlivoMessageRejection =
  | "oversized"
  | "bad_json"
  | "not_an_object"
  | "unknown_event"
  | "invalid_message"
  | "bad_base64"
  | "wrong_stream_id";

const seq = z.number().int().nonnegative();
const id = z.string().min(1).max(64);

const StartSchema = z.object({
  event: z.literal("start"),
  sequenceNumber: seq,
  start: z.object({
    callId: id,
    streamId: id,
    accountId: z.string().max(64).optional(),
    tracks: z.array(z.string()).optional(),
    mediaFormat: z.object({
      encoding: z.string().max(64),
      sampleRate: z.number().int().positive(),
    }),
  }),
  extra_headers: z.string().max(4096).optional(),
});

const DtmfSchema = z.object({
  event: z.literal("dtmf"),
  sequenceNumber: seq,
  streamId: id,
  dtmf: z.object({
    track: z.string().optional(),
    digit: z.string().regex(/^[0-9*#A-Da-d]$/, "one DTMF digit"),
    timestamp: z.string().optional(),
  }),
});

const PlayedStreamSchema = z.object({
  event: z.literal("playedStream"),
  sequenceNumber: seq,
  streamId: id,
  name: z.string().max(256),
});

const ClearedAudioSchema = z.object({
  event: z.literal("clearedAudio"),
  sequenceNumber: seq,
  streamId: id,
});

const MediaSchema = z.object({
  event: z.literal("media"),
  sequenceNumber: seq,
  streamId: id,
  media: z.object({
    track: z.string(),
    timestamp: z.string().optional(),
    chunk: z.number().int().nonnegative().optional(),
    payload: z.string(),
  }),
});

export type PlivoStartMessage = z.infer<typeof StartSchema>;

export type PlivoStreamMessage =
  | (Omit<PlivoStartMessage, "extra_headers"> & { readonly headers: Readonly<Record<string, string>> })
  | { readonly event: "media"; readonly streamId: string; readonly audio: Uint8Array }
  | z.infer<typeof DtmfSchema>
  | z.infer<typeof PlayedStreamSchema>
  | z.infer<typeof ClearedAudioSchema>;

const SCHEMAS = {
  start: StartSchema,
  media: MediaSchema,
  dtmf: DtmfSchema,
  playedStream: PlayedStreamSchema,
  clearedAudio: ClearedAudioSchema,
} as const;

export type ParsePlivoResult =
  | { readonly ok: true; readonly message: PlivoStreamMessage }
  | { readonly ok: false; readonly reason: PlivoMessageRejection; readonly message: string };

export interface ParsePlivoOptions {
  /** Largest frame, bytes. */
  maxBytes: number;
  /** The stream's id once `start` arrived; a later message naming another is refused. */
  streamId?: string | undefined;
  /** Largest decoded media payload, bytes. Default 16 000 (2 s of u-law 8 kHz; Plivo sends 20 ms frames). */
  maxAudioBytes?: number;
}

const DEFAULT_MAX_AUDIO_BYTES = 16_000;

const reject = (reason: PlivoMessageRejection, message: string): ParsePlivoResult => ({
  ok: false,
  reason,
  message,
});

/** Parses one text frame from Plivo. Never throws. */
export function parsePlivoMessage(
  raw: string | Buffer | ArrayBuffer | Buffer[],
  options: ParsePlivoOptions,
): ParsePlivoResult {
  const text = typeof raw === "string" ? raw : rawToString(raw, options.maxBytes);
  if (text === undefined || text.length > options.maxBytes)
    return reject("oversized", `Frame exceeds ${options.maxBytes} bytes.`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return reject("bad_json", "Frame is not valid JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return reject("not_an_object", "Frame is not a JSON object.");
  const event = (value as { event?: unknown }).event;
  if (typeof event !== "string" || !Object.hasOwn(SCHEMAS, event))
    return reject("unknown_event", `Unknown event ${JSON.stringify(String(event)).slice(0, 64)}.`);
  const parsed = SCHEMAS[event as keyof typeof SCHEMAS].safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join(".") ?? "";
    return reject("invalid_message", `Invalid ${event} message: ${path} ${issue?.message ?? ""}`.trim());
  }
  const message = parsed.data;
  if (message.event === "start") {
    const { extra_headers: extra, ...rest } = message;
    return { ok: true, message: { ...rest, headers: parseExtraHeaders(extra ?? "") } };
  }
  if (options.streamId !== undefined && message.streamId !== options.streamId)
    return reject("wrong_stream_id", "Message belongs to another stream.");
  if (message.event === "media") {
    const payload = message.media.payload;
    const maxAudioBytes = options.maxAudioBytes ?? DEFAULT_MAX_AUDIO_BYTES;
    if (payload.length > Math.ceil(maxAudioBytes / 3) * 4)
      return reject("oversized", `Media payload exceeds ${maxAudioBytes} bytes.`);
    if (payload.length === 0 || !STRICT_BASE64.test(payload))
      return reject("bad_base64", "Media payload is not valid base64.");
    const buf = Buffer.from(payload, "base64");
    return {
      ok: true,
      message: {
        event: "media",
        streamId: message.streamId,
        audio: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength),
      },
    };
  }
  return { ok: true, message };
}

/**
 * `extra_headers` as pairs: `a=1;b=2` (what the start frame carries) or
 * `a=1,b=2` (how the XML attribute writes them), spaces around items
 * ignored, an optional surrounding `{}` dropped. Items without `=` are
 * skipped; the first of a repeated name wins.
 */
export function parseExtraHeaders(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const body = text.trim().replace(/^\{(.*)\}$/s, "$1");
  for (const item of body.split(/[;,]/)) {
    const eq = item.indexOf("=");
    if (eq <= 0) continue;
    const name = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (name && !Object.hasOwn(out, name)) out[name] = value;
  }
  return out;
}

function rawToString(raw: Buffer | ArrayBuffer | Buffer[], maxBytes: number): string | undefined {
  const size = Array.isArray(raw) ? raw.reduce((n, b) => n + b.byteLength, 0) : raw.byteLength;
  if (size > maxBytes) return undefined;
  if (Array.isArray(raw)) return Buffer.concat(raw).toString("utf8");
  return (raw instanceof ArrayBuffer ? Buffer.from(raw) : raw).toString("utf8");
}

// ---------------------------------------------------------------------------
// What we send
// ---------------------------------------------------------------------------

/** `playAudio`: u-law 8 kHz audio, base64 (Plivo plays it in order after what it buffered). */
export function buildPlayAudio(audio: Uint8Array): string {
  const payload = base64Of(audio);
  return JSON.stringify({
    event: "playAudio",
    media: { contentType: "audio/x-mulaw", sampleRate: 8000, payload },
  });
}

/** `checkpoint`: Plivo answers `playedStream` with the same name once the audio sent before it has played. */
export function buildCheckpoint(streamId: string, name: string): string {
  return JSON.stringify({ event: "checkpoint", streamId, name });
}

/** `clearAudio`: Plivo drops the audio it buffered and answers `clearedAudio` (pending checkpoints are not answered). */
export function buildClearAudio(streamId: string): string {
  return JSON.stringify({ event: "clearAudio", streamId });
}
