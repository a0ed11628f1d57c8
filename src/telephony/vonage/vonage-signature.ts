/**
 * Vonage's signed webhooks (Voice API): every webhook carries
 * `Authorization: Bearer <JWT>`, HS256 keyed with the account's signature
 * secret, whose claims include `iat` and `payload_hash`: the hex SHA-256 of
 * the payload. Vonage's documentation on verifying the payload: for a POST
 * the payload is the request body; for a GET it is the query parameters as
 * a JSON object, in the order of the query, without whitespace.
 *
 * A token is accepted when its signature is valid, `iat` is within
 * `maxAgeS` of now (and not from the future beyond a small skew), `exp`
 * (when present) has not passed, and `payload_hash` matches. The check is
 * constant-time where it compares secrets-derived bytes.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { signHs256, verifyHs256 } from "./vonage-jwt.js";

export interface VonageWebhook {
  /** GET or POST. */
  readonly method: string;
  /** The URL Vonage requested (its query is the payload of a GET). */
  readonly url: string;
  readonly authorization: string | undefined;
  /** The body as received (the payload of a POST). */
  readonly rawBody: string;
}

export interface VonageSignatureOptions {
  /** Age at most of a token's `iat`, seconds. Default 300. */
  maxAgeS?: number;
  /** Now, epoch seconds. Default the clock. */
  nowS?: number;
}

/** Clocks disagree a little: an `iat` this far in the future still passes, seconds. */
const FUTURE_SKEW_S = 60;

/** True when the webhook is signed by `secret` over this payload. Never throws. */
export function isValidVonageWebhook(
  secret: string,
  webhook: VonageWebhook,
  options: VonageSignatureOptions = {},
): boolean {
  const header = webhook.authorization;
  if (secret.length === 0 || typeof header !== "string") return false;
  const match = /^Bearer ([A-Za-z0-9_.-]+)$/.exec(header.trim());
  if (!match) return false;
  const claims = verifyHs256(match[1]!, secret);
  if (!claims) return false;
  const now = options.nowS ?? Math.floor(Date.now() / 1000);
  const iat = claims["iat"];
  if (typeof iat !== "number" || !Number.isFinite(iat)) return false;
  if (now - iat > (options.maxAgeS ?? 300) || iat - now > FUTURE_SKEW_S) return false;
  const exp = claims["exp"];
  if (exp !== undefined && (typeof exp !== "number" || exp < now)) return false;
  const hash = claims["payload_hash"];
  if (typeof hash !== "string" || !/^[0-9a-fA-F]{64}$/.test(hash)) return false;
  const payload = payloadOf(webhook);
  if (payload === undefined) return false;
  const expected = createHash("sha256").update(payload, "utf8").digest();
  return timingSafeEqual(Buffer.from(hash, "hex"), expected);
}

/** What Vonage hashes: a POST's body; a GET's query as compact JSON, in query order. */
export function vonagePayload(method: string, url: string, rawBody: string): string | undefined {
  if (method.toUpperCase() !== "GET") return rawBody;
  let search: URLSearchParams;
  try {
    search = new URL(url).searchParams;
  } catch {
    return undefined;
  }
  const query: Record<string, string> = {};
  for (const [name, value] of search) query[name] = value;
  return JSON.stringify(query);
}

function payloadOf(webhook: VonageWebhook): string | undefined {
  return vonagePayload(webhook.method, webhook.url, webhook.rawBody);
}

/**
 * The Authorization header Vonage would send for this webhook (tests and
 * the local Vonage stand-in). `claims` adds to or overrides the defaults.
 */
export function vonageWebhookAuthorization(
  secret: string,
  webhook: Omit<VonageWebhook, "authorization">,
  claims: Record<string, unknown> = {},
): string {
  const payload = payloadOf({ ...webhook, authorization: undefined }) ?? "";
  const token = signHs256(
    {
      iat: Math.floor(Date.now() / 1000),
      jti: crypto.randomUUID(),
      iss: "Vonage",
      payload_hash: createHash("sha256").update(payload, "utf8").digest("hex"),
      ...claims,
    },
    secret,
  );
  return `Bearer ${token}`;
}
