/**
 * X-Twilio-Signature validation.
 *
 * Twilio signs every webhook over the full URL it requested (scheme, host,
 * path, query string) followed by every POST parameter as `name + value`,
 * sorted by name; base64. By default the key is the account's auth token and
 * the hash SHA-1. A webhook matched by a Webhook Rule whose Setting names a
 * SharedKey is signed with that key's secret instead, with the hash the
 * Setting names (HMAC_SHA1 or HMAC_SHA256), and carries
 * `X-Twilio-Webhooks-Signature-Settings: key=<SharedKey id>,algorithm=<name>`
 * (twilio.com/docs/usage/webhooks/webhook-shared-keys; twilio-node 6.3's
 * `webhook()` middleware and examples/WebhookSignatureValidation.md). The
 * header decides which key: present, a configured SharedKey secret and its
 * algorithm; absent, the auth token and SHA-1. This is the SDK's own rule.
 *
 * The hashing and comparison are the official SDK's (`validateRequest`,
 * `getSignatureAlgorithm`), which also accept the URL with and without the
 * default port and compare in constant time. We import its
 * `lib/webhooks/webhooks.js` module directly instead of the package root:
 * measured on Node 20 here (twilio 6.2), `import "twilio"` costs ~140 ms and
 * ~8 MB of heap (it loads the REST client: axios, dayjs, jsonwebtoken), while
 * the webhooks module costs ~10 ms and nothing beyond node:crypto. The deep
 * path is the SDK's own module layout; a test imports it, so an SDK upgrade
 * that moves it fails loudly rather than silently.
 */
import {
  getExpectedTwilioSignature,
  getSignatureAlgorithm,
  HMAC_SHA1,
  HMAC_SHA256,
  validateRequest,
} from "twilio/lib/webhooks/webhooks.js";

/** Form parameters as @fastify/formbody parses them (repeated names become arrays). */
export type TwilioFormParams = Readonly<Record<string, string | readonly string[] | undefined>>;

/** The keys a Twilio webhook may be signed with. */
export interface TwilioSigningKeys {
  /** The account's auth token: webhooks without a signature-settings header, HMAC-SHA1. */
  authToken: string;
  /** SharedKey secrets (more than one while a key is rotated): webhooks with the settings header. */
  sharedKeySecrets: readonly string[];
}

/** The two headers of a signed Twilio webhook, as received. */
export interface TwilioSignatureHeaders {
  /** X-Twilio-Signature. */
  signature: string | undefined;
  /** X-Twilio-Webhooks-Signature-Settings (SharedKey signing), when present. */
  settings?: string | undefined;
}

/** The algorithms Twilio signs with (getSignatureAlgorithm's names, upper-cased as the SDK compares them). */
const ALGORITHMS = new Set([HMAC_SHA1, HMAC_SHA256]);

function definedParams(params: TwilioFormParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    out[name] = typeof value === "string" ? value : [...value];
  }
  return out;
}

/**
 * True when the webhook is signed as Twilio signs it: with a settings header,
 * by one of the SharedKey secrets under the header's algorithm; without one,
 * by the auth token under HMAC-SHA1. Never throws: a missing or malformed
 * header, an unknown algorithm or no key for the header is simply invalid.
 */
export function isValidTwilioWebhook(
  keys: TwilioSigningKeys,
  headers: TwilioSignatureHeaders,
  url: string,
  params: TwilioFormParams,
): boolean {
  const { signature, settings } = headers;
  if (typeof signature !== "string" || signature.length === 0) return false;
  const sharedKey = typeof settings === "string" && settings.length > 0;
  const algorithm = sharedKey ? getSignatureAlgorithm(settings).toUpperCase() : HMAC_SHA1;
  // Checked here: the SDK refuses an unknown one too, but warns on the console for each request.
  if (!ALGORITHMS.has(algorithm)) return false;
  const secrets = sharedKey ? keys.sharedKeySecrets : [keys.authToken];
  const fields = definedParams(params);
  return secrets.some((secret) => {
    if (secret.length === 0) return false;
    try {
      return validateRequest(secret, signature, url, fields, algorithm);
    } catch {
      // validateRequest calls `new URL(url)` on its fallback path; a URL it cannot parse is not Twilio's.
      return false;
    }
  });
}

/**
 * True when `signature` is Twilio's auth-token (HMAC-SHA1) signature of
 * `url` + `params`. Never throws.
 */
export function isValidTwilioSignature(
  authToken: string,
  signature: string | undefined,
  url: string,
  params: TwilioFormParams,
): boolean {
  return isValidTwilioWebhook({ authToken, sharedKeySecrets: [] }, { signature }, url, params);
}

/** The signature Twilio would send for this request (for tests and the local call simulator); SHA-1 by default. */
export function computeTwilioSignature(
  secret: string,
  url: string,
  params: TwilioFormParams,
  algorithm: typeof HMAC_SHA1 | typeof HMAC_SHA256 = HMAC_SHA1,
): string {
  return getExpectedTwilioSignature(secret, url, definedParams(params), algorithm);
}
