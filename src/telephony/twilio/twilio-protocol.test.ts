import { afterEach, describe, expect, it } from "vitest";
import { FakeTwilioRestServer } from "../../../test/support/fake-twilio-rest-server.js";
import { ULAW_8K } from "../../core/talk-types.js";
import type { CarrierWebhookRequest } from "../carrier/carrier-protocol.js";
import { CarrierMessageBuilder } from "./carrier-messages.js";
import { twilioProtocol } from "./twilio-protocol.js";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks.js";
import { computeTwilioSignature } from "./twilio-signature.js";

const ACCOUNT_SID = `AC${"0".repeat(32)}`;
const AUTH_TOKEN = "twilio-protocol-test-token";
const identity = { streamSid: "MZ0001", callSid: "CA0001", accountSid: ACCOUNT_SID };

const frame = (message: Record<string, unknown>): Buffer => Buffer.from(JSON.stringify(message));

function webhook(params: Record<string, string>, signature?: string): CarrierWebhookRequest {
  const url = "https://talk.example.org/telephony/twilio/voice";
  return {
    url,
    headers: { "x-twilio-signature": signature ?? computeTwilioSignature(AUTH_TOKEN, url, params) },
    rawBody: new URLSearchParams(params).toString(),
    params,
  };
}

describe("Twilio media-stream frames as carrier-neutral events", () => {
  it("decodes every message Twilio sends into the neutral event, connected into none", () => {
    const codec = twilioProtocol({}).openStream({ maxBytes: 65_536, request: { url: "/", headers: {} } });
    const b = new CarrierMessageBuilder(identity);
    expect(codec.decode(frame(b.connected()), false)).toEqual({ ok: true, event: undefined });
    expect(codec.decode(frame(b.start({ token: "t1" })), false)).toEqual({
      ok: true,
      event: {
        type: "start",
        callId: "CA0001",
        streamId: "MZ0001",
        format: ULAW_8K,
        formatName: "audio/x-mulaw 8000 Hz mono",
        parameters: { token: "t1" },
      },
    });
    const media = codec.decode(frame(b.media(new Uint8Array(160).fill(0x7f))), false);
    expect(media.ok && media.event?.type === "media" && media.event.audio.byteLength).toBe(160);
    expect(codec.decode(frame(b.mark("m1")), false)).toEqual({
      ok: true,
      event: { type: "played", name: "m1" },
    });
    expect(codec.decode(frame(b.dtmf("7")), false)).toEqual({
      ok: true,
      event: { type: "dtmf", digit: "7" },
    });
    expect(codec.decode(frame(b.stop()), false)).toEqual({ ok: true, event: { type: "stop" } });
  });

  it("refuses binary frames, another stream's frames, and closes on an oversized one", () => {
    const codec = twilioProtocol({}).openStream({ maxBytes: 1024, request: { url: "/", headers: {} } });
    const b = new CarrierMessageBuilder(identity);
    codec.decode(frame(b.start({})), false);
    expect(codec.decode(Buffer.from([1, 2, 3]), true)).toMatchObject({
      ok: false,
      rejection: { reason: "binary_frame" },
    });
    const other = new CarrierMessageBuilder({ ...identity, streamSid: "MZ0002" });
    expect(codec.decode(frame(other.mark("x")), false)).toMatchObject({
      ok: false,
      rejection: { reason: "wrong_stream_sid" },
    });
    expect(codec.decode(Buffer.alloc(2048, 0x20), false)).toMatchObject({
      ok: false,
      rejection: { reason: "oversized", close: { code: 1009 } },
    });
  });

  it("builds media, mark and clear for the stream that started", () => {
    const codec = twilioProtocol({}).openStream({ maxBytes: 65_536, request: { url: "/", headers: {} } });
    codec.decode(frame(new CarrierMessageBuilder(identity).start({})), false);
    expect(JSON.parse(codec.media(new Uint8Array([0xff, 0x7f])) as string)).toEqual({
      event: "media",
      streamSid: "MZ0001",
      media: { payload: "/38=" },
    });
    expect(JSON.parse(codec.mark("m1") as string)).toEqual({
      event: "mark",
      streamSid: "MZ0001",
      mark: { name: "m1" },
    });
    expect(JSON.parse(codec.clear() as string)).toEqual({ event: "clear", streamSid: "MZ0001" });
  });
});

describe("Twilio webhooks and answers", () => {
  const protocol = twilioProtocol({ authToken: AUTH_TOKEN });
  const CALL = { CallSid: "CA1", AccountSid: ACCOUNT_SID, From: "+15550001111", To: "+15550002222" };

  it("accepts a request signed with the auth token and refuses one signed with another", () => {
    expect(protocol.authenticate(webhook(CALL))).toBe("ok");
    expect(protocol.authenticate(webhook(CALL, "bm90LXRoZS1zaWduYXR1cmU="))).toBe("refused");
    expect(twilioProtocol({}).authenticate(webhook(CALL))).toBe("refused");
  });

  it("accepts a webhook a SharedKey signed (HMAC-SHA256, the settings header) with a configured secret", () => {
    const url = "https://talk.example.org/telephony/twilio/voice";
    const secret = "shared-key-secret-1";
    const signed = (key: string, algorithm: "HMAC_SHA1" | "HMAC_SHA256", settings: string) => ({
      url,
      headers: {
        // Signed by the SDK's own code.
        "x-twilio-signature": getExpectedTwilioSignature(key, url, CALL, algorithm),
        "x-twilio-webhooks-signature-settings": settings,
      },
      rawBody: new URLSearchParams(CALL).toString(),
      params: CALL,
    });
    const settings = "key=webhooks_sharedkey_01,algorithm=HMAC_SHA256";
    const rotated = twilioProtocol({ authToken: AUTH_TOKEN, sharedKeySecrets: ["old-secret", secret] });
    expect(rotated.authenticate(signed(secret, "HMAC_SHA256", settings))).toBe("ok");
    expect(
      rotated.authenticate(signed(secret, "HMAC_SHA1", "key=webhooks_sharedkey_01,algorithm=HMAC_SHA1")),
    ).toBe("ok");
    // Without a SharedKey configured, or signed by another key, or the header naming another algorithm: refused.
    expect(protocol.authenticate(signed(secret, "HMAC_SHA256", settings))).toBe("refused");
    expect(rotated.authenticate(signed("another", "HMAC_SHA256", settings))).toBe("refused");
    expect(rotated.authenticate(signed(secret, "HMAC_SHA256", "key=k,algorithm=HMAC_SHA1"))).toBe("refused");
    expect(rotated.authenticate(signed(secret, "HMAC_SHA256", "key=k,algorithm=HMAC_SHA512"))).toBe(
      "refused",
    );
    // The header decides the key: the auth token's signature under a settings header is refused.
    expect(rotated.authenticate(signed(AUTH_TOKEN, "HMAC_SHA1", "key=k,algorithm=HMAC_SHA1"))).toBe(
      "refused",
    );
    expect(rotated.authenticate(webhook(CALL))).toBe("ok");
    // A SharedKey alone is a signed carrier (no local demo mode).
    expect(twilioProtocol({ sharedKeySecrets: [secret] }).signed).toBe(true);
  });

  it("reads the inbound call and status callbacks, terminal statuses marked", () => {
    expect(protocol.inboundCall(webhook(CALL))).toEqual({
      callId: "CA1",
      accountId: ACCOUNT_SID,
      from: "+15550001111",
      to: "+15550002222",
      direction: undefined,
    });
    expect(protocol.inboundCall(webhook({ From: "+1" }))).toBeUndefined();
    expect(protocol.callStatus(webhook({ CallSid: "CA1", CallStatus: "busy" }))).toEqual({
      callId: "CA1",
      status: "busy",
      terminal: true,
    });
    expect(protocol.callStatus(webhook({ CallSid: "CA1", CallStatus: "ringing" }))?.terminal).toBe(false);
  });

  it("answers TwiML with the neutral parameters under Twilio's names", () => {
    const doc = protocol.answer({
      url: "wss://x/telephony/twilio/stream",
      parameters: { token: "t", callId: "CA1" },
    });
    expect(doc.contentType).toBe("text/xml");
    expect(doc.body).toContain('<Stream url="wss://x/telephony/twilio/stream">');
    expect(doc.body).toContain('<Parameter name="token" value="t"/><Parameter name="callSid" value="CA1"/>');
  });
});

describe("Twilio REST as a CarrierRestClient", () => {
  let rest: FakeTwilioRestServer | undefined;
  afterEach(async () => {
    await rest?.close();
    rest = undefined;
  });

  it("dials with inline TwiML, hangs up (canceled while ringing) and transfers with a <Dial>", async () => {
    rest = new FakeTwilioRestServer(ACCOUNT_SID, AUTH_TOKEN);
    const client = twilioProtocol({
      authToken: AUTH_TOKEN,
      accountSid: ACCOUNT_SID,
      apiBaseUrl: await rest.start(),
    }).rest!;
    const signal = AbortSignal.timeout(5000);
    const call = await client.dial({
      to: "+15550002222",
      from: "+15550001111",
      stream: { url: "wss://x/telephony/twilio/stream", parameters: { token: "t" } },
      statusCallbackUrl: "https://x/telephony/twilio/status",
      signal,
    });
    expect(call).toEqual({ callId: rest.requests[0]!.sid, status: "queued" });
    expect(rest.requests[0]!.params.get("Twiml")).toContain('<Parameter name="token" value="t"/>');
    expect(rest.requests[0]!.params.get("StatusCallback")).toBe("https://x/telephony/twilio/status");
    await client.hangUp(call.callId!, { signal, ringing: true });
    await client.hangUp(call.callId!, { signal });
    expect(rest.requests.slice(1).map((r) => r.params.get("Status"))).toEqual(["canceled", "completed"]);
    await client.transfer(call.callId!, "+15550003333", signal);
    expect(rest.requests[3]!.params.get("Twiml")).toContain("<Dial><Number>+15550003333</Number></Dial>");
  });
});
