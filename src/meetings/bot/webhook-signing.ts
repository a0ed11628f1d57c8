import { createHmac } from "node:crypto";

/** Standard Webhooks symmetric secrets: `whsec_` then base64 of 24 to 64 random bytes. */
const WHSEC = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/**
 * The HMAC key of a secret: the decoded bytes of a `whsec_` secret (the
 * spec's serialization), else the string's UTF-8 bytes (a plain shared
 * secret, as the legacy scheme used). Throws for a `whsec_` secret that is not
 * base64 of 24..64 bytes.
 */
export function webhookKey(secret: string): Buffer {
  const m = WHSEC.exec(secret);
  if (!m) {
    if (secret.startsWith("whsec_")) throw new Error("a whsec_ secret must be base64 after the prefix");
    return Buffer.from(secret, "utf8");
  }
  const key = Buffer.from(m[1]!, "base64");
  if (key.length < 24 || key.length > 64) throw new Error("a whsec_ secret must decode to 24..64 bytes");
  return key;
}

/**
 * One Standard Webhooks signature: `v1,` then base64 HMAC-SHA256 over
 * `<id>.<timestamp>.<body>` (the body exactly as sent).
 */
export function standardSignature(key: Buffer, id: string, timestamp: string, body: string): string {
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest("base64")}`;
}
