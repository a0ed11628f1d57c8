/**
 * Telnyx against its own SDK (telnyx-node): webhooks talkgate accepts are
 * exactly those the SDK's `TelnyxWebhook.verify` accepts (Ed25519 over
 * `timestamp|body`, 300 s either way); the TeXML `<Stream>` attributes are
 * values of the SDK's declared stream types (the SDK has no TeXML builder);
 * and talkgate's REST requests (the account-scoped TeXML call, Call Control
 * hang-up, transfer and DTMF) equal the SDK's, field by field, at one
 * capture server.
 */
import Fastify from "fastify";
import Telnyx from "telnyx";
import { TelnyxWebhook } from "telnyx/lib/webhooks.js";
import type {
  StreamBidirectionalCodec,
  StreamBidirectionalMode,
  StreamCodec,
} from "telnyx/resources/calls/calls.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessOneTimeClaims } from "../../src/cluster/index.js";
import { answerWebhook } from "../../src/telephony/answer-webhook.js";
import { StreamTokens } from "../../src/telephony/stream-tokens.js";
import { telnyxProtocol } from "../../src/telephony/telnyx/telnyx-protocol.js";
import { telnyxDialBody, TelnyxRestClient } from "../../src/telephony/telnyx/telnyx-rest-client.js";
import { connectStreamTexml } from "../../src/telephony/telnyx/texml.js";
import { RestCaptureServer } from "../support/rest-capture-server.js";
import { TelnyxWebhookSigner } from "../support/telnyx-webhook-signer.js";

const API_KEY = "KEY0123456789_sdk_conformance";
const ACCOUNT = "f5586561-8ff0-4291-a51b-c7dfe4139ff9";
const APPLICATION = "2811212257810187875";
const CALL_ID = "v3:9X2vxPDFY2RHSJ1EdMS0RHRksMTg7ldNxdjWbVr9zBjbGjGsSe-aiQ";

describe("Telnyx webhooks: talkgate accepts exactly what the SDK's verify accepts", () => {
  const signer = new TelnyxWebhookSigner();
  const other = new TelnyxWebhookSigner();
  const app = Fastify();
  beforeAll(async () => {
    await app.register(
      answerWebhook({
        carrier: telnyxProtocol({ publicKey: signer.publicKey }),
        publicUrl: "https://talk.example.org",
        tokens: new StreamTokens({ claims: new InProcessOneTimeClaims() }),
      }),
    );
  });
  afterAll(() => app.close());

  const body = new URLSearchParams({
    AccountSid: ACCOUNT,
    CallSid: CALL_ID,
    From: "+15557654321",
    To: "+15550001111",
    Direction: "inbound",
  }).toString();
  const now = () => Math.floor(Date.now() / 1000);
  const cases: Array<{ name: string; headers: () => Record<string, string>; body?: string }> = [
    { name: "signed now", headers: () => signer.headers(body) },
    { name: "signed 290 s ago", headers: () => signer.headers(body, now() - 290) },
    { name: "signed 290 s ahead", headers: () => signer.headers(body, now() + 290) },
    { name: "signed 310 s ago (a replay)", headers: () => signer.headers(body, now() - 310) },
    { name: "signed 310 s ahead", headers: () => signer.headers(body, now() + 310) },
    { name: "signed by another key", headers: () => other.headers(body) },
    {
      name: "a tampered body",
      headers: () => signer.headers(body),
      body: body.replace("%2B15557654321", "%2B15550000000"),
    },
    {
      name: "the timestamp changed after signing",
      headers: () => ({ ...signer.headers(body), "telnyx-timestamp": String(now() - 1) }),
    },
    {
      name: "a signature that is not base64",
      headers: () => ({ ...signer.headers(body), "telnyx-signature-ed25519": "@@@" }),
    },
    {
      name: "no timestamp",
      headers: () => ({ "telnyx-signature-ed25519": signer.headers(body)["telnyx-signature-ed25519"]! }),
    },
    { name: "no signature", headers: () => ({ "telnyx-timestamp": String(now()) }) },
  ];

  it.each(cases)("$name", async ({ headers, body: sent = body }) => {
    const h = headers();
    const sdk = await new TelnyxWebhook(signer.publicKey).verify(sent, h).then(
      () => true,
      () => false,
    );
    const res = await app.inject({
      method: "POST",
      url: "/telephony/telnyx/voice",
      headers: { "content-type": "application/x-www-form-urlencoded", ...h },
      payload: sent,
    });
    expect(res.statusCode).toBe(sdk ? 200 : 403);
  });
});

describe("TeXML: the <Stream> attributes are values the SDK declares for a stream", () => {
  it("codec, bidirectionalMode and bidirectionalCodec", () => {
    // Compiled against telnyx's types: a value outside them would not build.
    const declared: {
      codec: StreamCodec;
      bidirectionalMode: StreamBidirectionalMode;
      bidirectionalCodec: StreamBidirectionalCodec;
    } = { codec: "PCMU", bidirectionalMode: "rtp", bidirectionalCodec: "PCMU" };
    const texml = connectStreamTexml({
      url: "wss://talk.example.org/telephony/telnyx/stream",
      parameters: { token: "t1ab" },
    });
    const stream = /<Stream ([^>]*)>/.exec(texml)![1]!;
    const attributes = Object.fromEntries(
      [...stream.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    expect(attributes).toEqual({ url: "wss://talk.example.org/telephony/telnyx/stream", ...declared });
  });
});

describe("Telnyx REST: talkgate's requests equal the SDK's at one capture server", () => {
  const server = new RestCaptureServer((r) => ({
    json: r.path.includes("/texml/")
      ? { from: "+15550001111", to: "+15557654321", status: "queued" }
      : { data: { result: "ok" } },
  }));
  let ours: TelnyxRestClient;
  let sdk: Telnyx;
  const signal = () => AbortSignal.timeout(10_000);
  beforeAll(async () => {
    await server.start();
    ours = new TelnyxRestClient({
      apiKey: API_KEY,
      connectionId: APPLICATION,
      accountSid: ACCOUNT,
      baseUrl: server.url,
    });
    sdk = new Telnyx({ apiKey: API_KEY, baseURL: `${server.url}/v2`, maxRetries: 0 });
  });
  afterAll(() => server.close());

  it("an outbound call (account-scoped TeXML, with status callbacks and detection)", async () => {
    const dial = {
      to: "+15557654321",
      from: "+15550001111",
      stream: { url: "wss://talk.example.org/telephony/telnyx/stream", parameters: { token: "t1ab" } },
      statusCallbackUrl: "https://talk.example.org/telephony/telnyx/status?dial=d1",
      machineDetection: {
        mode: "detect" as const,
        callbackUrl: "https://talk.example.org/telephony/telnyx/status?dial=d1",
      },
      signal: signal(),
    };
    const [a, b] = await server.pair(
      () => ours.dial(dial),
      () =>
        sdk.texml.accounts.calls.calls(ACCOUNT, {
          body: {
            ApplicationSid: APPLICATION,
            From: dial.from,
            To: dial.to,
            Texml: connectStreamTexml(dial.stream),
            StatusCallback: dial.statusCallbackUrl,
            StatusCallbackMethod: "POST",
            StatusCallbackEvent: "initiated ringing answered completed",
            MachineDetection: "Enable",
            AsyncAmd: true,
            AsyncAmdStatusCallback: dial.machineDetection.callbackUrl,
            AsyncAmdStatusCallbackMethod: "POST",
          },
        }),
    );
    expect(a).toEqual(b);
    expect(a.path).toBe(`/v2/texml/Accounts/${ACCOUNT}/Calls`);
    expect(a.body).toEqual(telnyxDialBody(APPLICATION, dial));
  });

  it("hang-up, transfer with its briefing and DTMF through Call Control, the call id's ':' as the SDK writes it", async () => {
    const [hangA, hangB] = await server.pair(
      () => ours.hangUp(CALL_ID, { signal: signal() }),
      () => sdk.calls.actions.hangup(CALL_ID, {}),
    );
    expect(hangA).toEqual(hangB);
    expect(hangA.path).toBe(`/v2/calls/${CALL_ID}/actions/hangup`);
    const briefing = "https://talk.example.org/telephony/telnyx/briefing?text=hi&sig=x";
    const [moveA, moveB] = await server.pair(
      () => ours.transfer(CALL_ID, "+15550003333", signal(), { briefingUrl: briefing, requestId: "cmd-1" }),
      () =>
        sdk.calls.actions.transfer(CALL_ID, { to: "+15550003333", audio_url: briefing, command_id: "cmd-1" }),
    );
    expect(moveA).toEqual(moveB);
    const [dtmfA, dtmfB] = await server.pair(
      () => ours.sendDtmf(CALL_ID, "12#w3", signal(), { requestId: "cmd-2" }),
      () => sdk.calls.actions.sendDtmf(CALL_ID, { digits: "12#w3", command_id: "cmd-2" }),
    );
    expect(dtmfA).toEqual(dtmfB);
  });
});
