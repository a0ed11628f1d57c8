/**
 * Twilio as a CarrierProtocol: X-Twilio-Signature webhooks, TwiML
 * `<Connect><Stream>` answers, Media Streams frames (marks echoed after
 * playback, `clear`), and the REST API for dialing, hanging up and
 * transferring. The routes live at `/telephony/twilio/{voice,stream,status}`.
 */
import { ULAW_8K } from "../../core/index.js";
import type {
  CarrierProtocol,
  CarrierStreamCodec,
  CarrierStreamOptions,
  CarrierWebhookRequest,
} from "../carrier/carrier-protocol.js";
import {
  buildClearMessage,
  buildMarkMessage,
  isMulaw8kMono,
  mediaMessageBuilder,
  parseTwilioMessage,
} from "./media-stream-messages.js";
import { parseTwilioAmd } from "./twilio-amd.js";
import { TwilioRestClient } from "./twilio-rest-client.js";
import { isValidTwilioWebhook, type TwilioFormParams } from "./twilio-signature.js";
import { briefingTwiml, connectStreamTwiml } from "./twiml.js";

export const TWILIO_PATHS = Object.freeze({
  voice: "/telephony/twilio/voice",
  stream: "/telephony/twilio/stream",
  status: "/telephony/twilio/status",
  briefing: "/telephony/twilio/briefing",
});

/** Twilio's terminal call statuses (status callbacks): the call is over. */
const TERMINAL_STATUSES = new Set(["busy", "no-answer", "failed", "canceled", "completed"]);

/** `telephony.twilio` as the protocol needs it. */
export interface TwilioProtocolOptions {
  /** TWILIO_AUTH_TOKEN: the HMAC key of X-Twilio-Signature and the REST password. Empty: unsigned. */
  authToken?: string | undefined;
  /**
   * TWILIO_SHARED_KEY_SECRETS: the secrets of the SharedKeys webhooks may be
   * signed with (Webhook Settings; two while one is rotated). Webhooks carrying
   * X-Twilio-Webhooks-Signature-Settings are checked with these.
   */
  sharedKeySecrets?: readonly string[] | undefined;
  /** TWILIO_ACCOUNT_SID: with the auth token, enables the REST client. */
  accountSid?: string | undefined;
  /** REST API base. Default "https://api.twilio.com". */
  apiBaseUrl?: string | undefined;
  defaultFrom?: string | undefined;
}

export function twilioProtocol(options: TwilioProtocolOptions): CarrierProtocol {
  const authToken = options.authToken ?? "";
  const keys = Object.freeze({
    authToken,
    sharedKeySecrets: Object.freeze((options.sharedKeySecrets ?? []).filter((s) => s.length > 0)),
  });
  const rest =
    options.accountSid && authToken
      ? new TwilioRestClient({
          accountSid: options.accountSid,
          authToken,
          ...(options.apiBaseUrl ? { baseUrl: options.apiBaseUrl } : {}),
        })
      : undefined;
  return Object.freeze({
    id: "twilio",
    name: "Twilio",
    paths: TWILIO_PATHS,
    lineFormat: ULAW_8K,
    acknowledgements: "marks",
    // Twilio plays a media message of any length: a provider delta goes out as one message per mark interval.
    maxFramesPerMessage: 10,
    signed: authToken.length > 0 || keys.sharedKeySecrets.length > 0,
    rest,
    defaultFrom: options.defaultFrom,
    missingSettings: "TWILIO_ACCOUNT_SID, TWILIO_AUTH_TOKEN and PUBLIC_URL",

    authenticate(request: CarrierWebhookRequest) {
      const headers = {
        signature: singleHeader(request.headers["x-twilio-signature"]),
        settings: singleHeader(request.headers["x-twilio-webhooks-signature-settings"]),
      };
      return isValidTwilioWebhook(keys, headers, request.url, formParams(request)) ? "ok" : "refused";
    },

    inboundCall(request: CarrierWebhookRequest) {
      const p = formParams(request);
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
      const p = formParams(request);
      const callId = single(p["CallSid"]);
      const status = single(p["CallStatus"]);
      if (callId === undefined || status === undefined) return undefined;
      return { callId, status, terminal: TERMINAL_STATUSES.has(status) };
    },

    machineDetection: (request: CarrierWebhookRequest) => parseTwilioAmd(formParams(request)),

    answer(stream) {
      return { body: connectStreamTwiml(stream), contentType: "text/xml" };
    },

    briefing(text) {
      return { body: briefingTwiml(text), contentType: "text/xml" };
    },

    openStream: twilioStreamCodec,
  } satisfies CarrierProtocol);
}

/** One Media Stream's wire: parses what Twilio sends (holding the stream's sid from `start`), builds what we send. */
export function twilioStreamCodec(options: Pick<CarrierStreamOptions, "maxBytes">): CarrierStreamCodec {
  let streamSid: string | undefined;
  let media = mediaMessageBuilder("");
  return {
    decode(data, isBinary) {
      if (isBinary)
        return {
          ok: false,
          rejection: { reason: "binary_frame", message: "binary frames are not part of the protocol" },
        };
      const parsed = parseTwilioMessage(data, {
        maxBytes: options.maxBytes,
        ...(streamSid !== undefined ? { expectedStreamSid: streamSid } : {}),
      });
      if (!parsed.ok) {
        const reason = String(parsed.error.details?.["reason"] ?? parsed.error.code);
        return {
          ok: false,
          rejection: {
            reason,
            message: parsed.error.message,
            ...(reason === "oversized" ? { close: { code: 1009, reason: "frame too large" } } : {}),
          },
        };
      }
      const msg = parsed.message;
      switch (msg.event) {
        case "connected":
          return { ok: true, event: undefined };
        case "start": {
          streamSid = msg.start.streamSid;
          media = mediaMessageBuilder(streamSid);
          const f = msg.start.mediaFormat;
          return {
            ok: true,
            event: {
              type: "start",
              callId: msg.start.callSid,
              streamId: msg.start.streamSid,
              format: isMulaw8kMono(f) ? ULAW_8K : undefined,
              formatName: `${f.encoding} ${f.sampleRate} Hz ${f.channels === 1 ? "mono" : `${f.channels} channels`}`,
              parameters: msg.start.customParameters,
            },
          };
        }
        case "media":
          return { ok: true, event: { type: "media", audio: msg.audio, base64: msg.media.payload } };
        case "mark":
          return { ok: true, event: { type: "played", name: msg.mark.name } };
        case "dtmf":
          return { ok: true, event: { type: "dtmf", digit: msg.dtmf.digit } };
        case "stop":
          return { ok: true, event: { type: "stop" } };
      }
    },
    media: (audio) => media(audio),
    mark: (name) => buildMarkMessage(streamSid ?? "", name),
    clear: () => buildClearMessage(streamSid ?? ""),
  };
}

/** The webhook's form fields as Twilio's signature covers them (strings and repeated names). */
function formParams(request: CarrierWebhookRequest): TwilioFormParams {
  const out: Record<string, string | readonly string[]> = {};
  for (const [name, value] of Object.entries(request.params)) {
    if (typeof value === "string") out[name] = value;
    else if (Array.isArray(value) && value.every((v) => typeof v === "string")) out[name] = value;
  }
  return out;
}

function singleHeader(value: string | string[] | undefined): string | undefined {
  return typeof value === "string" ? value : undefined;
}

function single(value: string | readonly string[] | undefined): string | undefined {
  return typeof value === "string" && value.length > 0 ? value : undefined;
}
