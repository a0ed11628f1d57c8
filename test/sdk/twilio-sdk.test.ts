/**
 * Twilio against its own SDK (twilio-node): webhooks signed by the SDK's code
 * (HMAC-SHA1 with the auth token, HMAC-SHA1 and -SHA256 with a SharedKey)
 * are accepted by talkgate's voice webhook exactly when the SDK's own
 * `webhook()` middleware accepts them; the TwiML talkgate answers is what the
 * SDK's VoiceResponse builds; and talkgate's REST requests (outbound call
 * with detection, hang-up, cancel, transfer) equal the SDK's for the same
 * operation, field by field, at one capture server.
 */
import Fastify from "fastify";
import twilio from "twilio";
import { getExpectedTwilioSignature, webhook } from "twilio/lib/webhooks/webhooks.js";
import VoiceResponse from "twilio/lib/twiml/VoiceResponse.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { InProcessOneTimeClaims } from "../../src/cluster/index.js";
import { answerWebhook } from "../../src/telephony/answer-webhook.js";
import { StreamTokens } from "../../src/telephony/stream-tokens.js";
import { twilioProtocol } from "../../src/telephony/twilio/twilio-protocol.js";
import { TwilioRestClient } from "../../src/telephony/twilio/twilio-rest-client.js";
import { connectStreamTwiml, dialTwiml, briefingTwiml } from "../../src/telephony/twilio/twiml.js";
import { redirectAxios, RestCaptureServer } from "../support/rest-capture-server.js";

const ACCOUNT_SID = `AC${"1".repeat(32)}`;
const AUTH_TOKEN = "twilio-sdk-conformance-token";
const SHARED_KEY = "twilio-shared-key-secret";
const PUBLIC_URL = "https://talk.example.org";
const PATH = "/telephony/twilio/voice?mode=stt-tts";
const CALL = {
  AccountSid: ACCOUNT_SID,
  CallSid: `CA${"2".repeat(32)}`,
  From: "+15550001111",
  To: "+15550002222",
  Direction: "inbound",
  CallStatus: "ringing",
};

type Headers = Record<string, string>;

/** What the SDK's Express middleware decides: next() is accepted; a 4xx/5xx answer is refused. */
function sdkAccepts(headers: Headers, params: Record<string, string>, url: string): boolean {
  let accepted = false;
  const res = { type: () => res, status: () => res, send: () => res };
  const req = {
    header: (name: string) => headers[name.toLowerCase()],
    headers,
    body: params,
    protocol: "https",
    originalUrl: PATH,
  };
  webhook(AUTH_TOKEN, { sharedKeySecret: SHARED_KEY, url })(req as never, res as never, () => {
    accepted = true;
  });
  return accepted;
}

describe("Twilio webhooks signed by the SDK: talkgate accepts exactly what the SDK accepts", () => {
  const app = Fastify();
  beforeAll(async () => {
    await app.register(
      answerWebhook({
        carrier: twilioProtocol({ authToken: AUTH_TOKEN, sharedKeySecrets: [SHARED_KEY] }),
        publicUrl: PUBLIC_URL,
        tokens: new StreamTokens({ claims: new InProcessOneTimeClaims() }),
      }),
    );
  });
  afterAll(() => app.close());

  const url = `${PUBLIC_URL}${PATH}`;
  const sign = (secret: string, algorithm: string, signedUrl = url, params = CALL) =>
    getExpectedTwilioSignature(secret, signedUrl, params, algorithm);
  const settings = (algorithm?: string) =>
    `key=webhooks_sharedkey_0123456789abcdefghijklmnop${algorithm ? `,algorithm=${algorithm}` : ""}`;
  const cases: Array<{ name: string; headers: Headers; params?: Record<string, string> }> = [
    { name: "auth token, HMAC-SHA1", headers: { "x-twilio-signature": sign(AUTH_TOKEN, "HMAC_SHA1") } },
    {
      name: "SharedKey, HMAC-SHA256",
      headers: {
        "x-twilio-signature": sign(SHARED_KEY, "HMAC_SHA256"),
        "x-twilio-webhooks-signature-settings": settings("HMAC_SHA256"),
      },
    },
    {
      name: "SharedKey, HMAC-SHA1",
      headers: {
        "x-twilio-signature": sign(SHARED_KEY, "HMAC_SHA1"),
        "x-twilio-webhooks-signature-settings": settings("HMAC_SHA1"),
      },
    },
    {
      name: "SharedKey, settings naming no algorithm (SHA-1)",
      headers: {
        "x-twilio-signature": sign(SHARED_KEY, "HMAC_SHA1"),
        "x-twilio-webhooks-signature-settings": settings(),
      },
    },
    {
      name: "SharedKey, algorithm in lower case",
      headers: {
        "x-twilio-signature": sign(SHARED_KEY, "HMAC_SHA256"),
        "x-twilio-webhooks-signature-settings": settings("hmac_sha256"),
      },
    },
    {
      name: "signed over the URL with :443",
      headers: { "x-twilio-signature": sign(AUTH_TOKEN, "HMAC_SHA1", `https://talk.example.org:443${PATH}`) },
    },
    {
      name: "auth token's signature under a settings header",
      headers: {
        "x-twilio-signature": sign(AUTH_TOKEN, "HMAC_SHA1"),
        "x-twilio-webhooks-signature-settings": settings("HMAC_SHA1"),
      },
    },
    {
      name: "SharedKey's signature without the header",
      headers: { "x-twilio-signature": sign(SHARED_KEY, "HMAC_SHA256") },
    },
    {
      name: "another SharedKey",
      headers: {
        "x-twilio-signature": sign("another-secret", "HMAC_SHA256"),
        "x-twilio-webhooks-signature-settings": settings("HMAC_SHA256"),
      },
    },
    {
      name: "an algorithm Twilio does not sign with",
      headers: {
        "x-twilio-signature": sign(SHARED_KEY, "HMAC_SHA256"),
        "x-twilio-webhooks-signature-settings": settings("HMAC_SHA512"),
      },
    },
    {
      name: "a tampered parameter",
      headers: { "x-twilio-signature": sign(AUTH_TOKEN, "HMAC_SHA1") },
      params: { ...CALL, From: "+15559999999" },
    },
    {
      name: "signed for another path",
      headers: { "x-twilio-signature": sign(AUTH_TOKEN, "HMAC_SHA1", `${PUBLIC_URL}/other`) },
    },
    { name: "no signature", headers: {} },
  ];

  it.each(cases)("$name", async ({ headers, params = CALL }) => {
    vi.spyOn(console, "warn").mockImplementation(() => {}); // the SDK warns of an unknown algorithm
    vi.spyOn(console, "error").mockImplementation(() => {});
    const expected = sdkAccepts(headers, params, url);
    const res = await app.inject({
      method: "POST",
      url: PATH,
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      payload: new URLSearchParams(params).toString(),
    });
    expect(res.statusCode).toBe(expected ? 200 : 403);
    vi.restoreAllMocks();
  });

  it("the matrix holds both verdicts (a check that cannot fail is no check)", () => {
    const verdicts = cases.map((c) => sdkAccepts(c.headers, c.params ?? CALL, url));
    expect(verdicts.filter(Boolean).length).toBe(6);
    expect(verdicts.filter((v) => !v).length).toBe(7);
  });
});

describe("TwiML: what the SDK's VoiceResponse builds", () => {
  it("the answer's <Connect><Stream> with Twilio's parameter names", () => {
    const expected = new VoiceResponse();
    const stream = expected.connect().stream({ url: "wss://talk.example.org/telephony/twilio/stream" });
    stream.parameter({ name: "token", value: "t1ab" });
    stream.parameter({ name: "callSid", value: CALL.CallSid });
    stream.parameter({ name: "from", value: "+15550001111" });
    expect(
      connectStreamTwiml({
        url: "wss://talk.example.org/telephony/twilio/stream",
        parameters: { token: "t1ab", callId: CALL.CallSid, from: "+15550001111" },
      }),
    ).toBe(expected.toString());
  });

  it("a transfer's <Dial> (a number with its whisper, a SIP URI) and the briefing's <Say>", () => {
    const number = new VoiceResponse();
    number.dial().number({ url: "https://talk.example.org/telephony/twilio/briefing?x=1" }, "+15550003333");
    expect(dialTwiml("+15550003333", "https://talk.example.org/telephony/twilio/briefing?x=1")).toBe(
      number.toString(),
    );
    const sip = new VoiceResponse();
    sip.dial().sip("sip:desk@pbx.example.org");
    expect(dialTwiml("sip:desk@pbx.example.org")).toBe(sip.toString());
    const say = new VoiceResponse();
    say.say("A caller about order 42 & a refund <soon>.");
    expect(briefingTwiml("A caller about order 42 & a refund <soon>.")).toBe(say.toString());
  });
});

describe("Twilio REST: talkgate's requests equal the SDK's at one capture server", () => {
  const server = new RestCaptureServer((r) => ({
    status: r.path.endsWith("/Calls.json") ? 201 : 200,
    json: { sid: `CA${"3".repeat(32)}`, status: r.path.endsWith("/Calls.json") ? "queued" : "completed" },
  }));
  let undo: () => void;
  let ours: TwilioRestClient;
  let sdk: ReturnType<typeof twilio>;
  const signal = () => AbortSignal.timeout(10_000);
  beforeAll(async () => {
    await server.start();
    undo = redirectAxios("https://api.twilio.com", server.url);
    ours = new TwilioRestClient({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, baseUrl: server.url });
    sdk = twilio(ACCOUNT_SID, AUTH_TOKEN);
  });
  afterAll(async () => {
    undo();
    await server.close();
  });

  const stream = {
    url: "wss://talk.example.org/telephony/twilio/stream",
    parameters: { token: "t1ab", callId: "dial-1" },
  };
  const callback = "https://talk.example.org/telephony/twilio/status?job=j1";

  it("an outbound call with answering-machine detection", async () => {
    const [a, b] = await server.pair(
      () =>
        ours.dial({
          to: "+15550002222",
          from: "+15550001111",
          stream,
          statusCallbackUrl: callback,
          machineDetection: { mode: "detect_message_end", callbackUrl: callback },
          signal: signal(),
        }),
      () =>
        sdk.calls.create({
          to: "+15550002222",
          from: "+15550001111",
          twiml: connectStreamTwiml(stream),
          statusCallback: callback,
          statusCallbackMethod: "POST",
          statusCallbackEvent: ["initiated", "ringing", "answered", "completed"],
          machineDetection: "DetectMessageEnd",
          asyncAmd: "true",
          asyncAmdStatusCallback: callback,
          asyncAmdStatusCallbackMethod: "POST",
        }),
    );
    expect(a).toEqual(b);
    expect(a.path).toBe(`/2010-04-01/Accounts/${ACCOUNT_SID}/Calls.json`);
  });

  it("hang-up of a live call, cancel of a ringing one, and a transfer", async () => {
    const sid = `CA${"4".repeat(32)}`;
    const [hangA, hangB] = await server.pair(
      () => ours.hangUp(sid, { signal: signal() }),
      () => sdk.calls(sid).update({ status: "completed" }),
    );
    expect(hangA).toEqual(hangB);
    const [cancelA, cancelB] = await server.pair(
      () => ours.hangUp(sid, { signal: signal(), ringing: true }),
      () => sdk.calls(sid).update({ status: "canceled" }),
    );
    expect(cancelA).toEqual(cancelB);
    const briefing = "https://talk.example.org/telephony/twilio/briefing?text=hi";
    const [moveA, moveB] = await server.pair(
      () => ours.transfer(sid, "+15550003333", signal(), { briefingUrl: briefing }),
      () => sdk.calls(sid).update({ twiml: dialTwiml("+15550003333", briefing) }),
    );
    expect(moveA).toEqual(moveB);
    expect(moveA.body).toHaveProperty("Twiml");
  });
});
