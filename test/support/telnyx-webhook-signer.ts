/**
 * Signs webhooks the way Telnyx does, for tests: an Ed25519 key pair stands
 * in for Telnyx's, the public half (base64 of the raw 32 bytes, as Mission
 * Control shows it) configures the server, and each webhook carries
 * `telnyx-timestamp` (Unix seconds) and `telnyx-signature-ed25519` (base64
 * signature of `timestamp|body`). Test-only.
 */
import { generateKeyPairSync, sign, type KeyObject } from "node:crypto";

export class TelnyxWebhookSigner {
  readonly #privateKey: KeyObject;
  /** TELNYX_PUBLIC_KEY: base64 of the raw 32-byte public key. */
  readonly publicKey: string;

  constructor() {
    const { privateKey, publicKey } = generateKeyPairSync("ed25519");
    this.#privateKey = privateKey;
    const jwk = publicKey.export({ format: "jwk" });
    this.publicKey = Buffer.from(jwk.x!, "base64url").toString("base64");
  }

  /** The signature headers of `body`, signed at `timestampS` (default now). */
  headers(body: string, timestampS = Math.floor(Date.now() / 1000)): Record<string, string> {
    const timestamp = String(timestampS);
    const signature = sign(null, Buffer.from(`${timestamp}|${body}`, "utf8"), this.#privateKey);
    return { "telnyx-timestamp": timestamp, "telnyx-signature-ed25519": signature.toString("base64") };
  }
}
