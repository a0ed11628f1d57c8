/**
 * Plivo as a CarrierProtocol: V3-signed webhooks (`X-Plivo-Signature-V3`),
 * Plivo XML `<Stream bidirectional>` answers, Audio Streams frames
 * (checkpoints answered by `playedStream`, `clearAudio`), a V3-signed stream
 * handshake, and the Voice REST API. The routes live at
 * `/telephony/plivo/{answer,stream,status}`.
 *
 * Call ids: an inbound call is its CallUUID throughout. A call placed here is
 * known by the request_uuid the REST API returned (the only id there is while
 * it rings): its answer request (`Direction=outbound`) carries it as
 * `RequestUUID` / `ALegRequestUUID`, the answer document hands it to the
 * stream (`callIdHex`), and the stream's start, which names the CallUUID,
 * teaches the REST client the pair so a hang-up reaches the live call.
 *
 * Plivo sends no `stop`: the socket closes when the call or the stream ends,
 * and Plivo never reopens a stream (with keepCallAlive, the call moves on to
 * the next XML element, and there is none). So a close after the start ends
 * the call at once: a clean close (1000, or 1005: a close frame without a
 * code) is the call completing, any other close (1006: the TCP connection
 * dropped) a lost connection; no reconnect grace is held for a stream that will
 * not come back.
 */
import { ULAW_8K } from "../../core/index.js";
import type {
  CarrierProtocol,
  CarrierStreamCodec,
  CarrierStreamOptions,
  CarrierWebhookRequest,
} from "../carrier/carrier-protocol.js";
import { parsePlivoAmd } from "./plivo-amd.js";
import { PlivoCallIds, PlivoRestClient } from "./plivo-rest-client.js";
import { briefingXml, transferXml } from "./plivo-transfer-xml.js";
import { isValidPlivoSignature, type PlivoParams } from "./plivo-signature.js";
import {
  buildCheckpoint,
  buildClearAudio,
  buildPlayAudio,
  parsePlivoMessage,
} from "./plivo-stream-messages.js";
import { streamParametersOf, streamXml } from "./plivo-xml.js";

export const PLIVO_PATHS = Object.freeze({
  voice: "/telephony/plivo/answer",
  stream: "/telephony/plivo/stream",
  status: "/telephony/plivo/status",
  briefing: "/telephony/plivo/briefing",
  transfer: "/telephony/plivo/transfer",
});

/** Plivo's CallStatus values that end a call (hangup_url): the call is over. */
const TERMINAL_STATUSES = new Set(["completed", "busy", "failed", "timeout", "no-answer", "cancel"]);

/** Closes that end a stream cleanly (1000, or a close frame without a code): the call is over. Others: the connection was lost. */
const CLEAN_CLOSES = new Set([1000, 1005]);

/** `telephony.plivo` as the protocol needs it. */
export interface PlivoProtocolOptions {
  /** PLIVO_AUTH_TOKEN: HMAC key of the V3 signature and REST password. Empty: unsigned. */
  authToken?: string | undefined;
  /** PLIVO_AUTH_ID: with the auth token, enables the REST client. */
  authId?: string | undefined;
  /** REST API base. Default "https://api.plivo.com". */
  apiBaseUrl?: string | undefined;
  defaultFrom?: string | undefined;
}

export function plivoProtocol(options: PlivoProtocolOptions): CarrierProtocol {
  const authToken = options.authToken ?? "";
  const ids = new PlivoCallIds();
  const rest =
    options.authId && authToken
      ? new PlivoRestClient({
          authId: options.authId,
          authToken,
          ids,
          ...(options.apiBaseUrl ? { baseUrl: options.apiBaseUrl } : {}),
        })
      : undefined;
  return Object.freeze({
    id: "plivo",
    name: "Plivo",
    paths: PLIVO_PATHS,
    lineFormat: ULAW_8K,
    acknowledgements: "marks",
    signed: authToken.length > 0,
    rest,
    // Transfers: aleg_url -> <Dial confirmSound> -> <Speak> (plivo-transfer-xml.ts), under our URL signature.
    documentAuth: "url",
    briefing: (text: string) => ({ body: briefingXml(text), contentType: "text/xml" }),
    transferDocument: (destination: string, briefingUrl: string | undefined) => ({
      body: transferXml(destination, briefingUrl),
      contentType: "text/xml",
    }),
    defaultFrom: options.defaultFrom,
    missingSettings: "PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN and PUBLIC_URL",

    authenticate(request: CarrierWebhookRequest) {
      const { signature, nonce } = signatureHeaders(request.headers);
      return isValidPlivoSignature(authToken, signature, nonce, "POST", request.url, formParams(request))
        ? "ok"
        : "refused";
    },

    inboundCall(request: CarrierWebhookRequest) {
      const p = formParams(request);
      const callId = callIdOf(p);
      if (callId === undefined) return undefined;
      return { callId, from: single(p["From"]), to: single(p["To"]), direction: single(p["Direction"]) };
    },

    callStatus(request: CarrierWebhookRequest) {
      const p = formParams(request);
      const callId = callIdOf(p);
      const status = single(p["CallStatus"]);
      if (callId === undefined || status === undefined) return undefined;
      return { callId, status, terminal: TERMINAL_STATUSES.has(status) };
    },

    machineDetection: (request: CarrierWebhookRequest) => parsePlivoAmd(formParams(request)),

    answer(stream) {
      return { body: streamXml(stream), contentType: "text/xml" };
    },

    openStream: (streamOptions) => plivoStreamCodec(streamOptions, { authToken, ids }),
  } satisfies CarrierProtocol);
}

/**
 * One Audio Stream's wire. With an auth token, the upgrade request must carry
 * Plivo's V3 signature of the stream URL (GET): a socket without it is
 * refused at its first frame (1008), before any token is looked at.
 */
export function plivoStreamCodec(
  options: Pick<CarrierStreamOptions, "maxBytes"> & Partial<CarrierStreamOptions>,
  auth: { authToken: string; ids?: PlivoCallIds } = { authToken: "" },
): CarrierStreamCodec {
  const handshakeOk = auth.authToken === "" || handshakeSigned(auth.authToken, options);
  let streamId: string | undefined;
  return {
    decode(data, isBinary) {
      if (!handshakeOk)
        return {
          ok: false,
          rejection: {
            reason: "bad_signature",
            message: "the stream handshake is not signed by Plivo",
            close: { code: 1008, reason: "signature rejected" },
          },
        };
      if (isBinary)
        return {
          ok: false,
          rejection: { reason: "binary_frame", message: "binary frames are not part of the protocol" },
        };
      const parsed = parsePlivoMessage(data, { maxBytes: options.maxBytes, streamId });
      if (!parsed.ok)
        return {
          ok: false,
          rejection: {
            reason: parsed.reason,
            message: parsed.message,
            ...(parsed.reason === "oversized" ? { close: { code: 1009, reason: "frame too large" } } : {}),
          },
        };
      const msg = parsed.message;
      switch (msg.event) {
        case "start": {
          if (streamId !== undefined)
            return { ok: false, rejection: { reason: "duplicate_start", message: "start after start" } };
          streamId = msg.start.streamId;
          const parameters = streamParametersOf(msg.headers);
          // The call we tied the stream to (a dial's request_uuid), else the CallUUID Plivo names.
          const callId = parameters["callId"] || msg.start.callId;
          auth.ids?.link(callId, msg.start.callId);
          const f = msg.start.mediaFormat;
          return {
            ok: true,
            event: {
              type: "start",
              callId,
              streamId,
              format: f.encoding === "audio/x-mulaw" && f.sampleRate === 8000 ? ULAW_8K : undefined,
              formatName: `${f.encoding} ${f.sampleRate} Hz`,
              parameters,
            },
          };
        }
        case "media":
          return { ok: true, event: { type: "media", audio: msg.audio } };
        case "playedStream":
          return { ok: true, event: { type: "played", name: msg.name } };
        case "clearedAudio":
          // The playout dropped its pending checkpoints when it cleared; Plivo answers none of them.
          return { ok: true, event: undefined };
        case "dtmf":
          return { ok: true, event: { type: "dtmf", digit: msg.dtmf.digit } };
      }
    },
    media: (audio) => buildPlayAudio(audio),
    mark: (name) => buildCheckpoint(streamId ?? "", name),
    clear: () => buildClearAudio(streamId ?? ""),
    ended: (code) => (CLEAN_CLOSES.has(code) ? "completed" : "connection_lost"),
  };
}

/** The upgrade's V3 signature, over the stream URL as https (what the SDK's stream server checks) or as wss. */
function handshakeSigned(authToken: string, options: Partial<CarrierStreamOptions>): boolean {
  const url = options.signedUrl;
  if (url === undefined || options.request === undefined) return false;
  const { signature, nonce } = signatureHeaders(options.request.headers);
  const wsUrl = url.replace(/^http/i, "ws");
  return (
    isValidPlivoSignature(authToken, signature, nonce, "GET", url) ||
    isValidPlivoSignature(authToken, signature, nonce, "GET", wsUrl)
  );
}

function signatureHeaders(headers: CarrierWebhookRequest["headers"]): {
  signature: string | undefined;
  nonce: string | undefined;
} {
  const signature = headers["x-plivo-signature-v3"];
  const nonce = headers["x-plivo-signature-v3-nonce"];
  return {
    signature: typeof signature === "string" ? signature : undefined,
    nonce: typeof nonce === "string" ? nonce : undefined,
  };
}

/** A dialled call (Direction=outbound with a request id) is known by its request_uuid; any other by its CallUUID. */
function callIdOf(p: PlivoParams): string | undefined {
  const requestUuid = single(p["RequestUUID"]) ?? single(p["ALegRequestUUID"]);
  if (single(p["Direction"]) === "outbound" && requestUuid !== undefined) return requestUuid;
  return single(p["CallUUID"]);
}

/** The webhook's form fields as the V3 signature covers them (strings and repeated names). */
function formParams(request: CarrierWebhookRequest): PlivoParams {
  const out: Record<string, string | readonly string[]> = {};
  for (const [name, value] of Object.entries(request.params)) {
    if (typeof value === "string") out[name] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === "string")) out[name] = value;
  }
  return out;
}

function single(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
