import { createHmac } from "node:crypto";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { answerWebhook } from "../answer-webhook.js";
import { InProcessOneTimeClaims } from "../../cluster/index.js";
import { StreamTokens } from "../stream-tokens.js";
import { twilioProtocol } from "./twilio-protocol.js";

/** The <Parameter> names Twilio hands back in start.customParameters. */
const STREAM_PARAMETER = {
  token: "token",
  callSid: "callSid",
  accountSid: "accountSid",
  from: "from",
  to: "to",
  direction: "direction",
};

function twilioVoiceWebhook(o: { authToken: string; publicUrl: string; tokens: StreamTokens }) {
  return answerWebhook({
    carrier: twilioProtocol({ authToken: o.authToken }),
    publicUrl: o.publicUrl,
    tokens: o.tokens,
  });
}

const AUTH_TOKEN = "test-auth-token";
const PUBLIC_URL = "https://talk.example.org";
const CALL = {
  AccountSid: "AC0123456789abcdef0123456789abcdef",
  CallSid: "CA0123456789abcdef0123456789abcdef",
  From: "+15550001111",
  To: "+15550002222",
  Direction: "inbound",
  CallStatus: "ringing",
};

function sign(url: string, params: Record<string, string>, token = AUTH_TOKEN): string {
  const data = Object.keys(params)
    .sort()
    .reduce((acc, k) => acc + k + params[k], url);
  return createHmac("sha1", token).update(data).digest("base64");
}

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function build(publicUrl = PUBLIC_URL): Promise<{ app: FastifyInstance; tokens: StreamTokens }> {
  const tokens = new StreamTokens({ claims: new InProcessOneTimeClaims() });
  app = Fastify();
  await app.register(twilioVoiceWebhook({ authToken: AUTH_TOKEN, publicUrl, tokens }));
  return { app, tokens };
}

function post(
  a: FastifyInstance,
  params: Record<string, string>,
  signature: string | undefined,
  path = "/telephony/twilio/voice",
) {
  return a.inject({
    method: "POST",
    url: path,
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      ...(signature === undefined ? {} : { "x-twilio-signature": signature }),
    },
    payload: new URLSearchParams(params).toString(),
  });
}

function parameters(xml: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of xml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)) out[m[1]!] = m[2]!;
  return out;
}

describe("POST /telephony/twilio/voice", () => {
  it("answers TwiML connecting the call to the wss stream with a one-time token and the call metadata", async () => {
    const { app: a, tokens } = await build();
    const res = await post(a, CALL, sign(`${PUBLIC_URL}/telephony/twilio/voice`, CALL));
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^text\/xml/);
    expect(res.body).toMatch(
      /^<\?xml version="1.0" encoding="UTF-8"\?><Response><Connect><Stream url="wss:\/\/talk\.example\.org\/telephony\/twilio\/stream">/,
    );
    const p = parameters(res.body);
    expect(p).toMatchObject({
      [STREAM_PARAMETER.callSid]: CALL.CallSid,
      [STREAM_PARAMETER.from]: CALL.From,
      [STREAM_PARAMETER.to]: CALL.To,
      [STREAM_PARAMETER.accountSid]: CALL.AccountSid,
      [STREAM_PARAMETER.direction]: "inbound",
    });
    const token = p[STREAM_PARAMETER.token]!;
    const expect_ = { carrier: "twilio", callId: CALL.CallSid };
    expect(await tokens.redeem(token, expect_)).toMatchObject({
      ok: true,
      claims: {
        kind: "inbound",
        carrier: "twilio",
        callId: CALL.CallSid,
        accountId: CALL.AccountSid,
        from: CALL.From,
        to: CALL.To,
        direction: "inbound",
      },
    });
    expect(await tokens.redeem(token, expect_)).toEqual({ ok: false, reason: "reused" });
  });

  it("gives ws:// for an http PUBLIC_URL (local use)", async () => {
    const { app: a } = await build("http://127.0.0.1:8787");
    const res = await post(a, CALL, sign("http://127.0.0.1:8787/telephony/twilio/voice", CALL));
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<Stream url="ws://127.0.0.1:8787/telephony/twilio/stream">');
  });

  it("answers 403 and issues no token when the signature is made with another auth token", async () => {
    const { app: a } = await build();
    const res = await post(a, CALL, sign(`${PUBLIC_URL}/telephony/twilio/voice`, CALL, "wrong-token"));
    expect(res.statusCode).toBe(403);
    expect(res.body).not.toContain("<Response>");
    expect(res.body).not.toContain("token");
  });

  it("answers 403 when a signed parameter was tampered with", async () => {
    const { app: a } = await build();
    const signature = sign(`${PUBLIC_URL}/telephony/twilio/voice`, CALL);
    const res = await post(a, { ...CALL, From: "+15559999999" }, signature);
    expect(res.statusCode).toBe(403);
  });

  it("answers 403 when the header is missing", async () => {
    const { app: a } = await build();
    expect((await post(a, CALL, undefined)).statusCode).toBe(403);
  });

  it("validates against the URL with its query string", async () => {
    const { app: a } = await build();
    const path = "/telephony/twilio/voice?tenant=a";
    const good = await post(a, CALL, sign(`${PUBLIC_URL}${path}`, CALL), path);
    expect(good.statusCode).toBe(200);
    const bad = await post(a, CALL, sign(`${PUBLIC_URL}/telephony/twilio/voice`, CALL), path);
    expect(bad.statusCode).toBe(403);
  });

  it("answers 400 to a validly signed request without CallSid", async () => {
    const { app: a } = await build();
    const params = { AccountSid: CALL.AccountSid, From: CALL.From };
    const res = await post(a, params, sign(`${PUBLIC_URL}/telephony/twilio/voice`, params));
    expect(res.statusCode).toBe(400);
  });

  it("escapes metadata in the TwiML attributes", async () => {
    const { app: a } = await build();
    const params = { ...CALL, From: `client:"a"<b>&c` };
    const res = await post(a, params, sign(`${PUBLIC_URL}/telephony/twilio/voice`, params));
    expect(res.statusCode).toBe(200);
    // `>` needs no escaping inside an attribute; quotes, `<` and `&` do.
    expect(res.body).toContain('value="client:&quot;a&quot;&lt;b>&amp;c"');
    const from = parameters(res.body)[STREAM_PARAMETER.from]!;
    const decoded = from
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, "<")
      .replace(/&amp;/g, "&");
    expect(decoded).toBe(params.From);
  });

  it("rejects invalid options at construction", () => {
    const tokens = new StreamTokens({ claims: new InProcessOneTimeClaims() });
    expect(() => twilioVoiceWebhook({ authToken: "", publicUrl: PUBLIC_URL, tokens })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => twilioVoiceWebhook({ authToken: "x", publicUrl: "nope", tokens })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() =>
      answerWebhook({
        carrier: twilioProtocol({ authToken: "x" }),
        publicUrl: PUBLIC_URL,
        tokens,
        bodyLimit: 10,
      }),
    ).toThrow(expect.objectContaining({ code: "config_invalid" }));
  });
});
