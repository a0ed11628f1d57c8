import { describe, expect, it } from "vitest";
import { PCM16_16K } from "../../core/index.js";
import type { CarrierWebhookRequest } from "../carrier/carrier-protocol.js";
import { MAX_HEADERS_BYTES, streamHeaders, transferNcco } from "./ncco.js";
import { VONAGE_PATHS, vonageProtocol } from "./vonage-protocol.js";
import { vonageWebhookAuthorization } from "./vonage-signature.js";

const SECRET = "protocol-test-secret";
const request = (
  params: Record<string, unknown>,
  extra: Partial<CarrierWebhookRequest> = {},
): CarrierWebhookRequest => ({
  method: "POST",
  url: "https://talkgate.example/telephony/vonage/events",
  headers: {},
  rawBody: JSON.stringify(params),
  params,
  ...extra,
});

describe("Vonage protocol", () => {
  const vonage = vonageProtocol({ signatureSecret: SECRET });

  it("declares its routes, line (L16 16 kHz), marks, GET+POST answers, 401 refusals, a bounded buffer and stream end by close", () => {
    expect(vonage).toMatchObject({
      id: "vonage",
      paths: VONAGE_PATHS,
      lineFormat: PCM16_16K,
      acknowledgements: "marks",
      voiceMethods: ["GET", "POST"],
      refusalStatus: 401,
      signed: true,
      rest: undefined,
    });
    expect(vonage.playbackBufferMs).toBeLessThan(3072 * 20);
    expect(vonageProtocol({}).signed).toBe(false);
  });

  it("authenticates with the Authorization header over the request as received", () => {
    const url = "https://talkgate.example/telephony/vonage/answer?uuid=abc&to=447700900000";
    const authorization = vonageWebhookAuthorization(SECRET, { method: "GET", url, rawBody: "" });
    const get = request(
      { uuid: "abc", to: "447700900000" },
      { method: "GET", url, rawBody: "", headers: { authorization } },
    );
    expect(vonage.authenticate(get)).toBe("ok");
    expect(vonage.authenticate({ ...get, url: url.replace("abc", "abd") })).toBe("refused");
    expect(vonage.authenticate({ ...get, headers: {} })).toBe("refused");
  });

  it("reads the call of an answer webhook and maps event statuses to terminal reasons", () => {
    expect(
      vonage.inboundCall(
        request({ uuid: "u-1", from: "447700900123", to: "447700900000", conversation_uuid: "CON-1" }),
      ),
    ).toEqual({
      callId: "u-1",
      from: "447700900123",
      to: "447700900000",
      direction: "inbound",
    });
    expect(vonage.inboundCall(request({ from: "x" }))).toBeUndefined();
    expect(vonage.inboundCall(request({ uuid: 42 }))).toBeUndefined();
    const status = (s: string) => vonage.callStatus(request({ uuid: "u-1", status: s }));
    expect(status("completed")).toEqual({ callId: "u-1", status: "completed", terminal: true });
    expect(status("busy")).toMatchObject({ status: "busy", terminal: true });
    expect(status("rejected")).toMatchObject({ status: "busy", terminal: true });
    expect(status("cancelled")).toMatchObject({ status: "canceled", terminal: true });
    expect(status("unanswered")).toMatchObject({ status: "no-answer", terminal: true });
    expect(status("timeout")).toMatchObject({ status: "no-answer", terminal: true });
    expect(status("failed")).toMatchObject({ status: "failed", terminal: true });
    expect(status("ringing")).toEqual({ callId: "u-1", status: "ringing", terminal: false });
    expect(status("answered")).toMatchObject({ terminal: false });
    expect(vonage.callStatus(request({ uuid: "u-1" }))).toBeUndefined();
  });

  it("answers an NCCO connecting to the websocket at 16 kHz with the stream parameters as headers", () => {
    const doc = vonage.answer({
      url: "wss://talkgate.example/telephony/vonage/stream",
      parameters: { token: "t1abcd", callId: "u-1", from: "447700900123" },
    });
    expect(doc.contentType).toBe("application/json");
    expect(JSON.parse(doc.body)).toEqual([
      {
        action: "connect",
        endpoint: [
          {
            type: "websocket",
            uri: "wss://talkgate.example/telephony/vonage/stream",
            "content-type": "audio/l16;rate=16000",
            headers: { token: "t1abcd", callId: "u-1", from: "447700900123" },
          },
        ],
      },
    ]);
  });

  it("keeps the headers within Vonage's 512 bytes: the optional metadata goes first, the token and call id stay", () => {
    const long = {
      token: `t1${"ab".repeat(150)}`,
      callId: "u-1",
      from: "sip:".padEnd(200, "x"),
      to: "y".repeat(100),
    };
    const headers = streamHeaders(long);
    expect(headers).toEqual({ token: long.token, callId: "u-1" });
    expect(Buffer.byteLength(JSON.stringify(headers))).toBeLessThanOrEqual(MAX_HEADERS_BYTES);
    expect(() => streamHeaders({ token: "t1".padEnd(600, "a"), callId: "u" })).toThrow(/512/);
  });

  it("transfers to a number (E.164 without +) or a SIP URI", () => {
    expect(transferNcco("+447700900777")).toEqual([
      { action: "connect", endpoint: [{ type: "phone", number: "447700900777" }] },
    ]);
    expect(transferNcco("sip:agent@example.com")).toEqual([
      { action: "connect", endpoint: [{ type: "sip", uri: "sip:agent@example.com" }] },
    ]);
  });
});
