import { describe, expect, it } from "vitest";
import { ULAW_8K } from "../../core/index.js";
import type { CarrierWebhookRequest } from "../carrier/carrier-protocol.js";
import { plivoProtocol, plivoStreamCodec } from "./plivo-protocol.js";
import { computePlivoSignature } from "./plivo-signature.js";
import { parseExtraHeaders } from "./plivo-stream-messages.js";
import { extraHeadersOf, streamParametersOf, streamXml } from "./plivo-xml.js";

const TOKEN = "plivo-test-auth-token";
const CALL = "12345678-1234-1234-1234-123456789abc";
const STREAM = "87654321-4321-4321-4321-cba987654321";
const STREAM_TOKEN = `t1${"ab".repeat(150)}${"cd".repeat(16)}`;

const start = (extra = `token=${STREAM_TOKEN}`, format = { encoding: "audio/x-mulaw", sampleRate: 8000 }) =>
  JSON.stringify({
    event: "start",
    sequenceNumber: 1,
    start: {
      callId: CALL,
      streamId: STREAM,
      accountId: "MAXXXXXXXXXXXXXXXXXX",
      tracks: ["inbound"],
      mediaFormat: format,
    },
    extra_headers: extra,
  });
const media = (payload: string, streamId = STREAM) =>
  JSON.stringify({
    event: "media",
    sequenceNumber: 2,
    streamId,
    media: { track: "inbound", timestamp: "1705312200000", chunk: 1, payload },
    extra_headers: "",
  });

function codec(maxBytes = 65_536) {
  return plivoStreamCodec({ maxBytes, request: { url: "/telephony/plivo/stream", headers: {} } });
}

describe("Plivo stream codec", () => {
  it("decodes start (extra_headers ';' or ',' separated, callIdHex), media, dtmf, playedStream, clearedAudio", () => {
    const c = codec();
    const hex = Buffer.from("req-uuid-1").toString("hex");
    const s = c.decode(Buffer.from(start(`token=${STREAM_TOKEN};callIdHex=${hex}`)), false);
    expect(s).toEqual({
      ok: true,
      event: {
        type: "start",
        callId: "req-uuid-1",
        streamId: STREAM,
        format: ULAW_8K,
        formatName: "audio/x-mulaw 8000 Hz",
        parameters: { token: STREAM_TOKEN, callId: "req-uuid-1" },
      },
    });
    const m = c.decode(Buffer.from(media(Buffer.from([1, 2, 3, 4]).toString("base64"))), false);
    expect(m.ok && m.event?.type === "media" && [...m.event.audio]).toEqual([1, 2, 3, 4]);
    const dtmf = JSON.stringify({
      event: "dtmf",
      sequenceNumber: 3,
      streamId: STREAM,
      dtmf: { track: "inbound", digit: "7", timestamp: "1" },
      extra_headers: "",
    });
    expect(c.decode(Buffer.from(dtmf), false)).toEqual({ ok: true, event: { type: "dtmf", digit: "7" } });
    const played = JSON.stringify({ event: "playedStream", sequenceNumber: 4, streamId: STREAM, name: "m1" });
    expect(c.decode(played as unknown as Buffer, false)).toEqual({
      ok: true,
      event: { type: "played", name: "m1" },
    });
    const cleared = JSON.stringify({ event: "clearedAudio", sequenceNumber: 5, streamId: STREAM });
    expect(c.decode(Buffer.from(cleared), false)).toEqual({ ok: true, event: undefined });
    // Without a callId parameter the stream is the CallUUID Plivo names; ',' separates as well as ';'.
    const other = codec().decode(Buffer.from(start(`token=${STREAM_TOKEN}, x=1`)), false);
    expect(other.ok && other.event?.type === "start" && other.event.callId).toBe(CALL);
    expect(other.ok && other.event?.type === "start" && other.event.parameters).toEqual({
      token: STREAM_TOKEN,
      x: "1",
    });
  });

  it("an unknown format is named, not modelled (the route refuses it)", () => {
    const r = codec().decode(
      Buffer.from(start(undefined, { encoding: "audio/x-l16", sampleRate: 16000 })),
      false,
    );
    expect(r.ok && r.event?.type === "start" && [r.event.format, r.event.formatName]).toEqual([
      undefined,
      "audio/x-l16 16000 Hz",
    ]);
  });

  it("refuses malformed frames with stable reasons and never throws", () => {
    const c = codec(2048);
    const reason = (data: string | Buffer, binary = false) => {
      const r = c.decode(typeof data === "string" ? Buffer.from(data) : data, binary);
      return r.ok ? "ok" : r.rejection.reason;
    };
    expect(reason(Buffer.from([1, 2]), true)).toBe("binary_frame");
    expect(reason("{nope")).toBe("bad_json");
    expect(reason("[1]")).toBe("not_an_object");
    expect(reason(JSON.stringify({ event: "stop" }))).toBe("unknown_event");
    expect(reason(JSON.stringify({ event: "start", sequenceNumber: 1 }))).toBe("invalid_message");
    expect(reason(start())).toBe("ok");
    expect(reason(start())).toBe("duplicate_start");
    expect(reason(media("!!!not base64"))).toBe("bad_base64");
    expect(reason(media("AAAA", "another-stream"))).toBe("wrong_stream_id");
    const big = c.decode(Buffer.from("x".repeat(4096)), false);
    expect(big.ok ? undefined : big.rejection).toMatchObject({ reason: "oversized", close: { code: 1009 } });
    const dtmf = JSON.stringify({
      event: "dtmf",
      sequenceNumber: 3,
      streamId: STREAM,
      dtmf: { digit: "77" },
    });
    expect(reason(dtmf)).toBe("invalid_message");
  });

  it("builds playAudio, checkpoint and clearAudio; a close after start ends the call", () => {
    const c = codec();
    c.decode(Buffer.from(start()), false);
    expect(JSON.parse(c.media(new Uint8Array([0xff, 0x7f])) as string)).toEqual({
      event: "playAudio",
      media: { contentType: "audio/x-mulaw", sampleRate: 8000, payload: "/38=" },
    });
    expect(JSON.parse(c.mark("m9") as string)).toEqual({ event: "checkpoint", streamId: STREAM, name: "m9" });
    expect(JSON.parse(c.clear() as string)).toEqual({ event: "clearAudio", streamId: STREAM });
    expect([1000, 1005, 1006, 1011].map((code) => c.ended?.(code))).toEqual([
      "completed",
      "completed",
      "connection_lost",
      "connection_lost",
    ]);
  });

  it("with an auth token, a handshake not signed by Plivo is refused at the first frame", () => {
    const url = "https://talkgate.test/telephony/plivo/stream";
    const signedCodec = (headers: Record<string, string>) =>
      plivoStreamCodec(
        { maxBytes: 65_536, request: { url: "/telephony/plivo/stream", headers }, signedUrl: url },
        { authToken: TOKEN },
      );
    const good = {
      "x-plivo-signature-v3": computePlivoSignature(TOKEN, "n1", "GET", url),
      "x-plivo-signature-v3-nonce": "n1",
    };
    expect(signedCodec(good).decode(Buffer.from(start()), false).ok).toBe(true);
    const wss = url.replace("https", "wss");
    const asWss = {
      "x-plivo-signature-v3": computePlivoSignature(TOKEN, "n2", "GET", wss),
      "x-plivo-signature-v3-nonce": "n2",
    };
    expect(signedCodec(asWss).decode(Buffer.from(start()), false).ok).toBe(true);
    for (const headers of [
      {},
      { ...good, "x-plivo-signature-v3-nonce": "n3" },
      { ...good, "x-plivo-signature-v3": "AAAA" },
    ]) {
      const r = signedCodec(headers).decode(Buffer.from(start()), false);
      expect(r.ok ? undefined : r.rejection).toMatchObject({
        reason: "bad_signature",
        close: { code: 1008 },
      });
    }
  });
});

describe("Plivo XML and extraHeaders", () => {
  it("answers one bidirectional u-law Stream with the token and the call id, packed, as extraHeaders", () => {
    const xml = streamXml({
      url: "wss://talkgate.test/telephony/plivo/stream",
      parameters: {
        token: STREAM_TOKEN,
        callId: CALL,
        from: "+15557654321",
        to: "+15550001111",
        direction: "inbound",
      },
    });
    const packed = /^token62=([0-9A-Za-z]+),callUuid=([0-9a-f]{32})$/.exec(
      /extraHeaders="([^"]*)"/.exec(xml)![1]!,
    );
    expect(packed![2]).toBe(CALL.replaceAll("-", ""));
    // The token in base 62: a third shorter than its hex.
    expect(packed![1]!.length).toBeLessThan(((STREAM_TOKEN.length - 2) * 3) / 4);
    expect(xml).toBe(
      `<?xml version="1.0" encoding="UTF-8"?>\n<Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000" extraHeaders="token62=${packed![1]},callUuid=${packed![2]}">wss://talkgate.test/telephony/plivo/stream</Stream></Response>`,
    );
    const extra = /extraHeaders="([^"]*)"/.exec(xml)![1]!;
    expect(extra).toMatch(/^[A-Za-z0-9=,]+$/);
    expect(extra.length).toBeLessThanOrEqual(512);
    expect(streamParametersOf(parseExtraHeaders(extra))).toEqual({ token: STREAM_TOKEN, callId: CALL });
  });

  it("keeps the longest dialled call's parameters within 512 bytes, refuses what cannot fit, reads the old forms back", () => {
    // A dial's token with SIP endpoints both ways (the longest ids Plivo issues), its RequestUUID as the call id.
    const claims = JSON.stringify({
      k: "o",
      c: "plivo",
      i: "dial-0123456789abcdef",
      f: `sip:${"a".repeat(25)}123456789012@phone.plivo.com`,
      t: `sip:${"b".repeat(25)}123456789012@phone.plivo.com`,
      d: "outbound",
      m: "stt-tts",
      e: 1_790_000_000_000,
      n: "0".repeat(24),
    });
    const token = `t1${Buffer.from(claims).toString("hex")}${"cd".repeat(16)}`;
    const extra = extraHeadersOf({ token, callId: CALL });
    expect(Buffer.byteLength(extra)).toBeLessThanOrEqual(512);
    expect(streamParametersOf(parseExtraHeaders(extra))).toEqual({ token, callId: CALL });
    // A token with leading zero bytes survives the packing; a non-UUID call id goes as hex.
    const zeros = `t1000001${"ff".repeat(20)}`;
    expect(streamParametersOf(parseExtraHeaders(extraHeadersOf({ token: zeros, callId: "x-1" })))).toEqual({
      token: zeros,
      callId: "x-1",
    });
    expect(() => extraHeadersOf({ token: `t1${"ab".repeat(400)}`, callId: CALL })).toThrow(
      expect.objectContaining({ code: "payload_too_large" }),
    );
    // What earlier answers carried still reads back.
    expect(streamParametersOf({ token: STREAM_TOKEN, callIdHex: Buffer.from(CALL).toString("hex") })).toEqual(
      {
        token: STREAM_TOKEN,
        callId: CALL,
      },
    );
  });

  it("leaves out what is not alphanumeric, escapes the URL, and drops bad hex on the way back", () => {
    expect(extraHeadersOf({ token: "t1+bad", "na-me": "x", from: "+1" })).toBe("");
    expect(streamXml({ url: "wss://h/s?a=1&b=2", parameters: {} })).toContain(
      ">wss://h/s?a=1&amp;b=2</Stream>",
    );
    expect(streamParametersOf({ callIdHex: "zz", Hex: "41" })).toEqual({ Hex: "41" });
    expect(parseExtraHeaders("{a=1; b = 2,c,=d,a=3}")).toEqual({ a: "1", b: "2" });
  });
});

describe("Plivo protocol", () => {
  const url = "https://talkgate.test/telephony/plivo/answer";
  const webhook = (
    params: Record<string, string>,
    headers: Record<string, string> = {},
  ): CarrierWebhookRequest => ({
    url,
    headers,
    rawBody: new URLSearchParams(params).toString(),
    params,
  });
  const p = plivoProtocol({ authToken: TOKEN, authId: "MAXXXXXXXXXXXXXXXXXX" });

  it("authenticates V3-signed webhooks and nothing else", () => {
    const params = { CallUUID: CALL, From: "+1555", To: "+1666", Direction: "inbound" };
    const sig = computePlivoSignature(TOKEN, "n", "POST", url, params);
    expect(
      p.authenticate(webhook(params, { "x-plivo-signature-v3": sig, "x-plivo-signature-v3-nonce": "n" })),
    ).toBe("ok");
    expect(
      p.authenticate(
        webhook(
          { ...params, To: "+1777" },
          { "x-plivo-signature-v3": sig, "x-plivo-signature-v3-nonce": "n" },
        ),
      ),
    ).toBe("refused");
    expect(p.authenticate(webhook(params))).toBe("refused");
    expect(p.signed).toBe(true);
    expect(p.rest).toBeDefined();
    expect(plivoProtocol({}).signed).toBe(false);
  });

  it("an inbound call is its CallUUID; a dialled one (Direction=outbound) its request_uuid", () => {
    expect(
      p.inboundCall(webhook({ CallUUID: CALL, From: "+1555", To: "+1666", Direction: "inbound" })),
    ).toEqual({
      callId: CALL,
      from: "+1555",
      to: "+1666",
      direction: "inbound",
    });
    expect(
      p.inboundCall(webhook({ CallUUID: CALL, Direction: "outbound", RequestUUID: "req-1" }))?.callId,
    ).toBe("req-1");
    expect(
      p.inboundCall(webhook({ CallUUID: CALL, Direction: "outbound", ALegRequestUUID: "req-2" }))?.callId,
    ).toBe("req-2");
    expect(p.inboundCall(webhook({ From: "+1555" }))).toBeUndefined();
  });

  it("maps hangup_url statuses to terminal ones", () => {
    const status = (s: string) =>
      p.callStatus(webhook({ CallUUID: CALL, Direction: "outbound", RequestUUID: "req-1", CallStatus: s }));
    for (const s of ["completed", "busy", "failed", "timeout", "no-answer", "cancel"])
      expect(status(s)).toEqual({ callId: "req-1", status: s, terminal: true });
    expect(status("in-progress")?.terminal).toBe(false);
    expect(p.callStatus(webhook({ CallUUID: CALL }))).toBeUndefined();
  });
});
