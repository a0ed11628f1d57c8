import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signHs256 } from "./vonage-jwt.js";
import { isValidVonageWebhook, vonagePayload, vonageWebhookAuthorization } from "./vonage-signature.js";

const SECRET = "signature-secret-for-tests";
const GET_URL =
  "https://talkgate.example/telephony/vonage/answer?to=447700900000&from=447700900123&uuid=63f61863-4a51-4f6b-86e1-46edebcf9356&conversation_uuid=CON-f972836a";
const POST_URL = "https://talkgate.example/telephony/vonage/events";
const BODY = '{"uuid":"63f61863-4a51-4f6b-86e1-46edebcf9356","status":"completed","direction":"outbound"}';
const NOW = 1_800_000_000;

const get = (authorization: string | undefined, url = GET_URL) => ({
  method: "GET",
  url,
  authorization,
  rawBody: "",
});
const post = (authorization: string | undefined, rawBody = BODY) => ({
  method: "POST",
  url: POST_URL,
  authorization,
  rawBody,
});
const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const bearer = (claims: Record<string, unknown>, secret = SECRET) => `Bearer ${signHs256(claims, secret)}`;

describe("Vonage signed webhooks", () => {
  it("hashes a GET's query as compact JSON in query order, a POST's body as received", () => {
    expect(vonagePayload("GET", GET_URL, "")).toBe(
      '{"to":"447700900000","from":"447700900123","uuid":"63f61863-4a51-4f6b-86e1-46edebcf9356","conversation_uuid":"CON-f972836a"}',
    );
    expect(vonagePayload("POST", POST_URL, BODY)).toBe(BODY);
  });

  it("accepts a GET and a POST signed with the secret over their payloads", () => {
    const g = bearer({ iat: NOW, jti: "a", payload_hash: sha(vonagePayload("GET", GET_URL, "")!) });
    expect(isValidVonageWebhook(SECRET, get(g), { nowS: NOW })).toBe(true);
    const p = bearer({ iat: NOW - 10, payload_hash: sha(BODY), exp: NOW + 60 });
    expect(isValidVonageWebhook(SECRET, post(p), { nowS: NOW })).toBe(true);
    // The helper the local Vonage stand-in signs with agrees.
    expect(isValidVonageWebhook(SECRET, get(vonageWebhookAuthorization(SECRET, get(undefined))))).toBe(true);
  });

  it("refuses a tampered query, a tampered body, reordered parameters and a wrong secret", () => {
    const g = bearer({ iat: NOW, payload_hash: sha(vonagePayload("GET", GET_URL, "")!) });
    expect(
      isValidVonageWebhook(SECRET, get(g, GET_URL.replace("447700900123", "447700900999")), { nowS: NOW }),
    ).toBe(false);
    expect(
      isValidVonageWebhook(SECRET, get(g, GET_URL.replace(/\?(to=[^&]+)&(from=[^&]+)/, "?$2&$1")), {
        nowS: NOW,
      }),
    ).toBe(false);
    const p = bearer({ iat: NOW, payload_hash: sha(BODY) });
    expect(isValidVonageWebhook(SECRET, post(p, BODY.replace("completed", "busy")), { nowS: NOW })).toBe(
      false,
    );
    expect(isValidVonageWebhook("another-secret", post(p), { nowS: NOW })).toBe(false);
    expect(isValidVonageWebhook("", post(p), { nowS: NOW })).toBe(false);
  });

  it("refuses stale, future and expired tokens and tokens without iat or payload_hash", () => {
    const hash = sha(BODY);
    expect(
      isValidVonageWebhook(SECRET, post(bearer({ iat: NOW - 301, payload_hash: hash })), { nowS: NOW }),
    ).toBe(false);
    expect(
      isValidVonageWebhook(SECRET, post(bearer({ iat: NOW - 301, payload_hash: hash })), {
        nowS: NOW,
        maxAgeS: 600,
      }),
    ).toBe(true);
    expect(
      isValidVonageWebhook(SECRET, post(bearer({ iat: NOW + 120, payload_hash: hash })), { nowS: NOW }),
    ).toBe(false);
    expect(
      isValidVonageWebhook(SECRET, post(bearer({ iat: NOW, exp: NOW - 1, payload_hash: hash })), {
        nowS: NOW,
      }),
    ).toBe(false);
    expect(isValidVonageWebhook(SECRET, post(bearer({ payload_hash: hash })), { nowS: NOW })).toBe(false);
    expect(isValidVonageWebhook(SECRET, post(bearer({ iat: NOW })), { nowS: NOW })).toBe(false);
    expect(isValidVonageWebhook(SECRET, post(bearer({ iat: NOW, payload_hash: "zz" })), { nowS: NOW })).toBe(
      false,
    );
  });

  it("refuses a missing or malformed header, alg none and a forged signature, without throwing", () => {
    const hash = sha(BODY);
    const none = (claims: object) =>
      `Bearer ${Buffer.from('{"alg":"none","typ":"JWT"}').toString("base64url")}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.`;
    const good = signHs256({ iat: NOW, payload_hash: hash }, SECRET);
    const [h, , s] = good.split(".");
    const forged = `Bearer ${h}.${Buffer.from(JSON.stringify({ iat: NOW, payload_hash: sha("other") })).toString("base64url")}.${s}`;
    for (const header of [
      undefined,
      "",
      "Basic abc",
      "Bearer",
      "Bearer a.b",
      "Bearer !!!.???.***",
      `Bearer ${good}x`,
      none({ iat: NOW, payload_hash: hash }),
      forged,
      `Bearer ${"a".repeat(9000)}.b.c`,
    ])
      expect(isValidVonageWebhook(SECRET, post(header), { nowS: NOW })).toBe(false);
  });
});
