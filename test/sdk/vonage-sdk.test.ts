/**
 * Vonage against its own SDK (@vonage/server-sdk, @vonage/jwt, @vonage/voice):
 * signed webhooks talkgate accepts are ones the SDK's `verifySignature`
 * accepts, refused beyond it only by talkgate's stricter checks (`iat` age,
 * `payload_hash` over the payload, HS256 only); the REST JWT talkgate signs
 * verifies with the SDK and carries `tokenGenerate`'s claims; the NCCOs are
 * what the SDK's builder makes; and talkgate's Voice API requests (outbound
 * call with detection, hang-up, transfer, DTMF) equal the SDK's, field by
 * field, at one capture server.
 *
 * The SDKs sign no webhook (Vonage does): the tokens here are HS256 JWTs
 * built from Vonage's signed-webhooks guide, then judged by the SDK.
 */
import { createHash, createHmac, generateKeyPairSync } from "node:crypto";
import Fastify from "fastify";
import { tokenGenerate, verifySignature } from "@vonage/jwt";
import { Vonage } from "@vonage/server-sdk";
import { Connect, NCCOBuilder, Talk } from "@vonage/voice";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InProcessOneTimeClaims } from "../../src/cluster/index.js";
import { answerWebhook } from "../../src/telephony/answer-webhook.js";
import { StreamTokens } from "../../src/telephony/stream-tokens.js";
import { briefingNcco, connectStreamNcco, transferNcco } from "../../src/telephony/vonage/ncco.js";
import { decodeClaims, parsePrivateKey, signRs256 } from "../../src/telephony/vonage/vonage-jwt.js";
import { vonageProtocol } from "../../src/telephony/vonage/vonage-protocol.js";
import { VonageRestClient } from "../../src/telephony/vonage/vonage-rest-client.js";
import { RestCaptureServer, type CapturedRequest } from "../support/rest-capture-server.js";

const SECRET = "vonage-sdk-conformance-signature-secret";
const APPLICATION_ID = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee";
const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
const PRIVATE_PEM = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
const PUBLIC_PEM = publicKey.export({ type: "spki", format: "pem" }).toString();

const b64url = (v: string | Buffer) => Buffer.from(v).toString("base64url");
/** An HS256 JWT as Vonage signs webhooks (header and claims as given, signed with `secret`). */
function hs256(claims: Record<string, unknown>, secret = SECRET, alg = "HS256"): string {
  const body = `${b64url(JSON.stringify({ alg, typ: "JWT" }))}.${b64url(JSON.stringify(claims))}`;
  return `${body}.${createHmac("sha256", secret).update(body).digest("base64url")}`;
}

describe("Vonage signed webhooks: talkgate accepts only what the SDK accepts, and refuses beyond it only by its stricter checks", () => {
  const app = Fastify();
  beforeAll(async () => {
    await app.register(
      answerWebhook({
        carrier: vonageProtocol({ signatureSecret: SECRET }),
        publicUrl: "https://talk.example.org",
        tokens: new StreamTokens({ claims: new InProcessOneTimeClaims() }),
      }),
    );
  });
  afterAll(() => app.close());

  const query = {
    to: "447700900000",
    from: "447700900123",
    uuid: "63f61863-4a51-4f6b-86e1-46edebcf9356",
    conversation_uuid: "CON-1",
  };
  const path = `/telephony/vonage/answer?${new URLSearchParams(query).toString()}`;
  // Vonage hashes a GET's query as compact JSON in query order.
  const hash = createHash("sha256").update(JSON.stringify(query)).digest("hex");
  const now = () => Math.floor(Date.now() / 1000);
  const cases: Array<{ name: string; token: () => string; talkgate: boolean; sdk: boolean }> = [
    {
      name: "signed now over the payload",
      token: () => hs256({ iat: now(), jti: "1", payload_hash: hash }),
      sdk: true,
      talkgate: true,
    },
    {
      name: "signed with another secret",
      token: () => hs256({ iat: now(), payload_hash: hash }, "other"),
      sdk: false,
      talkgate: false,
    },
    {
      name: "expired (exp passed)",
      token: () => hs256({ iat: now() - 60, exp: now() - 10, payload_hash: hash }),
      sdk: false,
      talkgate: false,
    },
    {
      name: "alg none",
      token: () =>
        `${b64url(JSON.stringify({ alg: "none" }))}.${b64url(JSON.stringify({ iat: now(), payload_hash: hash }))}.`,
      sdk: false,
      talkgate: false,
    },
    // Stricter than the SDK, which checks the signature and exp only:
    {
      name: "iat 10 minutes old (a replay)",
      token: () => hs256({ iat: now() - 600, payload_hash: hash }),
      sdk: true,
      talkgate: false,
    },
    {
      name: "iat 10 minutes ahead",
      token: () => hs256({ iat: now() + 600, payload_hash: hash }),
      sdk: true,
      talkgate: false,
    },
    {
      name: "signed over another payload",
      token: () => hs256({ iat: now(), payload_hash: "00".repeat(32) }),
      sdk: true,
      talkgate: false,
    },
    { name: "no payload_hash", token: () => hs256({ iat: now() }), sdk: true, talkgate: false },
  ];

  it.each(cases)("$name", async ({ token, sdk, talkgate }) => {
    const jwt = token();
    expect(verifySignature(jwt, SECRET)).toBe(sdk);
    const res = await app.inject({ method: "GET", url: path, headers: { authorization: `Bearer ${jwt}` } });
    expect(res.statusCode).toBe(talkgate ? 200 : 401);
    // Never looser than the SDK.
    if (!sdk) expect(talkgate).toBe(false);
  });
});

describe("Vonage REST JWT: what @vonage/jwt's tokenGenerate makes, verified by its verifySignature", () => {
  it("RS256, the application's id, iat, exp, jti", () => {
    const ours = signRs256(parsePrivateKey(PRIVATE_PEM), APPLICATION_ID);
    expect(verifySignature(ours, PUBLIC_PEM)).toBe(true);
    const theirs = tokenGenerate(APPLICATION_ID, PRIVATE_PEM);
    const keys = (t: string) => Object.keys(decodeClaims(t) ?? {}).sort();
    expect(keys(ours)).toEqual(keys(theirs));
    expect(decodeClaims(ours)).toMatchObject({ application_id: APPLICATION_ID });
    expect(JSON.parse(Buffer.from(ours.split(".")[0]!, "base64url").toString())).toEqual(
      JSON.parse(Buffer.from(theirs.split(".")[0]!, "base64url").toString()),
    );
  });
});

describe("NCCO: what the SDK's NCCOBuilder makes", () => {
  it("the answer's connect to our websocket, a transfer's connect with its briefing, the briefing's talk", () => {
    const stream = {
      url: "wss://talk.example.org/telephony/vonage/stream",
      parameters: { token: "t1ab", callId: "63f6" },
    };
    const websocket = new NCCOBuilder()
      .addAction(
        new Connect({
          type: "websocket",
          uri: stream.url,
          // The NCCO reference spells it content-type; the SDK's type says contentType, and passes keys through.
          ...({ "content-type": "audio/l16;rate=16000" } as object),
          headers: stream.parameters,
        }),
      )
      .build();
    expect(connectStreamNcco(stream)).toEqual(websocket);
    const phone = new NCCOBuilder()
      .addAction(
        new Connect({
          type: "phone",
          number: "447700900001",
          onAnswer: { url: "https://talk.example.org/b?x=1" },
        }),
      )
      .build();
    expect(transferNcco("+447700900001", "https://talk.example.org/b?x=1")).toEqual(phone);
    const sip = new NCCOBuilder()
      .addAction(new Connect({ type: "sip", uri: "sip:desk@pbx.example.org" }))
      .build();
    expect(transferNcco("sip:desk@pbx.example.org")).toEqual(sip);
    expect(briefingNcco("A caller about order 42.")).toEqual(
      new NCCOBuilder().addAction(new Talk("A caller about order 42.")).build(),
    );
  });
});

describe("Vonage Voice API: talkgate's requests equal the SDK's at one capture server", () => {
  const server = new RestCaptureServer((r) => ({
    status: r.method === "POST" ? 201 : 204,
    json:
      r.method === "POST"
        ? { uuid: "63f61863-4a51-4f6b-86e1-46edebcf9356", status: "started", direction: "outbound" }
        : {},
  }));
  let ours: VonageRestClient;
  let sdk: Vonage;
  const signal = () => AbortSignal.timeout(10_000);
  beforeAll(async () => {
    await server.start();
    ours = new VonageRestClient({
      applicationId: APPLICATION_ID,
      privateKey: PRIVATE_PEM,
      baseUrl: server.url,
    });
    sdk = new Vonage({ applicationId: APPLICATION_ID, privateKey: PRIVATE_PEM }, { apiHost: server.url });
  });
  afterAll(() => server.close());

  /** talkgate's and the SDK's request for one operation, their tokens made comparable. */
  const pair = async (talkgate: () => Promise<unknown>, theirs: () => Promise<unknown>) => {
    const [a, b] = await server.pair(talkgate, theirs);
    return [comparable(a), comparable(b)] as const;
  };

  /** The Bearer JWTs differ by iat and jti: each is checked to verify with the application's key, then compared as such. */
  const comparable = (r: CapturedRequest) => {
    const token = r.authorization?.replace(/^Bearer /, "") ?? "";
    return {
      ...r,
      authorization: verifySignature(token, PUBLIC_PEM)
        ? `Bearer <${decodeClaims(token)?.["application_id"]}>`
        : "invalid",
    };
  };

  it("an outbound call connecting to our websocket, with advanced machine detection", async () => {
    const stream = {
      url: "wss://talk.example.org/telephony/vonage/stream",
      parameters: { token: "t1ab", callId: "dial-1" },
    };
    const events = "https://talk.example.org/telephony/vonage/events?job=j1";
    const [a, b] = await pair(
      () =>
        ours.dial({
          to: "+447700900000",
          from: "+447700900123",
          stream,
          statusCallbackUrl: events,
          machineDetection: { mode: "detect_message_end", callbackUrl: events },
          signal: signal(),
        }),
      () =>
        sdk.voice.createOutboundCall({
          to: [{ type: "phone", number: "447700900000" }],
          from: { type: "phone", number: "447700900123" },
          ncco: connectStreamNcco(stream) as never,
          eventUrl: [events],
          eventMethod: "POST",
          advancedMachineDetection: { behavior: "continue", mode: "default", beepTimeout: 45 },
        } as never),
    );
    expect(a).toEqual(b);
    expect(a.authorization).toBe(`Bearer <${APPLICATION_ID}>`);
  });

  it("hang-up, a transfer to an NCCO with its briefing, and DTMF", async () => {
    const uuid = "63f61863-4a51-4f6b-86e1-46edebcf9356";
    const [hangA, hangB] = await pair(
      () => ours.hangUp(uuid, { signal: signal() }),
      () => sdk.voice.hangupCall(uuid),
    );
    expect(hangA).toEqual(hangB);
    const ncco = transferNcco("+447700900001", "https://talk.example.org/b?x=1");
    const [moveA, moveB] = await pair(
      () => ours.transfer(uuid, "+447700900001", signal(), { briefingUrl: "https://talk.example.org/b?x=1" }),
      () => sdk.voice.transferCallWithNCCO(uuid, ncco as never),
    );
    expect(moveA).toEqual(moveB);
    const [dtmfA, dtmfB] = await pair(
      () => ours.sendDtmf(uuid, "12#", signal()),
      () => sdk.voice.playDTMF(uuid, "12#"),
    );
    expect(dtmfA).toEqual(dtmfB);
  });
});
