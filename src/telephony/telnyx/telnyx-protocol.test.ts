import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isTalkError, ULAW_8K } from "../../core/index.js";
import { FakeTelnyxRestServer } from "../../../test/support/fake-telnyx-rest-server.js";
import { TelnyxWebhookSigner } from "../../../test/support/telnyx-webhook-signer.js";
import type { CarrierWebhookRequest } from "../carrier/carrier-protocol.js";
import { telnyxProtocol, telnyxStreamCodec } from "./telnyx-protocol.js";
import { pathSegment, TelnyxRestClient } from "./telnyx-rest-client.js";

const signer = new TelnyxWebhookSigner();

function webhook(params: Record<string, string>, headers = true): CarrierWebhookRequest {
  const rawBody = new URLSearchParams(params).toString();
  return {
    url: "https://talkgate.example/telephony/telnyx/voice",
    headers: headers ? signer.headers(rawBody) : {},
    rawBody,
    params,
  };
}

describe("telnyxProtocol", () => {
  const telnyx = telnyxProtocol({ publicKey: signer.publicKey, apiKey: "KEY", connectionId: "123" });

  it("is signed with a public key, has REST with an API key, and plays PCMU acknowledged by marks", () => {
    expect([telnyx.id, telnyx.signed, telnyx.rest !== undefined, telnyx.acknowledgements]).toEqual([
      "telnyx",
      true,
      true,
      "marks",
    ]);
    expect(telnyx.lineFormat).toEqual(ULAW_8K);
    const bare = telnyxProtocol({});
    expect([bare.signed, bare.rest]).toEqual([false, undefined]);
    expect(bare.authenticate(webhook({ CallSid: "v3:a" }))).toBe("refused");
  });

  it("authenticates the raw body against the signature headers", () => {
    const ok = webhook({ CallSid: "v3:a", CallStatus: "ringing" });
    expect(telnyx.authenticate(ok)).toBe("ok");
    expect(telnyx.authenticate({ ...ok, rawBody: `${ok.rawBody}&x=1` })).toBe("refused");
    expect(telnyx.authenticate(webhook({ CallSid: "v3:a" }, false))).toBe("refused");
    const stale = telnyxProtocol({ publicKey: signer.publicKey, now: () => Date.now() + 301_000 });
    expect(stale.authenticate(ok)).toBe("refused");
  });

  it("reads the TeXML call parameters and status callbacks", () => {
    const p = {
      CallSid: "v3:abc",
      AccountSid: "f5586561-8ff0-4291-a51b-c7dfe4139ff9",
      From: "+15557654321",
      To: "+15550001111",
      Direction: "inbound",
      CallStatus: "ringing",
    };
    expect(telnyx.inboundCall(webhook(p))).toEqual({
      callId: "v3:abc",
      accountId: p.AccountSid,
      from: p.From,
      to: p.To,
      direction: "inbound",
    });
    expect(telnyx.inboundCall(webhook({ From: "+1" }))).toBeUndefined();
    expect(telnyx.callStatus(webhook(p))).toEqual({ callId: "v3:abc", status: "ringing", terminal: false });
    for (const s of ["completed", "busy", "no-answer", "canceled", "failed"])
      expect(telnyx.callStatus(webhook({ ...p, CallStatus: s }))?.terminal).toBe(true);
    expect(telnyx.callStatus(webhook({ CallSid: "v3:abc" }))).toBeUndefined();
  });

  it("answers with TeXML", () => {
    const doc = telnyx.answer({ url: "wss://h/telephony/telnyx/stream", parameters: { token: "t1ab" } });
    expect(doc.contentType).toBe("text/xml");
    expect(doc.body).toContain('bidirectionalMode="rtp"');
  });
});

describe("telnyxStreamCodec", () => {
  const streamId = "32DE0DEA-53CB-4B21-89A4-9E1819C043BC";
  const start = (encoding = "PCMU") =>
    JSON.stringify({
      event: "start",
      sequence_number: "1",
      stream_id: streamId,
      start: {
        call_control_id: "v3:call",
        custom_parameters: { token: "t1ab", callId: "v3:call" },
        media_format: { encoding, sample_rate: 8000, channels: 1 },
      },
    });
  const media = (chunk: number, track = "inbound") =>
    JSON.stringify({
      event: "media",
      sequence_number: String(chunk + 1),
      stream_id: streamId,
      media: {
        track,
        chunk: String(chunk),
        timestamp: String(chunk * 20),
        payload: Buffer.from([chunk]).toString("base64"),
      },
    });

  it("decodes start (call id, format, parameters), media in order, marks, dtmf and stop", () => {
    const codec = telnyxStreamCodec({ maxBytes: 65_536 });
    expect(codec.decode(Buffer.from('{"event":"connected","version":"1.0.0"}'), false)).toEqual({
      ok: true,
      event: undefined,
    });
    expect(codec.decode(Buffer.from(start()), false)).toEqual({
      ok: true,
      event: {
        type: "start",
        callId: "v3:call",
        streamId,
        format: ULAW_8K,
        formatName: "PCMU 8000 Hz mono",
        parameters: { token: "t1ab", callId: "v3:call" },
      },
    });
    const audio: number[] = [];
    for (const n of [1, 3, 2, 4]) {
      const r = codec.decode(Buffer.from(media(n)), false);
      if (r.ok && r.event?.type === "media") audio.push(...r.event.audio);
    }
    expect(audio).toEqual([1, 2, 3, 4]);
    expect(codec.decode(Buffer.from(media(5, "outbound")), false)).toEqual({ ok: true, event: undefined });
    const mark = JSON.stringify({ event: "mark", stream_id: streamId, mark: { name: "m1" } });
    expect(codec.decode(Buffer.from(mark), false)).toEqual({
      ok: true,
      event: { type: "played", name: "m1" },
    });
    const dtmf = JSON.stringify({ event: "dtmf", stream_id: streamId, dtmf: { digit: "5" } });
    expect(codec.decode(Buffer.from(dtmf), false)).toEqual({ ok: true, event: { type: "dtmf", digit: "5" } });
    const stop = JSON.stringify({ event: "stop", stream_id: streamId, stop: {} });
    expect(codec.decode(Buffer.from(stop), false)).toEqual({ ok: true, event: { type: "stop" } });
  });

  it("names a format it does not play, refuses binary, foreign and oversized frames, and reports Telnyx errors", () => {
    const codec = telnyxStreamCodec({ maxBytes: 1024 });
    const s = codec.decode(Buffer.from(start("PCMA")), false);
    expect(s.ok && s.event?.type === "start" && [s.event.format, s.event.formatName]).toEqual([
      undefined,
      "PCMA 8000 Hz mono",
    ]);
    expect(codec.decode(Buffer.from([1, 2]), true)).toMatchObject({
      ok: false,
      rejection: { reason: "binary_frame" },
    });
    const foreign = JSON.stringify({ event: "mark", stream_id: "other", mark: { name: "x" } });
    expect(codec.decode(Buffer.from(foreign), false)).toMatchObject({
      ok: false,
      rejection: { reason: "wrong_stream_id" },
    });
    const big = codec.decode(Buffer.alloc(2048, 0x20), false);
    expect(big).toMatchObject({ ok: false, rejection: { reason: "oversized", close: { code: 1009 } } });
    const err = JSON.stringify({
      event: "error",
      payload: { code: 100003, title: "malformed_frame", detail: "x" },
    });
    expect(codec.decode(Buffer.from(err), false)).toMatchObject({
      ok: false,
      rejection: { reason: "carrier_error", message: "Telnyx stream error 100003: malformed_frame x" },
    });
    expect(codec.decode(Buffer.from("nope"), false)).toMatchObject({
      ok: false,
      rejection: { reason: "bad_json" },
    });
  });

  it("builds media, mark and clear frames", () => {
    const codec = telnyxStreamCodec({ maxBytes: 1024 });
    expect(JSON.parse(codec.media(new Uint8Array([1])) as string)).toEqual({
      event: "media",
      media: { payload: "AQ==" },
    });
    expect(JSON.parse(codec.mark("m") as string)).toEqual({ event: "mark", mark: { name: "m" } });
    expect(JSON.parse(codec.clear() as string)).toEqual({ event: "clear" });
  });
});

describe("TelnyxRestClient against a local Telnyx API", () => {
  let server: FakeTelnyxRestServer;
  let client: TelnyxRestClient;
  const signal = new AbortController().signal;
  beforeEach(async () => {
    server = new FakeTelnyxRestServer("KEY", "conn-1", { accountSid: "acct-1" });
    client = new TelnyxRestClient({
      apiKey: "KEY",
      connectionId: "conn-1",
      accountSid: "acct-1",
      baseUrl: await server.start(),
    });
  });
  afterEach(() => server.close());

  it("dials an account-scoped TeXML call (the endpoint that takes status callbacks and detection) with the answer inline", async () => {
    const dial = {
      to: "+15557654321",
      from: "+15550001111",
      stream: { url: "wss://h/telephony/telnyx/stream", parameters: { token: "t1ab" } },
      statusCallbackUrl: "https://h/telephony/telnyx/status?dial=d1",
      machineDetection: { mode: "detect" as const, callbackUrl: "https://h/telephony/telnyx/status?dial=d1" },
      signal,
    };
    // Telnyx answers {from, to, status} (the API reference): the call is named by its first status callback.
    const call = await client.dial(dial);
    expect(call).toEqual({ callId: undefined, status: "queued" });
    expect(client.callIdFromStatus).toBe(true);
    const req = server.requests[0]!;
    expect(req.path).toBe("/v2/texml/Accounts/acct-1/Calls");
    expect(req.body).toMatchObject({
      ApplicationSid: "conn-1",
      From: "+15550001111",
      To: "+15557654321",
      StatusCallback: "https://h/telephony/telnyx/status?dial=d1",
      StatusCallbackMethod: "POST",
      StatusCallbackEvent: "initiated ringing answered completed",
      MachineDetection: "Enable",
      AsyncAmd: true,
      AsyncAmdStatusCallback: "https://h/telephony/telnyx/status?dial=d1",
    });
    expect(req.body["Texml"]).toContain('<Parameter name="token" value="t1ab"/>');
    // An answer that names the call is taken at its word.
    const naming = new FakeTelnyxRestServer("KEY", "conn-1", { accountSid: "acct-1", answerCallSid: true });
    const named = await new TelnyxRestClient({
      apiKey: "KEY",
      connectionId: "conn-1",
      accountSid: "acct-1",
      baseUrl: await naming.start(),
    }).dial(dial);
    expect(named.callId).toBe(naming.requests[0]!.callSid);
    await naming.close();
  });

  it("hangs up and transfers through Call Control; a call already over counts as hung up", async () => {
    // The call id in the path as the SDK writes it: ':' kept (an RFC 3986 pchar), '/' encoded.
    await client.hangUp("v3:abc/def", { signal });
    expect(server.requests[0]).toMatchObject({
      path: "/v2/calls/v3:abc%2Fdef/actions/hangup",
      id: "v3:abc/def",
    });
    await client.hangUp("v3:abc/def", { signal }); // 422 90018
    await client.transfer("v3:live", "+15559990000", signal);
    expect(server.requests[2]).toMatchObject({
      path: "/v2/calls/v3:live/actions/transfer",
      id: "v3:live",
      body: { to: "+15559990000" },
    });
    await client.sendDtmf("v3:live", "12", signal);
    expect(server.requests[3]!.path).toBe("/v2/calls/v3:live/actions/send_dtmf");
    expect(() => pathSegment("..")).toThrow(expect.objectContaining({ code: "invalid_params" }));
  });

  it("maps refusals, outages and cancellation to TalkErrors", async () => {
    const wrongKey = new TelnyxRestClient({ apiKey: "nope", baseUrl: server.url });
    const refused = await wrongKey.hangUp("v3:a", { signal }).catch((e: unknown) => e);
    expect(isTalkError(refused) && [refused.code, refused.details?.["telnyxCode"]]).toEqual([
      "provider_error",
      "10009",
    ]);
    const noConnection = await wrongKey
      .dial({
        to: "+1",
        from: "+1",
        stream: { url: "wss://h", parameters: {} },
        statusCallbackUrl: "x",
        signal,
      })
      .catch((e: unknown) => e);
    expect(isTalkError(noConnection) && noConnection.code).toBe("capability_unsupported");
    server.failCreates = true;
    const outage = await client
      .dial({
        to: "+1",
        from: "+1",
        stream: { url: "wss://h", parameters: {} },
        statusCallbackUrl: "x",
        signal,
      })
      .catch((e: unknown) => e);
    expect(isTalkError(outage) && outage.code).toBe("provider_unavailable");
    const unreachable = new TelnyxRestClient({ apiKey: "KEY", baseUrl: "http://127.0.0.1:9" });
    const down = await unreachable.hangUp("v3:a", { signal }).catch((e: unknown) => e);
    expect(isTalkError(down) && down.code).toBe("provider_unavailable");
    const aborted = await client.hangUp("v3:a", { signal: AbortSignal.abort() }).catch((e: unknown) => e);
    expect(isTalkError(aborted) && aborted.code).toBe("cancelled");
  });
});
