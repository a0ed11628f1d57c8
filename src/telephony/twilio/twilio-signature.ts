/**
 * X-Twilio-Signature validation and the URLs Twilio reaches us on.
 *
 * Twilio signs every webhook: HMAC-SHA1, keyed with the account's auth token,
 * over the full URL it requested (scheme, host, path, query string) followed
 * by every POST parameter as `name + value`, sorted by name; base64-encoded.
 *
 * We use the official SDK's implementation (`validateRequest`), which also
 * accepts the URL with and without the default port and compares in constant
 * time. We import its `lib/webhooks/webhooks.js` module directly instead of the
 * package root: measured on Node 20 here (twilio 6.2), `import "twilio"` costs
 * ~140 ms and ~8 MB of heap (it loads the REST client: axios, dayjs,
 * jsonwebtoken), while the webhooks module costs ~10 ms and nothing beyond
 * node:crypto. The deep path is the SDK's own module layout; a test imports it,
 * so an SDK upgrade that moves it fails loudly rather than silently.
 */
import { getExpectedTwilioSignature, validateRequest } from "twilio/lib/webhooks/webhooks.js";
import { TalkError } from "../../core/errors.js";

/** Form parameters as @fastify/formbody parses them (repeated names become arrays). */
export type TwilioFormParams = Readonly<Record<string, string | readonly string[] | undefined>>;

function definedParams(params: TwilioFormParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    out[name] = typeof value === "string" ? value : [...value];
  }
  return out;
}

/**
 * True when `signature` is Twilio's signature of `url` + `params` under
 * `authToken`. Never throws: a missing or malformed header is simply invalid.
 */
export function isValidTwilioSignature(
  authToken: string,
  signature: string | undefined,
  url: string,
  params: TwilioFormParams,
): boolean {
  if (typeof signature !== "string" || signature.length === 0 || authToken.length === 0) return false;
  try {
    return validateRequest(authToken, signature, url, definedParams(params));
  } catch {
    // validateRequest calls `new URL(url)` on its fallback path; a URL it cannot parse is not Twilio's.
    return false;
  }
}

/** The signature Twilio would send for this request (for tests and the local call simulator). */
export function computeTwilioSignature(authToken: string, url: string, params: TwilioFormParams): string {
  return getExpectedTwilioSignature(authToken, url, definedParams(params));
}

/**
 * Parses and checks PUBLIC_URL: an absolute http(s) URL without query or
 * fragment. Returned without a trailing slash so paths can be appended.
 */
export function parsePublicUrl(publicUrl: string): string {
  let parsed: URL;
  try {
    parsed = new URL(publicUrl);
  } catch (cause) {
    throw new TalkError("config_invalid", `publicUrl "${publicUrl}" is not an absolute URL`, { cause });
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new TalkError("config_invalid", `publicUrl must be http:// or https://, got "${parsed.protocol}"`);
  }
  if (parsed.search !== "" || parsed.hash !== "") {
    throw new TalkError("config_invalid", "publicUrl must not carry a query string or fragment");
  }
  return publicUrl.replace(/\/+$/, "");
}

/**
 * The URL Twilio signed for a request our server received as `requestUrl`
 * (path + query, as Fastify's `request.url` gives it). Twilio signs the URL it
 * requested, which is PUBLIC_URL's origin plus the path it called; behind a
 * proxy that strips a path prefix, PUBLIC_URL carries that prefix.
 */
export function signedWebhookUrl(publicUrl: string, requestUrl: string): string {
  return parsePublicUrl(publicUrl) + (requestUrl.startsWith("/") ? requestUrl : `/${requestUrl}`);
}

/** The WebSocket URL of a path under PUBLIC_URL: https gives wss, http gives ws (local use). */
export function streamUrlFor(publicUrl: string, path: string): string {
  const base = parsePublicUrl(publicUrl).replace(/^http/i, "ws");
  return base + (path.startsWith("/") ? path : `/${path}`);
}
