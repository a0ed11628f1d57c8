/**
 * The Telnyx media-streaming WebSocket protocol ("Stream call media over
 * WebSocket"): a parser for every frame Telnyx sends (connected, start,
 * media, dtmf, mark, stop, error) and builders for the frames we send on a
 * bidirectional RTP stream (media, mark, clear). Telnyx's numbers
 * (sequence_number, chunk, timestamp) are decimal strings; numbers are
 * accepted too. Unknown extra fields are ignored, so an additive change on
 * Telnyx's side does not break calls.
 */
import { z } from "zod";
import { STRICT_BASE64, base64Of } from "../carrier/base64.js";

const digits = z.union([
  z.string().regex(/^\d{1,15}$/, "a decimal string"),
  z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
]);
const id = z.string().min(1).max(256);

const ConnectedSchema = z.object({ event: z.literal("connected"), version: z.string().optional() });

const StartSchema = z.object({
  event: z.literal("start"),
  sequence_number: digits.optional(),
  stream_id: id,
  start: z.object({
    call_control_id: id,
    user_id: z.string().optional(),
    call_session_id: z.string().optional(),
    from: z.string().optional(),
    to: z.string().optional(),
    client_state: z.string().nullish(),
    /** Our TeXML `<Parameter>`s; scalars other than strings are taken as their text. */
    custom_parameters: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]).transform(String))
      .nullish(),
    media_format: z.object({
      encoding: z.string(),
      sample_rate: z.number().int().positive(),
      channels: z.number().int().positive(),
    }),
  }),
});

const MediaSchema = z.object({
  event: z.literal("media"),
  sequence_number: digits.optional(),
  stream_id: id.optional(),
  media: z.object({
    track: z.enum(["inbound", "outbound"]),
    chunk: digits,
    timestamp: digits.optional(),
    payload: z.string(),
  }),
});

const DtmfSchema = z.object({
  event: z.literal("dtmf"),
  sequence_number: digits.optional(),
  stream_id: id.optional(),
  dtmf: z.object({ digit: z.string().regex(/^[0-9*#A-Da-d]$/, "one DTMF digit") }),
});

const MarkSchema = z.object({
  event: z.literal("mark"),
  sequence_number: digits.optional(),
  stream_id: id.optional(),
  mark: z.object({ name: z.string() }),
});

const StopSchema = z.object({
  event: z.literal("stop"),
  sequence_number: digits.optional(),
  stream_id: id.optional(),
});

const ErrorSchema = z.object({
  event: z.literal("error"),
  stream_id: id.optional(),
  payload: z
    .object({
      code: z.union([z.number(), z.string()]).optional(),
      title: z.string().optional(),
      detail: z.string().optional(),
    })
    .optional(),
});

const SCHEMAS = {
  connected: ConnectedSchema,
  start: StartSchema,
  media: MediaSchema,
  dtmf: DtmfSchema,
  mark: MarkSchema,
  stop: StopSchema,
  error: ErrorSchema,
} as const;

export type TelnyxStartFrame = z.infer<typeof StartSchema>;

/** A frame from Telnyx, validated; media with its chunk number and decoded payload. */
export type TelnyxFrame =
  | { readonly event: "connected" }
  | { readonly event: "start"; readonly streamId: string; readonly start: TelnyxStartFrame["start"] }
  | {
      readonly event: "media";
      readonly track: "inbound" | "outbound";
      readonly chunk: number;
      readonly audio: Uint8Array;
    }
  | { readonly event: "dtmf"; readonly digit: string }
  | { readonly event: "mark"; readonly name: string }
  | { readonly event: "stop" }
  | { readonly event: "error"; readonly code: string; readonly detail: string };

/**
 * Why a frame was refused. Stable: listed in docs/telephony.md; a retired
 * reason is never reused.
 */
export type TelnyxFrameRejection =
  | "binary_frame"
  | "oversized"
  | "bad_json"
  | "not_an_object"
  | "unknown_event"
  | "invalid_message"
  | "bad_base64"
  | "wrong_stream_id";

export type ParseTelnyxFrameResult =
  | { readonly ok: true; readonly frame: TelnyxFrame }
  | { readonly ok: false; readonly reason: TelnyxFrameRejection; readonly message: string };

export interface ParseTelnyxFrameOptions {
  /** Largest frame accepted, bytes. */
  maxBytes: number;
  /** The stream's id once `start` arrived: a frame naming another stream is refused. */
  streamId?: string | undefined;
  /** Largest decoded media payload, bytes. Default 16 000 (2 s of PCMU; Telnyx sends 160). */
  maxAudioBytes?: number;
}

const DEFAULT_MAX_AUDIO_BYTES = 16_000;
const DIGITS = /^\d{1,15}$/;

const reject = (reason: TelnyxFrameRejection, message: string): ParseTelnyxFrameResult => ({
  ok: false,
  reason,
  message,
});

/** Parses one text frame from Telnyx. Never throws. */
export function parseTelnyxFrame(
  raw: Buffer | ArrayBuffer | Buffer[] | string,
  options: ParseTelnyxFrameOptions,
): ParseTelnyxFrameResult {
  const bytes = typeof raw === "string" ? Buffer.byteLength(raw) : byteLength(raw);
  if (bytes > options.maxBytes) return reject("oversized", `Frame exceeds ${options.maxBytes} bytes.`);
  const text = typeof raw === "string" ? raw : toText(raw);
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
  // `media` is 50 frames/s per call: checked by hand; what the fast check does not take goes through the schema.
  const fast = event === "media" ? mediaFast(value as Record<string, unknown>) : undefined;
  const parsed = fast
    ? ({ success: true, data: fast } as const)
    : SCHEMAS[event as keyof typeof SCHEMAS].safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.join(".") ?? "";
    return reject("invalid_message", `Invalid ${event} frame: ${path} ${issue?.message ?? ""}`.trim());
  }
  const frame = parsed.data as z.infer<(typeof SCHEMAS)[keyof typeof SCHEMAS]>;
  const named = "stream_id" in frame ? frame.stream_id : undefined;
  if (
    frame.event !== "start" &&
    named !== undefined &&
    options.streamId !== undefined &&
    named !== options.streamId
  )
    return reject("wrong_stream_id", "Frame belongs to another stream.");
  switch (frame.event) {
    case "connected":
      return { ok: true, frame: { event: "connected" } };
    case "start":
      return { ok: true, frame: { event: "start", streamId: frame.stream_id, start: frame.start } };
    case "media": {
      const payload = frame.media.payload;
      const maxAudioBytes = options.maxAudioBytes ?? DEFAULT_MAX_AUDIO_BYTES;
      if (payload.length > Math.ceil(maxAudioBytes / 3) * 4)
        return reject("oversized", `Media payload exceeds ${maxAudioBytes} bytes.`);
      if (payload.length === 0 || !STRICT_BASE64.test(payload))
        return reject("bad_base64", "Media payload is not valid base64.");
      const buf = Buffer.from(payload, "base64");
      return {
        ok: true,
        frame: {
          event: "media",
          track: frame.media.track,
          chunk: Number(frame.media.chunk),
          audio: new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength),
        },
      };
    }
    case "dtmf":
      return { ok: true, frame: { event: "dtmf", digit: frame.dtmf.digit.toUpperCase() } };
    case "mark":
      return { ok: true, frame: { event: "mark", name: frame.mark.name } };
    case "stop":
      return { ok: true, frame: { event: "stop" } };
    case "error":
      return {
        ok: true,
        frame: {
          event: "error",
          code: String(frame.payload?.code ?? "unknown"),
          detail: `${frame.payload?.title ?? ""} ${frame.payload?.detail ?? ""}`.trim().slice(0, 200),
        },
      };
  }
}

/** A well-formed media frame as MediaSchema would return it, or undefined (then the schema decides). */
function mediaFast(v: Record<string, unknown>): z.infer<typeof MediaSchema> | undefined {
  const media = v["media"];
  if (typeof media !== "object" || media === null || Array.isArray(media)) return undefined;
  const { track, chunk, timestamp, payload } = media as Record<string, unknown>;
  if (track !== "inbound" && track !== "outbound") return undefined;
  if (!isDigits(chunk) || (timestamp !== undefined && !isDigits(timestamp))) return undefined;
  if (typeof payload !== "string") return undefined;
  const seq = v["sequence_number"];
  if (seq !== undefined && !isDigits(seq)) return undefined;
  const streamId = v["stream_id"];
  if (
    streamId !== undefined &&
    (typeof streamId !== "string" || streamId.length < 1 || streamId.length > 256)
  )
    return undefined;
  return v as z.infer<typeof MediaSchema>;
}

function isDigits(v: unknown): boolean {
  return typeof v === "string" ? DIGITS.test(v) : typeof v === "number" && Number.isSafeInteger(v) && v >= 0;
}

function byteLength(raw: Buffer | ArrayBuffer | Buffer[]): number {
  if (Array.isArray(raw)) return raw.reduce((n, b) => n + b.byteLength, 0);
  return raw.byteLength;
}

function toText(raw: Buffer | ArrayBuffer | Buffer[]): string {
  if (Array.isArray(raw)) return Buffer.concat(raw).toString("utf8");
  if (raw instanceof ArrayBuffer) return Buffer.from(raw).toString("utf8");
  return raw.toString("utf8");
}

// What we send ----------------------------------------------------------------

/** Assistant audio (PCMU bytes) as a `media` frame. */
export function mediaFrame(audio: Uint8Array): string {
  const payload = base64Of(audio);
  return `{"event":"media","media":{"payload":"${payload}"}}`;
}

/** A `mark`: Telnyx sends it back once the audio sent before it has played (at once when none is queued). */
export function markFrame(name: string): string {
  return JSON.stringify({ event: "mark", mark: { name } });
}

/** `clear`: Telnyx stops playback, drops the queued audio and sends back the queued marks. */
export function clearFrame(): string {
  return '{"event":"clear"}';
}
