/**
 * Telnyx (TeXML) as a CarrierProtocol: Ed25519-signed webhooks
 * (`telnyx-signature-ed25519` over `timestamp|body`), TeXML
 * `<Connect><Stream bidirectionalMode="rtp">` answers, media-streaming
 * frames (PCMU 8 kHz, marks sent back after playback, `clear`, media
 * reordered by chunk), and the REST API (TeXML dial, Call Control hang-up
 * and transfer). The routes live at `/telephony/telnyx/{voice,stream,status}`.
 *
 * Call ids: a TeXML webhook's `CallSid` is the call's `call_control_id`,
 * which is also what the stream's `start.call_control_id` names and what
 * Call Control commands take.
 */
import { ULAW_8K } from "../../core/index.js";
import type {
  CarrierFrameResult,
  CarrierProtocol,
  CarrierStreamCodec,
  CarrierStreamOptions,
  CarrierWebhookRequest,
} from "../carrier/carrier-protocol.js";
import { MediaReorder } from "./media-reorder.js";
import { clearFrame, markFrame, mediaFrame, parseTelnyxFrame } from "./media-stream-frames.js";
import { parseTelnyxAmd } from "./telnyx-amd.js";
import { TelnyxRestClient } from "./telnyx-rest-client.js";
import { checkTelnyxSignature, telnyxPublicKey } from "./telnyx-signature.js";
import { connectStreamTexml } from "./texml.js";

export const TELNYX_PATHS = Object.freeze({
  voice: "/telephony/telnyx/voice",
  stream: "/telephony/telnyx/stream",
  status: "/telephony/telnyx/status",
  briefing: "/telephony/telnyx/briefing",
});

/** TeXML's terminal call statuses (status callbacks): the call is over. */
const TERMINAL_STATUSES = new Set(["completed", "busy", "no-answer", "canceled", "failed"]);

/** `telephony.telnyx` as the protocol needs it. */
export interface TelnyxProtocolOptions {
  /** TELNYX_PUBLIC_KEY: base64 Ed25519 public key; verifies webhooks. Unset: unsigned. */
  publicKey?: string | undefined;
  /** TELNYX_API_KEY: enables the REST client. */
  apiKey?: string | undefined;
  /** TeXML application connection id outbound calls are placed from. */
  connectionId?: string | undefined;
  /** The account's id (`account_sid` of the TeXML REST API): with connectionId, enables outbound calls. */
  accountSid?: string | undefined;
  /** REST API base. Default "https://api.telnyx.com". */
  apiBaseUrl?: string | undefined;
  /** Largest clock distance of telnyx-timestamp, seconds. Default 300. */
  timestampToleranceS?: number | undefined;
  defaultFrom?: string | undefined;
  /** Clock, ms (tests). Default Date.now. */
  now?: () => number;
}

export function telnyxProtocol(options: TelnyxProtocolOptions): CarrierProtocol {
  const publicKey = options.publicKey ? telnyxPublicKey(options.publicKey) : undefined;
  const toleranceS = options.timestampToleranceS ?? 300;
  const now = options.now ?? Date.now;
  const rest = options.apiKey
    ? new TelnyxRestClient({
        apiKey: options.apiKey,
        connectionId: options.connectionId,
        accountSid: options.accountSid,
        baseUrl: options.apiBaseUrl,
      })
    : undefined;
  return Object.freeze({
    id: "telnyx",
    name: "Telnyx",
    paths: TELNYX_PATHS,
    lineFormat: ULAW_8K,
    acknowledgements: "marks",
    // Telnyx plays RTP media messages of 20 ms to 30 s: a provider delta goes out as one message per mark interval.
    maxFramesPerMessage: 10,
    signed: publicKey !== undefined,
    rest,
    // The transfer command's audio_url: a WAV Telnyx plays to the callee, fetched unsigned.
    briefingAudio: true,
    documentAuth: "url",
    defaultFrom: options.defaultFrom,
    missingSettings: "TELNYX_PUBLIC_KEY, TELNYX_API_KEY and PUBLIC_URL",

    authenticate(request: CarrierWebhookRequest) {
      if (publicKey === undefined) return "refused";
      const verdict = checkTelnyxSignature({
        publicKey,
        headers: request.headers,
        rawBody: request.rawBody,
        nowMs: now(),
        toleranceS,
      });
      return verdict === "ok" ? "ok" : "refused";
    },

    inboundCall(request: CarrierWebhookRequest) {
      const p = request.params;
      const callId = single(p["CallSid"]);
      if (callId === undefined) return undefined;
      return {
        callId,
        accountId: single(p["AccountSid"]),
        from: single(p["From"]),
        to: single(p["To"]),
        direction: single(p["Direction"]),
      };
    },

    callStatus(request: CarrierWebhookRequest) {
      const p = request.params;
      const callId = single(p["CallSid"]);
      const status = single(p["CallStatus"]);
      if (callId === undefined || status === undefined) return undefined;
      return { callId, status, terminal: TERMINAL_STATUSES.has(status) };
    },

    machineDetection: (request: CarrierWebhookRequest) => parseTelnyxAmd(request.params),

    answer(stream) {
      return { body: connectStreamTexml(stream), contentType: "text/xml" };
    },

    openStream: telnyxStreamCodec,
  } satisfies CarrierProtocol);
}

/**
 * One media stream's wire: parses what Telnyx sends (holding the stream's id
 * from `start` and putting caller audio back in order), builds what we send.
 */
export function telnyxStreamCodec(options: Pick<CarrierStreamOptions, "maxBytes">): CarrierStreamCodec {
  let streamId: string | undefined;
  const reorder = new MediaReorder();
  return {
    decode(data, isBinary): CarrierFrameResult {
      if (isBinary)
        return {
          ok: false,
          rejection: { reason: "binary_frame", message: "binary frames are not part of the protocol" },
        };
      const parsed = parseTelnyxFrame(data, { maxBytes: options.maxBytes, streamId });
      if (!parsed.ok)
        return {
          ok: false,
          rejection: {
            reason: parsed.reason,
            message: parsed.message,
            ...(parsed.reason === "oversized" ? { close: { code: 1009, reason: "frame too large" } } : {}),
          },
        };
      const frame = parsed.frame;
      switch (frame.event) {
        case "connected":
          return { ok: true, event: undefined };
        case "start": {
          streamId = frame.streamId;
          const f = frame.start.media_format;
          const pcmu = f.encoding.toUpperCase() === "PCMU" && f.sample_rate === 8000 && f.channels === 1;
          return {
            ok: true,
            event: {
              type: "start",
              callId: frame.start.call_control_id,
              streamId: frame.streamId,
              format: pcmu ? ULAW_8K : undefined,
              formatName: `${f.encoding} ${f.sample_rate} Hz ${f.channels === 1 ? "mono" : `${f.channels} channels`}`,
              parameters: frame.start.custom_parameters ?? {},
            },
          };
        }
        case "media": {
          // The caller's track only (a both_tracks stream would also echo what the call plays).
          if (frame.track !== "inbound") return { ok: true, event: undefined };
          const audio = reorder.push(frame.chunk, frame.audio);
          return { ok: true, event: audio === undefined ? undefined : { type: "media", audio } };
        }
        case "mark":
          return { ok: true, event: { type: "played", name: frame.name } };
        case "dtmf":
          return { ok: true, event: { type: "dtmf", digit: frame.digit } };
        case "stop":
          return { ok: true, event: { type: "stop" } };
        case "error":
          // Telnyx refused something we sent (or the stream failed): counted and logged, the call goes on.
          return {
            ok: false,
            rejection: {
              reason: "carrier_error",
              message: `Telnyx stream error ${frame.code}: ${frame.detail}`,
            },
          };
      }
    },
    media: mediaFrame,
    mark: markFrame,
    clear: clearFrame,
  };
}

function single(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
