import { createHmac } from "node:crypto";
import { validateV3Signature } from "plivo/dist/utils/v3Security.js";
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

  it("signs a URL with an explicit port as written (Plivo's docs: 'the full URL with the scheme, port'), and accepts the other form", () => {
    // PUBLIC_URL https://talk.example.org:443: the answer_url Plivo holds, and signs, names :443.
    const withPort = "https://talk.example.org:443/telephony/plivo/answer?mode=stt-tts";
    const withoutPort = "https://talk.example.org/telephony/plivo/answer?mode=stt-tts";
    const params = { CallUUID: "u-1", From: "+15557654321", To: "+15550001111" };
    const signedWithPort = byHand(
      "https://talk.example.org:443/telephony/plivo/answer?mode=stt-tts.CallUUIDu-1From+15557654321To+15550001111",
    );
    const signedWithoutPort = byHand(
      "https://talk.example.org/telephony/plivo/answer?mode=stt-tts.CallUUIDu-1From+15557654321To+15550001111",
    );
    // The SDK agrees on which signature belongs to which URL.
    expect(validateV3Signature("POST", withPort, NONCE, TOKEN, signedWithPort, params)).toBe(true);
    expect(validateV3Signature("POST", withPort, NONCE, TOKEN, signedWithoutPort, params)).toBe(false);
    expect(computePlivoSignature(TOKEN, NONCE, "POST", withPort, params)).toBe(signedWithPort);
    // Whichever form PUBLIC_URL has, both signatures are Plivo's (the docs do not say it normalizes).
    for (const url of [withPort, withoutPort]) {
      expect(isValidPlivoSignature(TOKEN, signedWithPort, NONCE, "POST", url, params)).toBe(true);
      expect(isValidPlivoSignature(TOKEN, signedWithoutPort, NONCE, "POST", url, params)).toBe(true);
    }
    // Another port is another URL; the stream handshake (GET, wss) the same.
    const otherPort = "https://talk.example.org:8443/telephony/plivo/answer?mode=stt-tts";
    expect(isValidPlivoSignature(TOKEN, signedWithPort, NONCE, "POST", otherPort, params)).toBe(false);
    const stream = byHand("wss://talk.example.org:443/telephony/plivo/stream");
    expect(
      isValidPlivoSignature(TOKEN, stream, NONCE, "GET", "wss://talk.example.org/telephony/plivo/stream"),
    ).toBe(true);
    expect(
      isValidPlivoSignature(TOKEN, stream, NONCE, "GET", "wss://talk.example.org:443/telephony/plivo/stream"),
    ).toBe(true);
  });
});
