/**
 * One Vonage Voice API WebSocket, both ways, as Vonage's WebSocket guide
 * describes it:
 * - in: a first text message `{"event":"websocket:connected",
 *   "content-type":"audio/l16;rate=16000", ...headers}` (the NCCO's headers
 *   flattened to the top level: our stream token and call id), then binary
 *   messages of caller audio (16-bit little-endian PCM, 640 bytes = 20 ms at
 *   16 kHz), and text events: `websocket:dtmf {digit, duration}`,
 *   `websocket:notify {payload}` (a notify we sent has been reached in
 *   playback), `websocket:cleared` (a clear was done). Vonage may send other
 *   text events; they are ignored, as its guide asks;
 * - out: binary audio messages of 640 bytes, `{"action":"notify","payload":
 *   {"name"}}` (answered by `websocket:notify` with the same payload once the
 *   audio sent before it has played), `{"action":"clear"}` (drops the audio
 *   Vonage buffered, answered by `websocket:cleared`).
 * Vonage sends no stop: the call ends when it closes the socket.
 */
import { randomUUID } from "node:crypto";
import type { AudioFormat } from "../../core/index.js";
import type {
  CarrierFrameRejection,
  CarrierFrameResult,
  CarrierStreamCodec,
  CarrierStreamOptions,
} from "../carrier/carrier-protocol.js";

export const VONAGE_EVENTS = Object.freeze({
  connected: "websocket:connected",
  dtmf: "websocket:dtmf",
  notify: "websocket:notify",
  cleared: "websocket:cleared",
});

/**
 * Why a frame was refused (telephony stats, logs). Stable: listed in
 * docs/telephony.md; a retired reason is never reused.
 */
export type VonageFrameRejection =
  "oversized" | "bad_json" | "not_an_object" | "unknown_event" | "invalid_message" | "bad_audio";

const DIGIT = /^[0-9*#A-Da-d]$/;

function reject(reason: VonageFrameRejection, message: string): CarrierFrameResult {
  const rejection: CarrierFrameRejection = {
    reason,
    message,
    ...(reason === "oversized" ? { close: { code: 1009, reason: "frame too large" } } : {}),
  };
  return { ok: false, rejection };
}

/** `audio/l16;rate=16000` (any case, spaces allowed) as an AudioFormat; undefined for anything else. */
export function formatOfContentType(contentType: string): AudioFormat | undefined {
  const m = /^\s*audio\/l16\s*;\s*rate\s*=\s*(8000|16000)\s*$/i.exec(contentType);
  return m ? { encoding: "pcm16", sampleRate: Number(m[1]), channels: 1 } : undefined;
}

export function vonageStreamCodec(options: Pick<CarrierStreamOptions, "maxBytes">): CarrierStreamCodec {
  const maxBytes = options.maxBytes;
  let started = false;
  return {
    // Vonage sends no stop: it ends a stream by closing the socket normally; any other close may be a drop.
    ended: (code) => (code === 1000 ? "completed" : undefined),
    decode(data, isBinary) {
      const size = Array.isArray(data) ? data.reduce((n, b) => n + b.byteLength, 0) : data.byteLength;
      if (size > maxBytes) return reject("oversized", `Frame exceeds ${maxBytes} bytes.`);
      const bytes = Array.isArray(data)
        ? Buffer.concat(data)
        : data instanceof ArrayBuffer
          ? Buffer.from(data)
          : data;
      if (isBinary) {
        if (bytes.byteLength === 0 || bytes.byteLength % 2 !== 0)
          return reject("bad_audio", `Audio frame of ${bytes.byteLength} bytes is not whole 16-bit samples.`);
        return {
          ok: true,
          event: { type: "media", audio: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) },
        };
      }
      const result = decodeText(bytes.toString("utf8"), started);
      if (result.ok && result.event?.type === "start") started = true;
      return result;
    },
    media: (audio) => audio,
    mark: (name) => JSON.stringify({ action: "notify", payload: { name } }),
    clear: () => JSON.stringify({ action: "clear" }),
  };
}

function decodeText(text: string, started: boolean): CarrierFrameResult {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return reject("bad_json", "Frame is not valid JSON.");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return reject("not_an_object", "Frame is not a JSON object.");
  const msg = value as Record<string, unknown>;
  const event = msg["event"];
  if (typeof event !== "string") return reject("unknown_event", "Frame has no event.");
  switch (event) {
    case VONAGE_EVENTS.connected: {
      const start = connected(msg);
      // A first message without the call's headers can never become a call: closed at once, as any
      // carrier's stream without its token is (1008), not left open until the pre-start timer.
      if (!start.ok && !started)
        return {
          ok: false,
          rejection: { ...start.rejection, close: { code: 1008, reason: "stream headers missing" } },
        };
      return start;
    }
    case VONAGE_EVENTS.dtmf: {
      const digit = msg["digit"];
      if (typeof digit !== "string" || !DIGIT.test(digit))
        return reject("invalid_message", "Invalid websocket:dtmf message: digit is not one DTMF digit.");
      return { ok: true, event: { type: "dtmf", digit } };
    }
    case VONAGE_EVENTS.notify: {
      const payload = msg["payload"];
      const name =
        typeof payload === "object" && payload !== null
          ? (payload as Record<string, unknown>)["name"]
          : undefined;
      if (typeof name !== "string" || name.length === 0 || name.length > 256)
        return reject(
          "invalid_message",
          "Invalid websocket:notify message: payload.name is not a name we sent.",
        );
      return { ok: true, event: { type: "played", name } };
    }
    case VONAGE_EVENTS.cleared:
      // The notifies pending at the clear are answered by the playout's own clear: nothing to do here.
      return { ok: true, event: undefined };
    default:
      // "Various JSON text-based messages may be sent at any point in the call" (Vonage): not ours to refuse.
      return { ok: true, event: undefined };
  }
}

/** `websocket:connected`: the stream's start. The call id is ours (a header we put in the NCCO), the token too. */
function connected(msg: Record<string, unknown>): CarrierFrameResult {
  const contentType = msg["content-type"];
  if (typeof contentType !== "string")
    return reject("invalid_message", "Invalid websocket:connected message: content-type is missing.");
  const parameters: Record<string, string> = {};
  for (const [name, value] of Object.entries(msg))
    if (name !== "event" && name !== "content-type" && typeof value === "string") parameters[name] = value;
  const callId = parameters["callId"];
  if (callId === undefined || callId.length === 0 || callId.length > 128)
    return reject("invalid_message", "Invalid websocket:connected message: no callId header.");
  return {
    ok: true,
    event: {
      type: "start",
      callId,
      // Vonage names no stream: one id per socket, for logs.
      streamId: `vonage-${randomUUID()}`,
      format: formatOfContentType(contentType),
      formatName: contentType.slice(0, 64),
      parameters,
    },
  };
}
