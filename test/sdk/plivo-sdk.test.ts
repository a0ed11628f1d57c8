/**
 * Plivo against its own SDK (plivo-node): V3 signatures talkgate accepts are
 * those the SDK's `validateV3Signature` accepts, for the URL as written or
 * with its default port toggled (Plivo's docs leave that open: see
 * plivo-signature.ts), on the answer webhook; the answer, transfer and
 * briefing XML are what the SDK's `Response` builder makes; and talkgate's
 * REST requests (outbound call with detection, hang-up, cancel, transfer,
 * DTMF) equal the SDK's, field by field, at one capture server.
 *
 * The SDK signs nothing (it only validates), so the signatures here are made
 * from the documented algorithm and then judged by the SDK.
 */
import { createHmac } from "node:crypto";
import Fastify from "fastify";
import * as plivo from "plivo";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessOneTimeClaims } from "../../src/cluster/index.js";
import { answerWebhook } from "../../src/telephony/answer-webhook.js";
import { plivoProtocol } from "../../src/telephony/plivo/plivo-protocol.js";
import { PlivoRestClient } from "../../src/telephony/plivo/plivo-rest-client.js";
import { withDefaultPortToggled } from "../../src/telephony/plivo/plivo-signature.js";
import { briefingXml, transferXml } from "../../src/telephony/plivo/plivo-transfer-xml.js";
import { streamXml } from "../../src/telephony/plivo/plivo-xml.js";
import { StreamTokens } from "../../src/telephony/stream-tokens.js";
import { redirectAxios, RestCaptureServer } from "../support/rest-capture-server.js";

const AUTH_ID = "MAPLIVOSDKCONFORM001";
const AUTH_TOKEN = "plivo-sdk-conformance-token";
const NONCE = "05429567804466091622";
const PATH = "/telephony/plivo/answer?mode=stt-tts&z=1";
const CALL = {
  CallUUID: "c0ffee00-0000-4000-8000-000000000001",
  Direction: "inbound",
  From: "15557654321",
  To: "15550001111",
  CallStatus: "in-progress",
};

/** The V3 signature as Plivo's docs describe it: URL, sorted query, '.', sorted name+value body, '.' nonce. */
function v3(url: string, params: Record<string, string>, token = AUTH_TOKEN, nonce = NONCE): string {
  const u = new URL(url);
  const base = url.slice(0, url.length - u.search.length);
  const query = [...u.searchParams].map(([n, v]) => `${n}=${v}`).sort();
  const body = Object.keys(params)
    .sort()
    .map((n) => `${n}${params[n]}`)
    .join("");
  const signed = `${base}?${query.join("&")}${query.length > 0 && body ? "." : ""}${body}.${nonce}`;
  return createHmac("sha256", token).update(signed).digest("base64");
}

describe("Plivo V3 webhooks: talkgate accepts what the SDK's validateV3Signature accepts", () => {
  for (const publicUrl of ["https://talk.example.org", "https://talk.example.org:443"]) {
    describe(`PUBLIC_URL ${publicUrl}`, () => {
      const app = Fastify();
      beforeAll(async () => {
        await app.register(
          answerWebhook({
            carrier: plivoProtocol({ authToken: AUTH_TOKEN }),
            publicUrl,
            tokens: new StreamTokens({ claims: new InProcessOneTimeClaims() }),
          }),
        );
      });
      afterAll(() => app.close());

      const url = `${publicUrl}${PATH}`;
      const cases: Array<{
        name: string;
        signature: string;
        nonce?: string;
        params?: Record<string, string>;
      }> = [
        { name: "signed over the URL as configured", signature: v3(url, CALL) },
        {
          name: "signed over the URL with the default port toggled",
          signature: v3(withDefaultPortToggled(url), CALL),
        },
        { name: "one of two signatures (a token being rotated)", signature: `bogus,${v3(url, CALL)}` },
        { name: "signed with another auth token", signature: v3(url, CALL, "another") },
        { name: "another nonce", signature: v3(url, CALL), nonce: "1" },
        { name: "a tampered body", signature: v3(url, CALL), params: { ...CALL, From: "15550000000" } },
        { name: "signed for another query", signature: v3(url.replace("z=1", "z=2"), CALL) },
        {
          name: "signed for another port",
          signature: v3(`https://talk.example.org:8443${PATH}`, CALL),
        },
      ];

      it.each(cases)("$name", async ({ signature, nonce = NONCE, params = CALL }) => {
        const sdk =
          plivo.validateV3Signature("POST", url, nonce, AUTH_TOKEN, signature, params) ||
          plivo.validateV3Signature(
            "POST",
            withDefaultPortToggled(url),
            nonce,
            AUTH_TOKEN,
            signature,
            params,
          );
        const res = await app.inject({
          method: "POST",
          url: PATH,
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            "x-plivo-signature-v3": signature,
            "x-plivo-signature-v3-nonce": nonce,
          },
          payload: new URLSearchParams(params).toString(),
        });
        expect(res.statusCode).toBe(sdk ? 200 : 403);
      });
    });
  }
});

/** The SDK's XML builder (a constructor in the SDK; its .d.ts declares a plain function). */
interface PlivoElement {
  addStream(body: string, attributes: Record<string, unknown>): PlivoElement;
  addDial(attributes: Record<string, unknown>): PlivoElement;
  addNumber(body: string): PlivoElement;
  addUser(body: string): PlivoElement;
  addSpeak(body: string): PlivoElement;
  toXML(): string;
}
const PlivoResponse = plivo.Response as unknown as new () => PlivoElement;

/** The XML with its declaration dropped and the five entities decoded: builders escape differently. */
function canonical(xml: string): string {
  return xml
    .replace(/^<\?xml[^>]*\?>\s*/, "")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&");
}

describe("Plivo XML: what the SDK's Response builder makes", () => {
  it("the answer's bidirectional <Stream> with its extraHeaders", () => {
    const stream = {
      url: "wss://talk.example.org/telephony/plivo/stream",
      parameters: { token: "t1abcdef", callId: CALL.CallUUID },
    };
    const ours = streamXml(stream);
    const extraHeaders = /extraHeaders="([^"]*)"/.exec(ours)![1]!;
    const theirs = new PlivoResponse();
    theirs.addStream(stream.url, {
      bidirectional: true,
      keepCallAlive: true,
      contentType: "audio/x-mulaw;rate=8000",
      extraHeaders,
    });
    expect(canonical(ours)).toBe(canonical(theirs.toXML()));
  });

  it("a transfer's <Dial confirmSound> to a number and to a SIP user, and the briefing's <Speak>", () => {
    const briefing = "https://talk.example.org/telephony/plivo/briefing?text=hi&sig=x";
    const number = new PlivoResponse();
    number.addDial({ confirmSound: briefing }).addNumber("15550003333");
    expect(canonical(transferXml("+15550003333", briefing))).toBe(canonical(number.toXML()));
    const user = new PlivoResponse();
    user.addDial({}).addUser("sip:desk@phone.plivo.com");
    expect(canonical(transferXml("sip:desk@phone.plivo.com", undefined))).toBe(canonical(user.toXML()));
    const speak = new PlivoResponse();
    speak.addSpeak("A caller about order 42 & a refund.");
    expect(canonical(briefingXml("A caller about order 42 & a refund."))).toBe(canonical(speak.toXML()));
  });
});

describe("Plivo REST: talkgate's requests equal the SDK's at one capture server", () => {
  const REQUEST_UUID = "9834029e-58b6-11e1-b8b7-a5bd0e4e126f";
  const server = new RestCaptureServer((r) => ({
    status: r.method === "DELETE" ? 204 : r.path.endsWith("/Call/") ? 201 : 202,
    json: r.method === "DELETE" ? {} : { api_id: "a1", message: "call fired", request_uuid: REQUEST_UUID },
  }));
  let undo: () => void;
  let ours: PlivoRestClient;
  let sdk: plivo.Client;
  const signal = () => AbortSignal.timeout(10_000);
  beforeAll(async () => {
    await server.start();
    undo = redirectAxios("https://api.plivo.com", server.url);
    ours = new PlivoRestClient({ authId: AUTH_ID, authToken: AUTH_TOKEN, baseUrl: server.url });
    sdk = new plivo.Client(AUTH_ID, AUTH_TOKEN);
  });
  afterAll(async () => {
    undo();
    await server.close();
  });

  it("an outbound call with answering-machine detection", async () => {
    const answerUrl = "https://talk.example.org/telephony/plivo/answer?token=t1ab";
    const hangupUrl = "https://talk.example.org/telephony/plivo/status?job=j1";
    const [a, b] = await server.pair(
      () =>
        ours.dial({
          to: "+15557654321",
          from: "+15550001111",
          stream: { url: "wss://x", parameters: {} },
          answerUrl,
          statusCallbackUrl: hangupUrl,
          machineDetection: { mode: "detect", callbackUrl: hangupUrl },
          signal: signal(),
        }),
      () =>
        sdk.calls.create("15550001111", "15557654321", answerUrl, {
          answerMethod: "POST",
          hangupUrl,
          hangupMethod: "POST",
          machineDetection: "true",
          machineDetectionUrl: hangupUrl,
          machineDetectionMethod: "POST",
        }),
    );
    expect(a).toEqual(b);
    expect(a.path).toBe(`/v1/Account/${AUTH_ID}/Call/`);
  });

  it("hang-up of a live call, cancel of a ringing one, a transfer and DTMF", async () => {
    const callUuid = "c0ffee00-0000-4000-8000-0000000000aa";
    const [hangA, hangB] = await server.pair(
      () => ours.hangUp(callUuid, { signal: signal() }),
      () => sdk.calls.hangup(callUuid),
    );
    expect(hangA).toEqual(hangB);
    const [cancelA, cancelB] = await server.pair(
      () => ours.hangUp(REQUEST_UUID, { signal: signal(), ringing: true }),
      () => sdk.calls.cancel(REQUEST_UUID),
    );
    expect(cancelA).toEqual(cancelB);
    const document = "https://talk.example.org/telephony/plivo/transfer?to=%2B15550003333&sig=x";
    const [moveA, moveB] = await server.pair(
      () => ours.transfer(callUuid, "+15550003333", signal(), { documentUrl: document }),
      // The SDK's .d.ts wants every leg's fields; its code sends only those given.
      () => sdk.calls.transfer(callUuid, { legs: "aleg", alegUrl: document, alegMethod: "POST" } as never),
    );
    expect(moveA).toEqual(moveB);
    const [dtmfA, dtmfB] = await server.pair(
      () => ours.sendDtmf(callUuid, "12#", signal()),
      () => sdk.calls.sendDigits(callUuid, "12#", { leg: "aleg" }),
    );
    expect(dtmfA).toEqual(dtmfB);
  });
});
