/**
 * X-Twilio-Signature validation.
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
