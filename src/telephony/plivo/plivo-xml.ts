/**
 * Plivo XML that connects a call to our media-stream WebSocket: one
 * bidirectional `<Stream>` (u-law 8 kHz both ways) that keeps the call alive
 * while it runs, with the stream's parameters in `extraHeaders`, which Plivo
 * hands back in the start frame's `extra_headers`.
 *
 * Plivo accepts only letters and digits in extraHeaders names and values,
 * 512 bytes in all. So only what the stream needs goes there: the stream
 * token (alphanumeric by design, `t1<hex>`) and the call id the stream must
 * be tied to, hex-encoded (`callIdHex`: a Plivo CallUUID or RequestUUID has
 * dashes). Everything else about the call (from, to, direction) travels
 * signed inside the token.
 */
import type { StreamTarget } from "../carrier/carrier-protocol.js";

/** The largest extraHeaders Plivo takes, bytes. */
export const EXTRA_HEADERS_MAX = 512;
const ALNUM = /^[A-Za-z0-9]+$/;
const HEX_SUFFIX = "Hex";

/** The stream parameters as Plivo extraHeaders: alphanumeric values as they are, `callId` hex-encoded, the rest left out. */
export function extraHeadersOf(parameters: Readonly<Record<string, string>>): string {
  const items: string[] = [];
  for (const [name, value] of Object.entries(parameters)) {
    if (!ALNUM.test(name) || value.length === 0) continue;
    if (name === "token" && ALNUM.test(value)) items.push(`${name}=${value}`);
    else if (name === "callId")
      items.push(`${name}${HEX_SUFFIX}=${Buffer.from(value, "utf8").toString("hex")}`);
  }
  return items.join(",");
}

/** extraHeaders read back: `<name>Hex` values decoded to `<name>` (hex of UTF-8); others as they are. */
export function streamParametersOf(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.endsWith(HEX_SUFFIX) && name.length > HEX_SUFFIX.length) {
      if (!/^(?:[0-9a-fA-F]{2})+$/.test(value)) continue;
      out[name.slice(0, -HEX_SUFFIX.length)] = Buffer.from(value, "hex").toString("utf8");
    } else out[name] = value;
  }
  return out;
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
