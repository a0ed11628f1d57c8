/**
 * Plivo XML that connects a call to our media-stream WebSocket: one
 * bidirectional `<Stream>` (u-law 8 kHz both ways) that keeps the call alive
 * while it runs, with the stream's parameters in `extraHeaders`, which Plivo
 * hands back in the start frame's `extra_headers`.
 *
 * Plivo takes only letters and digits in extraHeaders names and values,
 * "Max length: 512 bytes" (docs.plivo.com/docs/voice/xml/audiostream). So
 * only what the stream needs goes there, packed: the stream token (`t1` +
 * hex, alphanumeric by design) as `token62`, its bytes in base 62 (a third
 * shorter than its hex), and the call id the stream must be tied to, a UUID
 * (Plivo's CallUUID or RequestUUID) as its 32 hex digits (`callUuid`), any
 * other id hex-encoded (`callIdHex`). Everything else about the call (from,
 * to, direction) travels signed inside the token. With the longest caller ids
 * Plivo issues (a SIP endpoint, `sip:` + 25 + 12 characters +
 * `@phone.plivo.com`, calling one) that is ~440 bytes; parameters that still
 * would not fit are refused here (`payload_too_large`), never sent for Plivo to
 * reject.
 */
import { TalkError } from "../../core/index.js";
import type { StreamTarget } from "../carrier/carrier-protocol.js";

/** The largest extraHeaders Plivo takes, bytes. */
export const EXTRA_HEADERS_MAX = 512;
const ALNUM = /^[A-Za-z0-9]+$/;
const HEX_SUFFIX = "Hex";
const TOKEN_PREFIX = "t1";
const TOKEN_HEX = /^t1((?:[0-9a-f]{2})+)$/;
const UUID = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/i;
const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/**
 * The stream parameters as Plivo extraHeaders: the token in base 62, the call
 * id packed, the rest left out. payload_too_large when they exceed Plivo's 512 bytes.
 */
export function extraHeadersOf(parameters: Readonly<Record<string, string>>): string {
  const items: string[] = [];
  const token = parameters["token"];
  const tokenHex = token === undefined ? undefined : TOKEN_HEX.exec(token)?.[1];
  if (tokenHex !== undefined) items.push(`token62=${toBase62(tokenHex)}`);
  else if (token !== undefined && ALNUM.test(token)) items.push(`token=${token}`);
  const callId = parameters["callId"];
  if (callId !== undefined && callId.length > 0) {
    const uuid = UUID.exec(callId);
    items.push(
      uuid
        ? `callUuid=${uuid.slice(1).join("").toLowerCase()}`
        : `callId${HEX_SUFFIX}=${Buffer.from(callId, "utf8").toString("hex")}`,
    );
  }
  const extra = items.join(",");
  if (Buffer.byteLength(extra) > EXTRA_HEADERS_MAX)
    throw new TalkError(
      "payload_too_large",
      `The stream parameters take ${Buffer.byteLength(extra)} bytes of Plivo's ${EXTRA_HEADERS_MAX}-byte extraHeaders.`,
      { details: { bytes: Buffer.byteLength(extra), limit: EXTRA_HEADERS_MAX } },
    );
  return extra;
}

/**
 * extraHeaders read back: `token62` to the token, `callUuid` to the UUID with
 * its dashes, `<name>Hex` values decoded to `<name>` (hex of UTF-8); others as
 * they are. A value that does not decode is dropped.
 */
export function streamParametersOf(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name === "token62") {
      const hex = fromBase62(value);
      if (hex !== undefined) out["token"] = TOKEN_PREFIX + hex;
    } else if (name === "callUuid") {
      const m = /^([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$/i.exec(value);
      if (m) out["callId"] = m.slice(1).join("-");
    } else if (name.endsWith(HEX_SUFFIX) && name.length > HEX_SUFFIX.length) {
      if (!/^(?:[0-9a-fA-F]{2})+$/.test(value)) continue;
      out[name.slice(0, -HEX_SUFFIX.length)] = Buffer.from(value, "hex").toString("utf8");
    } else out[name] = value;
  }
  return out;
}

/** Hex digits (an even count) in base 62; a leading 1 keeps the leading zeros. */
function toBase62(hex: string): string {
  let n = BigInt(`0x1${hex}`);
  let out = "";
  while (n > 0n) {
    out = BASE62[Number(n % 62n)]! + out;
    n /= 62n;
  }
  return out;
}

/** toBase62 undone; undefined for anything it did not make. */
function fromBase62(text: string): string | undefined {
  if (!/^[0-9A-Za-z]{1,1400}$/.test(text)) return undefined;
  let n = 0n;
  for (const ch of text) n = n * 62n + BigInt(BASE62.indexOf(ch));
  const hex = n.toString(16);
  return hex.length % 2 === 1 && hex.startsWith("1") ? hex.slice(1) : undefined;
}

/** `<Response><Stream ...>wss://...</Stream></Response>` for `stream`. */
export function streamXml(stream: StreamTarget): string {
  const extra = extraHeadersOf(stream.parameters);
  const attributes = [
    `bidirectional="true"`,
    `keepCallAlive="true"`,
    `contentType="audio/x-mulaw;rate=8000"`,
    ...(extra ? [`extraHeaders="${escapeXml(extra)}"`] : []),
  ];
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<Response><Stream ${attributes.join(" ")}>${escapeXml(stream.url)}</Stream></Response>`
  );
}

/** Text or an attribute value in Plivo XML, escaped (the five XML entities). */
export function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}
