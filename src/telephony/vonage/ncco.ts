/**
 * NCCOs (Vonage Call Control Objects: JSON arrays of actions) that the
 * telephony surface answers with or dials with:
 * - connecting a call to our media-stream WebSocket: `connect` to an
 *   endpoint `{type: "websocket", uri, "content-type": "audio/l16;rate=16000",
 *   headers}`. Vonage hands the headers back, flattened, in the socket's
 *   first message (`websocket:connected`); their JSON is at most 512 bytes;
 * - moving a live call elsewhere (transfer): `connect` to a phone number or a
 *   SIP URI.
 */
import { TalkError } from "../../core/index.js";
import type { StreamTarget } from "../carrier/carrier-protocol.js";

/** The audio format we ask for: 16-bit linear PCM, 16 kHz (640-byte frames of 20 ms). */
export const VONAGE_CONTENT_TYPE = "audio/l16;rate=16000";
/** Vonage's limit on a websocket endpoint's `headers`, bytes of JSON. */
export const MAX_HEADERS_BYTES = 512;
/** The stream parameters always carried: the token, and the call id the stream start needs. */
const REQUIRED_HEADERS = ["token", "callId"] as const;

export type NccoAction = Record<string, unknown>;

/** The websocket endpoint's headers: every stream parameter, or only the required ones when all would not fit. */
export function streamHeaders(parameters: Readonly<Record<string, string>>): Record<string, string> {
  const all = { ...parameters };
  if (Buffer.byteLength(JSON.stringify(all)) <= MAX_HEADERS_BYTES) return all;
  // The rest of the call's metadata travels in the signed token anyway.
  const required: Record<string, string> = {};
  for (const name of REQUIRED_HEADERS) if (parameters[name] !== undefined) required[name] = parameters[name];
  if (Buffer.byteLength(JSON.stringify(required)) > MAX_HEADERS_BYTES)
    throw new TalkError(
      "payload_too_large",
      `The stream token does not fit Vonage's ${MAX_HEADERS_BYTES}-byte headers.`,
    );
  return required;
}

/** The NCCO connecting the call to `stream.url`, with the stream parameters as websocket headers. */
export function connectStreamNcco(stream: StreamTarget): NccoAction[] {
  return [
    {
      action: "connect",
      endpoint: [
        {
          type: "websocket",
          uri: stream.url,
          "content-type": VONAGE_CONTENT_TYPE,
          headers: streamHeaders(stream.parameters),
        },
      ],
    },
  ];
}

/** A phone endpoint: Vonage writes numbers in E.164 without the `+`. */
export function phoneEndpoint(number: string): { type: "phone"; number: string } {
  return { type: "phone", number: vonageNumber(number) };
}

export function vonageNumber(number: string): string {
  return number.startsWith("+") ? number.slice(1) : number;
}

/**
 * The NCCO a transferred call runs: connect to a number (E.164) or a SIP
 * URI. With `briefingUrl`, a phone endpoint's `onAnswer` NCCO runs on the
 * answered call before it joins the caller (the briefing; SIP endpoints
 * have no `onAnswer`).
 */
export function transferNcco(destination: string, briefingUrl?: string): NccoAction[] {
  const endpoint = /^sips?:/i.test(destination)
    ? { type: "sip", uri: destination }
    : { ...phoneEndpoint(destination), ...(briefingUrl ? { onAnswer: { url: briefingUrl } } : {}) };
  return [{ action: "connect", endpoint: [endpoint] }];
}

/** The briefing a transfer's callee hears (`onAnswer`): one `talk` action. */
export function briefingNcco(text: string): NccoAction[] {
  return [{ action: "talk", text }];
}
