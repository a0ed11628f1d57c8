/**
 * The two JSON Web Tokens Vonage's Voice API uses, over node:crypto (no JWT
 * library: two algorithms, each a few lines):
 * - signed webhooks: Vonage sends `Authorization: Bearer <JWT>`, HS256 keyed
 *   with the account's signature secret; `verifyHs256` checks it;
 * - REST calls: we send `Authorization: Bearer <JWT>`, RS256 signed with the
 *   application's private key, claims `application_id`, `iat`, `exp`, `jti`;
 *   `signRs256` makes it.
 * Compact serialization, base64url without padding (RFC 7515).
 */
import { createHmac, createPrivateKey, randomUUID, sign, timingSafeEqual, type KeyObject } from "node:crypto";
import { TalkError } from "../../core/index.js";

export type JwtClaims = Readonly<Record<string, unknown>>;

const b64url = (data: Buffer | string): string => Buffer.from(data).toString("base64url");
const BASE64URL = /^[A-Za-z0-9_-]*$/;
/** Largest token looked at; Vonage's are a few hundred characters. */
const MAX_TOKEN_CHARS = 8192;

/**
 * The claims of an HS256 token signed with `secret`, or undefined when it
 * is not one (malformed, another algorithm, a bad signature). Never throws.
 * Time claims are the caller's to check.
 */
export function verifyHs256(token: string, secret: string): JwtClaims | undefined {
  if (secret.length === 0 || token.length > MAX_TOKEN_CHARS) return undefined;
  const parts = token.split(".");
  if (parts.length !== 3 || !parts.every((p) => BASE64URL.test(p))) return undefined;
  const [header, payload, signature] = parts as [string, string, string];
  const head = parseJsonObject(header);
  if (head?.["alg"] !== "HS256") return undefined; // never "none", never an algorithm we did not choose
  const expected = createHmac("sha256", secret).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
  return parseJsonObject(payload);
}

/** An HS256 token of `claims` (tests and the local Vonage stand-in sign webhooks with it). */
export function signHs256(claims: JwtClaims, secret: string): string {
  const body = `${b64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))}.${b64url(JSON.stringify(claims))}`;
  return `${body}.${b64url(createHmac("sha256", secret).update(body).digest())}`;
}

/** A PEM private key (PKCS#8 or PKCS#1); `\n` written as two characters, as env files often do, is accepted. */
export function parsePrivateKey(pem: string): KeyObject {
  try {
    const key = createPrivateKey(pem.includes("\\n") ? pem.replace(/\\n/g, "\n") : pem);
    if (key.asymmetricKeyType !== "rsa") throw new Error(`an ${String(key.asymmetricKeyType)} key`);
    return key;
  } catch (cause) {
    throw new TalkError(
      "config_invalid",
      `telephony.vonage.privateKey is not an RSA private key in PEM form: ${(cause as Error).message}`,
      { cause },
    );
  }
}

/** The bearer token of a Voice API request: RS256, valid `ttlS` seconds from `nowS`. */
export function signRs256(
  key: KeyObject,
  applicationId: string,
  nowS: number = Math.floor(Date.now() / 1000),
  ttlS = 300,
): string {
  const claims = { application_id: applicationId, iat: nowS, exp: nowS + ttlS, jti: randomUUID() };
  const body = `${b64url(JSON.stringify({ alg: "RS256", typ: "JWT" }))}.${b64url(JSON.stringify(claims))}`;
  return `${body}.${b64url(sign("sha256", Buffer.from(body), key))}`;
}

/** The claims of any JWT, unverified (the local stand-in reads our REST tokens with it after checking them). */
export function decodeClaims(token: string): JwtClaims | undefined {
  const payload = token.split(".")[1];
  return payload !== undefined && BASE64URL.test(payload) ? parseJsonObject(payload) : undefined;
}

function parseJsonObject(segment: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(segment, "base64url").toString("utf8"));
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
