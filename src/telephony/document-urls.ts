/**
 * The URLs of the documents a carrier fetches during a transfer: the
 * briefing the callee hears first (`<paths.briefing>?text=...`) and, for a
 * carrier that moves a call to a document it fetches (Plivo `aleg_url`), the
 * transfer document (`<paths.transfer>?to=...&text=...`).
 *
 * Twilio signs those fetches like its webhooks, so its URLs are plain. The
 * other carriers do not sign them, or do not document it (Telnyx fetches
 * `audio_url` as a media file; Plivo's `confirmSound`, Vonage's `onAnswer`),
 * so their URLs carry our own signature: `sig`, the first 16 bytes of an
 * HMAC-SHA256 over the path and the sorted query, base64url. The key is a
 * secret every worker shares (`coordinator.claims.sharedSecret`), so the
 * fetch may reach any worker. The text is only ever spoken and the
 * destination only ever one from configuration, so a signed URL is replayable
 * by design (a carrier may fetch twice); what the signature stops is anyone
 * else making the server speak or dial what they want.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { OneTimeClaims } from "../cluster/index.js";
import type { CarrierProtocol } from "./carrier/carrier-protocol.js";

const SECRET_NAME = "telephony-documents";
const MAC_BYTES = 16;
/** The longest briefing, characters (the transfer_call tool cuts at the same length). */
export const MAX_BRIEFING_CHARS = 500;

export class DocumentSigner {
  readonly #claims: OneTimeClaims;
  #key: Promise<Buffer> | undefined;

  constructor(claims: OneTimeClaims) {
    this.#claims = claims;
  }

  /** `path?query&sig=...` for `params`. */
  async sign(path: string, params: Readonly<Record<string, string>>): Promise<string> {
    const canonical = canonicalOf(path, params);
    return `${canonical}&sig=${mac(await this.#secret(), canonical)}`;
  }

  /** True when `query` (the request's, `sig` included) was signed by a worker of this deployment for `path`. */
  async verify(path: string, query: Readonly<Record<string, unknown>>): Promise<boolean> {
    const { sig, ...rest } = query;
    if (typeof sig !== "string") return false;
    const params: Record<string, string> = {};
    for (const [name, value] of Object.entries(rest)) {
      if (typeof value !== "string") return false;
      params[name] = value;
    }
    const expected = Buffer.from(mac(await this.#secret(), canonicalOf(path, params)));
    const given = Buffer.from(sig);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  #secret(): Promise<Buffer> {
    this.#key ??= this.#claims.sharedSecret(SECRET_NAME).catch((err: unknown) => {
      // Not cached: the next request asks again (Redis may be back).
      this.#key = undefined;
      throw err;
    });
    return this.#key;
  }
}

function canonicalOf(path: string, params: Readonly<Record<string, string>>): string {
  const sorted = Object.keys(params)
    .sort()
    .map((name): [string, string] => [name, params[name]!]);
  return `${path}?${new URLSearchParams(sorted).toString()}`;
}

function mac(key: Buffer, canonical: string): string {
  return createHmac("sha256", key)
    .update(canonical, "utf8")
    .digest()
    .subarray(0, MAC_BYTES)
    .toString("base64url");
}

/** Where a transfer's callee hears the briefing, and the document the call runs, on one carrier. */
export interface TransferDocuments {
  /** The briefing's URL; undefined when the carrier has no briefing. */
  briefingUrl(text: string): Promise<string | undefined>;
  /** The transfer document's URL (a dial of `destination`, briefing first); undefined when the carrier fetches none. */
  documentUrl(destination: string, briefing: string | undefined): Promise<string | undefined>;
}

/** The documents' URLs on `base` (the carrier's public URL) for `carrier`. */
export function transferDocuments(
  carrier: CarrierProtocol,
  base: string,
  signer: DocumentSigner,
): TransferDocuments {
  const url = async (path: string, params: Record<string, string>): Promise<string> =>
    carrier.documentAuth === "url"
      ? `${base}${await signer.sign(path, params)}`
      : `${base}${path}?${Object.entries(params)
          .map(([name, value]) => `${name}=${encodeURIComponent(value)}`)
          .join("&")}`;
  const hasBriefing = carrier.briefing !== undefined || carrier.briefingAudio === true;
  return {
    async briefingUrl(text) {
      const path = carrier.paths.briefing;
      if (!path || !hasBriefing) return undefined;
      return url(path, { text: text.slice(0, MAX_BRIEFING_CHARS) });
    },
    async documentUrl(destination, briefing) {
      const path = carrier.paths.transfer;
      if (!path || !carrier.transferDocument) return undefined;
      return url(path, {
        to: destination,
        ...(briefing && hasBriefing ? { text: briefing.slice(0, MAX_BRIEFING_CHARS) } : {}),
      });
    },
  };
}
