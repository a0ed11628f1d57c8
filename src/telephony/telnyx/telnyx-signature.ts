/**
 * Telnyx webhook signatures (Ed25519).
 *
 * Telnyx signs every webhook, TeXML ones included: the header
 * `telnyx-signature-ed25519` carries the base64 Ed25519 signature (64 bytes)
 * of `<telnyx-timestamp>|<raw body>`, where `telnyx-timestamp` is the send
 * time in Unix seconds. It is verified with the account's public key
 * (Mission Control: base64 of the 32-byte key, TELNYX_PUBLIC_KEY), and a
 * timestamp too far from our clock is refused (replays). Node's crypto
 * verifies Ed25519 natively: no SDK, no dependency.
 */
import { createPublicKey, verify, type KeyObject } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { TalkError } from "../../core/index.js";
import { STRICT_BASE64 } from "../carrier/base64.js";

const DIGITS = /^\d{1,12}$/;

/** The account's public key (base64, 32 bytes) as a KeyObject; config_invalid otherwise. */
export function telnyxPublicKey(base64: string): KeyObject {
  const raw = STRICT_BASE64.test(base64) ? Buffer.from(base64, "base64") : undefined;
  if (raw === undefined || raw.length !== 32)
    throw new TalkError(
      "config_invalid",
      "telephony.telnyx.publicKey must be the account's base64 Ed25519 public key (32 bytes).",
    );
  return createPublicKey({
    key: { kty: "OKP", crv: "Ed25519", x: raw.toString("base64url") },
    format: "jwk",
  });
}

export interface TelnyxSignatureCheck {
  publicKey: KeyObject;
  headers: IncomingHttpHeaders;
  /** The body exactly as received. */
  rawBody: string;
  /** Our clock, ms. */
  nowMs: number;
  /** Largest distance between telnyx-timestamp and our clock, seconds. */
  toleranceS: number;
}

/** Why a signature was refused (logs and tests; the webhook answers 403 whatever the reason). */
export type TelnyxSignatureVerdict =
  "ok" | "missing" | "malformed_timestamp" | "stale_timestamp" | "malformed_signature" | "bad_signature";

/** Checks a webhook's Ed25519 signature and timestamp. Never throws. */
export function checkTelnyxSignature(check: TelnyxSignatureCheck): TelnyxSignatureVerdict {
  const signature = header(check.headers, "telnyx-signature-ed25519");
  const timestamp = header(check.headers, "telnyx-timestamp");
  if (signature === undefined || timestamp === undefined) return "missing";
  if (!DIGITS.test(timestamp)) return "malformed_timestamp";
  if (Math.abs(Math.floor(check.nowMs / 1000) - Number(timestamp)) > check.toleranceS)
    return "stale_timestamp";
  if (!STRICT_BASE64.test(signature)) return "malformed_signature";
  const sig = Buffer.from(signature, "base64");
  if (sig.length !== 64) return "malformed_signature";
  try {
    const data = Buffer.from(`${timestamp}|${check.rawBody}`, "utf8");
    return verify(null, data, check.publicKey, sig) ? "ok" : "bad_signature";
  } catch {
    return "bad_signature";
  }
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  const one = Array.isArray(value) ? (value.length === 1 ? value[0] : undefined) : value;
  return typeof one === "string" && one.length > 0 ? one.trim() : undefined;
}
