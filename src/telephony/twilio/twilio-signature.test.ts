import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { computeTwilioSignature, isValidTwilioSignature } from "./twilio-signature.js";

/** The documented algorithm, written independently of the SDK: HMAC-SHA1(url + sorted name+value pairs), base64. */
function referenceSignature(authToken: string, url: string, params: Record<string, string>): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, name) => acc + name + params[name], url);
  return createHmac("sha1", authToken).update(data, "utf8").digest("base64");
}

const TOKEN = "12345";
const URL_WITH_QUERY = "https://mycompany.com/myapp.php?foo=1&bar=2";
const PARAMS = {
  CallSid: "CA1234567890ABCDE",
  Caller: "+14158675309",
  Digits: "1234",
  From: "+14158675309",
  To: "+18005551212",
};

describe("X-Twilio-Signature", () => {
  it("accepts the example signature published with Twilio's request-validation docs and SDK", () => {
    expect(isValidTwilioSignature(TOKEN, "RSOYDt4T1cUTdK1PDd93/VVr8B8=", URL_WITH_QUERY, PARAMS)).toBe(true);
  });

  it("accepts a signature computed independently from the documented algorithm", () => {
    const url = "https://talk.example.org/telephony/twilio/voice";
    const params = {
      AccountSid: "AC1",
      CallSid: "CA9",
      From: "+15550001111",
      To: "+15550002222",
      Direction: "inbound",
    };
    const signature = referenceSignature("secret-token", url, params);
    expect(isValidTwilioSignature("secret-token", signature, url, params)).toBe(true);
    expect(computeTwilioSignature("secret-token", url, params)).toBe(signature);
  });

  it("rejects a signature made with another auth token", () => {
    const signature = referenceSignature("other-token", URL_WITH_QUERY, PARAMS);
    expect(isValidTwilioSignature(TOKEN, signature, URL_WITH_QUERY, PARAMS)).toBe(false);
  });

  it("rejects a request whose parameter was tampered with after signing", () => {
    const signature = referenceSignature(TOKEN, URL_WITH_QUERY, PARAMS);
    expect(isValidTwilioSignature(TOKEN, signature, URL_WITH_QUERY, { ...PARAMS, To: "+19999999999" })).toBe(
      false,
    );
  });

  it("rejects a request with an added parameter", () => {
    const signature = referenceSignature(TOKEN, URL_WITH_QUERY, PARAMS);
    expect(isValidTwilioSignature(TOKEN, signature, URL_WITH_QUERY, { ...PARAMS, Extra: "1" })).toBe(false);
  });

  it("rejects a signature for another URL (path or query changed)", () => {
    const signature = referenceSignature(TOKEN, URL_WITH_QUERY, PARAMS);
    expect(
      isValidTwilioSignature(TOKEN, signature, "https://mycompany.com/myapp.php?foo=2&bar=2", PARAMS),
    ).toBe(false);
    expect(
      isValidTwilioSignature(TOKEN, signature, "https://mycompany.com/other.php?foo=1&bar=2", PARAMS),
    ).toBe(false);
  });

  it("rejects a missing, empty or garbage header without throwing", () => {
    expect(isValidTwilioSignature(TOKEN, undefined, URL_WITH_QUERY, PARAMS)).toBe(false);
    expect(isValidTwilioSignature(TOKEN, "", URL_WITH_QUERY, PARAMS)).toBe(false);
    expect(isValidTwilioSignature(TOKEN, "not base64 at all", URL_WITH_QUERY, PARAMS)).toBe(false);
    expect(isValidTwilioSignature(TOKEN, "x", "not a url", PARAMS)).toBe(false);
  });

  it("signs repeated parameters as every value, sorted", () => {
    const url = "https://a.example/hook";
    const data = `${url}Tagalpha` + "Tagbeta";
    const signature = createHmac("sha1", TOKEN).update(data).digest("base64");
    expect(isValidTwilioSignature(TOKEN, signature, url, { Tag: ["beta", "alpha"] })).toBe(true);
  });
});
