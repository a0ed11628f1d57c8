import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { computePlivoSignature, isValidPlivoSignature, plivoSignedString } from "./plivo-signature.js";

const TOKEN = "plivo-test-auth-token";
const NONCE = "05429567804466091622";

/** The signature as Plivo's SDKs build it, written out by hand for one request. */
function byHand(signed: string): string {
  return createHmac("sha256", TOKEN).update(`${signed}.${NONCE}`).digest("base64");
}

describe("Plivo V3 signature", () => {
  it("signs URL, sorted decoded query, '.', then sorted body name+value, then the nonce (POST)", () => {
    const url = "https://talkgate.test/telephony/plivo/answer?mode=stt-tts&b=x%2By&a=1";
    const params = { To: "+15550001111", CallUUID: "u-1", From: "+15557654321" };
    const signed =
      "https://talkgate.test/telephony/plivo/answer?a=1&b=x+y&mode=stt-tts.CallUUIDu-1From+15557654321To+15550001111";
    expect(plivoSignedString("POST", url, params)).toBe(signed);
    expect(computePlivoSignature(TOKEN, NONCE, "POST", url, params)).toBe(byHand(signed));
  });

  it("a POST without a query puts '?' before the body; a repeated name's values are sorted", () => {
    const signed = plivoSignedString("POST", "http://h:8080/p", { b: ["2", "1"], a: "z" });
    expect(signed).toBe("http://h:8080/p?azb1b2");
  });

  it("a GET (the stream handshake) signs the URL and its sorted query only", () => {
    expect(plivoSignedString("GET", "https://h/telephony/plivo/stream")).toBe(
      "https://h/telephony/plivo/stream",
    );
    expect(plivoSignedString("GET", "https://h/s?z=1&a=2")).toBe("https://h/s?a=2&z=1");
    expect(plivoSignedString("GET", "https://h/s", { ignored: "x" })).toBe("https://h/s");
  });

  it("accepts the valid signature, any of a comma-separated list, and nothing else", () => {
    const url = "https://talkgate.test/telephony/plivo/answer";
    const params = { CallUUID: "u-1", To: "+1555" };
    const good = computePlivoSignature(TOKEN, NONCE, "POST", url, params);
    expect(isValidPlivoSignature(TOKEN, good, NONCE, "POST", url, params)).toBe(true);
    expect(isValidPlivoSignature(TOKEN, `bogus, ${good}`, NONCE, "POST", url, params)).toBe(true);
    // Tampered body, URL, nonce; wrong key; missing pieces.
    expect(isValidPlivoSignature(TOKEN, good, NONCE, "POST", url, { ...params, To: "+1556" })).toBe(false);
    expect(isValidPlivoSignature(TOKEN, good, NONCE, "POST", `${url}?mode=realtime`, params)).toBe(false);
    expect(isValidPlivoSignature(TOKEN, good, "other-nonce", "POST", url, params)).toBe(false);
    expect(isValidPlivoSignature("another-token", good, NONCE, "POST", url, params)).toBe(false);
    expect(isValidPlivoSignature(TOKEN, undefined, NONCE, "POST", url, params)).toBe(false);
    expect(isValidPlivoSignature(TOKEN, good, undefined, "POST", url, params)).toBe(false);
    expect(isValidPlivoSignature("", good, NONCE, "POST", url, params)).toBe(false);
    expect(isValidPlivoSignature(TOKEN, good, NONCE, "POST", "not a url", params)).toBe(false);
  });
});
