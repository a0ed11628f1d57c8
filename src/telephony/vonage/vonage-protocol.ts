/**
 * Vonage (Voice API) as a CarrierProtocol: signed webhooks (HS256 JWT with a
 * payload hash, bad or missing: 401), NCCO answers connecting the call to a
 * WebSocket of 16 kHz linear PCM, binary audio frames with `notify` marks and
 * `clear`, and the Voice API for dialing, hanging up and transferring. The
 * routes live at `/telephony/vonage/{answer,stream,events}`; the answer
 * webhook is a GET by default (POST JSON accepted too).
 */
import { PCM16_16K } from "../../core/index.js";
import type { CarrierProtocol, CarrierWebhookRequest } from "../carrier/carrier-protocol.js";
import { connectStreamNcco } from "./ncco.js";
import { briefingNcco } from "./ncco.js";
import { parseVonageAmd } from "./vonage-amd.js";
import { VonageRestClient } from "./vonage-rest-client.js";
import { isValidVonageWebhook } from "./vonage-signature.js";
import { vonageStreamCodec } from "./vonage-stream-codec.js";

export const VONAGE_PATHS = Object.freeze({
  voice: "/telephony/vonage/answer",
  stream: "/telephony/vonage/stream",
  status: "/telephony/vonage/events",
  briefing: "/telephony/vonage/briefing",
});

/**
 * Vonage's terminal call statuses (event webhook), in the words every
 * carrier's calls close with (docs/telephony.md): the call is over.
 */
const TERMINAL_STATUSES: Readonly<Record<string, string>> = Object.freeze({
  completed: "completed",
  busy: "busy",
  rejected: "busy",
  cancelled: "canceled",
  unanswered: "no-answer",
  timeout: "no-answer",
  failed: "failed",
});

/**
 * Vonage buffers at most 3,072 frames (~61 s) of audio sent ahead; older
 * accounts 1,024 (~20 s). Sending stays well under either.
 */
export const VONAGE_PLAYBACK_BUFFER_MS = 15_000;

/** `telephony.vonage` as the protocol needs it. */
export interface VonageProtocolOptions {
  /** VONAGE_SIGNATURE_SECRET: the HS256 key of signed webhooks. Empty: unsigned. */
  signatureSecret?: string | undefined;
  /** VONAGE_APPLICATION_ID: with the private key, enables the REST client. */
  applicationId?: string | undefined;
  /** VONAGE_PRIVATE_KEY: the application's RSA private key (PEM). */
  privateKey?: string | undefined;
  /** Voice API base. Default "https://api.nexmo.com". */
  apiBaseUrl?: string | undefined;
  defaultFrom?: string | undefined;
  /** Age at most of a webhook's token (`iat`), seconds. Default 300. */
  maxWebhookAgeS?: number | undefined;
}

export function vonageProtocol(options: VonageProtocolOptions): CarrierProtocol {
  const secret = options.signatureSecret ?? "";
  const rest =
    options.applicationId && options.privateKey
      ? new VonageRestClient({
          applicationId: options.applicationId,
          privateKey: options.privateKey,
          ...(options.apiBaseUrl ? { baseUrl: options.apiBaseUrl } : {}),
        })
      : undefined;
  const maxAgeS = options.maxWebhookAgeS ?? 300;
  return Object.freeze({
    id: "vonage",
    name: "Vonage",
    paths: VONAGE_PATHS,
    lineFormat: PCM16_16K,
    acknowledgements: "marks",
    playbackBufferMs: VONAGE_PLAYBACK_BUFFER_MS,
    voiceMethods: ["GET", "POST"],
    refusalStatus: 401,
    signed: secret.length > 0,
    rest,
    // A transfer's phone endpoint `onAnswer` NCCO (fetched by Vonage, unsigned as far as documented).
    documentAuth: "url",
    briefing: (text: string) => ({
      body: JSON.stringify(briefingNcco(text)),
      contentType: "application/json",
    }),
    defaultFrom: options.defaultFrom,
    missingSettings: "VONAGE_SIGNATURE_SECRET, VONAGE_APPLICATION_ID, VONAGE_PRIVATE_KEY and PUBLIC_URL",

    authenticate(request: CarrierWebhookRequest) {
      const header = request.headers["authorization"];
      return isValidVonageWebhook(
        secret,
        {
          method: request.method ?? "POST",
          url: request.url,
          authorization: typeof header === "string" ? header : undefined,
          rawBody: request.rawBody,
        },
        { maxAgeS },
      )
        ? "ok"
        : "refused";
    },

    inboundCall(request: CarrierWebhookRequest) {
      const p = request.params;
      const callId = text(p["uuid"]);
      if (callId === undefined) return undefined;
      return { callId, from: text(p["from"]), to: text(p["to"]), direction: "inbound" };
    },

    callStatus(request: CarrierWebhookRequest) {
      const p = request.params;
      const callId = text(p["uuid"]);
      const status = text(p["status"]);
      if (callId === undefined || status === undefined) return undefined;
      const terminal = TERMINAL_STATUSES[status];
      return terminal !== undefined
        ? { callId, status: terminal, terminal: true }
        : { callId, status, terminal: false };
    },

    machineDetection: (request: CarrierWebhookRequest) => parseVonageAmd(request.params),

    answer(stream) {
      return { body: JSON.stringify(connectStreamNcco(stream)), contentType: "application/json" };
    },

    openStream: vonageStreamCodec,
  } satisfies CarrierProtocol);
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 && value.length <= 256 ? value : undefined;
}
