/**
 * Plivo's V3 request signature (`X-Plivo-Signature-V3`, with its nonce in
 * `X-Plivo-Signature-V3-Nonce`), as the official SDKs compute it
 * (plivo-node `lib/utils/v3Security.js`, plivo-python `utils/signature_v3.py`):
 *
 * 1. the URL Plivo requested without its query: `scheme://host[:port]/path`;
 * 2. its query parameters, decoded, sorted by name (each name's values
 *    sorted), as `name=value` joined with `&`; appended after `?` when there
 *    are query parameters or POST parameters;
 * 3. a `.` when there are both;
 * 4. for a POST, the body's parameters sorted the same way, as `name` +
 *    `value` with no separator at all;
 * 5. then `.` + the nonce; HMAC-SHA256 keyed with the auth token, base64.
 *
 * The URL is signed as it is written, its port included when it names one:
 * Plivo signs "the final request URL (the full URL with the scheme, port, and
 * query string)" (docs.plivo.com/docs/voice/concepts/signature-validation),
 * and the SDK keeps the port it is given (`uri-parser`). So with PUBLIC_URL
 * `https://host:443` the answer URL Plivo was given, and signs, names `:443`.
 * Whether Plivo adds a default port to a URL that names none, or drops one
 * that is named, the docs do not say: both forms are accepted (the default
 * port names the same origin, so nothing is widened).
 *
 * The header may hold several signatures separated by commas (one per active
 * auth token while a token is being rotated): any match passes. There is no
 * timestamp in V3, so no freshness check can be made; the nonce is random per
 * request. A GET (the media-stream WebSocket upgrade) signs steps 1, 2 and 5.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { parse as parseQuery } from "node:querystring";

/** Parameters as they arrive: one value or several for a repeated name. */
export type PlivoParams = Readonly<Record<string, string | readonly string[] | undefined>>;

const MAX_SIGNATURES = 8;

const DEFAULT_PORTS: Readonly<Record<string, string>> = { http: "80", ws: "80", https: "443", wss: "443" };
/** scheme, authority (with its port as written) and path of an absolute URL. */
const URL_PARTS = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)/;

/** The string Plivo signs for `method` on `url` with POST `params`, before the nonce. */
export function plivoSignedString(method: "GET" | "POST", url: string, params: PlivoParams = {}): string {
  const parsed = new URL(url); // throws on a URL that does not parse
  const parts = URL_PARTS.exec(url);
  // The URL as written: new URL() would drop a default port the carrier signed.
  const base = parts ? `${parts[1]!.toLowerCase()}://${parts[2]}${parts[3] || "/"}` : url;
  const query = sortedPairs(queryParams(parsed.search)).map(([name, value]) => `${name}=${value}`);
  const body = method === "POST" ? sortedPairs(params) : [];
  let out = base;
  if (query.length > 0 || body.length > 0) out += `?${query.join("&")}`;
  if (query.length > 0 && body.length > 0) out += ".";
  return out + body.map(([name, value]) => `${name}${value}`).join("");
}

/** The signature Plivo sends for this request (tests, local stand-ins). */
export function computePlivoSignature(
  authToken: string,
  nonce: string,
  method: "GET" | "POST",
  url: string,
  params: PlivoParams = {},
): string {
  return createHmac("sha256", authToken)
    .update(`${plivoSignedString(method, url, params)}.${nonce}`, "utf8")
    .digest("base64");
}

/**
 * True when one of the signatures in `header` is Plivo's V3 signature of the
 * request under `authToken`. Never throws: a missing header, a missing nonce
 * or a URL that does not parse is simply invalid. Compared in constant time.
 */
export function isValidPlivoSignature(
  authToken: string,
  header: string | undefined,
  nonce: string | undefined,
  method: "GET" | "POST",
  url: string,
  params: PlivoParams = {},
): boolean {
  if (!authToken || !header || !nonce) return false;
  let expected: Buffer[];
  try {
    expected = [url, withDefaultPortToggled(url)].map((u) =>
      Buffer.from(computePlivoSignature(authToken, nonce, method, u, params), "utf8"),
    );
  } catch {
    return false;
  }
  const given = header.split(",", MAX_SIGNATURES).map((s) => Buffer.from(s.trim(), "utf8"));
  let ok = false;
  for (const g of given)
    for (const e of expected) if (g.length === e.length && timingSafeEqual(g, e)) ok = true;
  return ok;
}

/** The same URL with its scheme's default port named when it names none, or dropped when it names it. */
export function withDefaultPortToggled(url: string): string {
  const parts = URL_PARTS.exec(url);
  const port = parts ? DEFAULT_PORTS[parts[1]!.toLowerCase()] : undefined;
  if (!parts || port === undefined) return url;
  const authority = parts[2]!;
  const named = /:(\d*)$/.exec(authority);
  const other =
    named === null
      ? `${authority}:${port}`
      : named[1] === port
        ? authority.slice(0, -named[0].length)
        : authority;
  return `${parts[1]}://${other}${url.slice(parts[1]!.length + 3 + authority.length)}`;
}

function queryParams(search: string): Record<string, string | string[] | undefined> {
  return search.length > 1 ? parseQuery(search.slice(1), "&", "=", { maxKeys: 0 }) : {};
}

/** [name, value] pairs sorted by name (code-unit order, as the SDKs sort), each name's values sorted. */
function sortedPairs(params: PlivoParams): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const name of Object.keys(params).sort()) {
    const value = params[name];
    if (value === undefined) continue;
    const values = typeof value === "string" ? [value] : [...value].sort();
    for (const v of values) out.push([name, v]);
  }
  return out;
}
