import { describe, expect, it } from "vitest";
import { isTalkError } from "../../core/index.js";
import { TelnyxWebhookSigner } from "../../../test/support/telnyx-webhook-signer.js";
import { checkTelnyxSignature, telnyxPublicKey } from "./telnyx-signature.js";

const signer = new TelnyxWebhookSigner();
const key = telnyxPublicKey(signer.publicKey);
const body = "CallSid=v3%3Aabc&From=%2B15557654321&To=%2B15550001111&Direction=inbound";
const now = 1_760_000_000_000;
const at = now / 1000;

function check(headers: Record<string, string>, rawBody = body, toleranceS = 300) {
  return checkTelnyxSignature({ publicKey: key, headers, rawBody, nowMs: now, toleranceS });
}

describe("Telnyx webhook signatures (Ed25519 over timestamp|body)", () => {
  it("accepts Telnyx's signature of the raw body at a timestamp within the tolerance", () => {
    expect(check(signer.headers(body, at))).toBe("ok");
    expect(check(signer.headers(body, at - 299))).toBe("ok");
    expect(check(signer.headers(body, at + 299))).toBe("ok");
  });

  it("refuses a tampered body, another timestamp than the one signed, and another account's key", () => {
    expect(check(signer.headers(body, at), body.replace("inbound", "outbound"))).toBe("bad_signature");
    const headers = signer.headers(body, at);
    expect(check({ ...headers, "telnyx-timestamp": String(at + 1) })).toBe("bad_signature");
    expect(check(new TelnyxWebhookSigner().headers(body, at))).toBe("bad_signature");
  });

  it("refuses a stale or future timestamp even with a valid signature (replays)", () => {
    expect(check(signer.headers(body, at - 301))).toBe("stale_timestamp");
    expect(check(signer.headers(body, at + 301))).toBe("stale_timestamp");
    expect(check(signer.headers(body, at - 20), body, 10)).toBe("stale_timestamp");
  });

  it("refuses missing and malformed headers without throwing", () => {
    const headers = signer.headers(body, at);
    expect(check({})).toBe("missing");
    expect(check({ "telnyx-timestamp": headers["telnyx-timestamp"]! })).toBe("missing");
    expect(check({ ...headers, "telnyx-timestamp": "12.5" })).toBe("malformed_timestamp");
    expect(check({ ...headers, "telnyx-timestamp": "-1" })).toBe("malformed_timestamp");
    expect(check({ ...headers, "telnyx-signature-ed25519": "not base64!" })).toBe("malformed_signature");
    expect(check({ ...headers, "telnyx-signature-ed25519": Buffer.alloc(32).toString("base64") })).toBe(
      "malformed_signature",
    );
    expect(check({ ...headers, "telnyx-signature-ed25519": Buffer.alloc(64).toString("base64") })).toBe(
      "bad_signature",
    );
  });

  it("takes the public key as Mission Control shows it (base64, 32 bytes) and refuses anything else", () => {
    for (const bad of ["", "abc", Buffer.alloc(31).toString("base64"), Buffer.alloc(33).toString("base64")]) {
      let thrown: unknown;
      try {
        telnyxPublicKey(bad);
      } catch (err) {
        thrown = err;
      }
      expect(isTalkError(thrown) && thrown.code).toBe("config_invalid");
    }
  });
});
