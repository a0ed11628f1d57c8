/**
 * The Telnyx boundary: Ed25519-signed webhooks only (tampered, unsigned,
 * stale or another account's: 403), streams only with a fresh one-time
 * token from our TeXML, a PCMU stream only, and malformed frames refused
 * with their reason without touching the call they arrived on or its
 * neighbour; outbound calls placed as TeXML calls, whose signed status
 * callbacks end them with Telnyx's reason.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TelnyxStreamClient, telnyxCallControlId } from "../support/telnyx-stream-client.js";
import { TelnyxWebhookSigner } from "../support/telnyx-webhook-signer.js";
import {
  ADMIN_TOKEN,
  startTelnyx,
  TELNYX_ACCOUNT,
  TELNYX_CONNECTION_ID,
  waitUntil,
  type TelnyxHarness,
} from "../support/telnyx-harness.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";

let h: TelnyxHarness;
beforeAll(async () => {
  h = await startTelnyx({ mode: "stt-tts" });
});
afterAll(async () => {
  await h.close();
});

const rejections = (reason: string) =>
  h.logs.filter((l) => l["reason"] === reason && String(l["msg"]).includes("frame rejected"));
const hasDigit = (sessionId: string, digit: string) =>
  h.eventsOf(sessionId, "transcript.done").some((e) => (e.payload as { digits?: string }).digits === digit);

async function streamWith(
  parameters: Record<string, string>,
  encoding?: string,
): Promise<TelnyxStreamClient> {
  const client = new TelnyxStreamClient({
    url: h.streamUrl,
    customParameters: parameters,
    ...(encoding ? { encoding } : {}),
  });
  await client.connect();
  return client;
}

const call = {
  AccountSid: TELNYX_ACCOUNT,
  CallSid: "v3:guard-call",
  From: "+15551112222",
  To: "+15550001111",
  Direction: "inbound",
  CallStatus: "ringing",
};

describe("telnyx: webhook and stream guards", () => {
  it("a voice webhook that is tampered, unsigned, stale or signed by another key gets 403 and no TeXML", async () => {
    const body = new URLSearchParams(call).toString();
    const signed = h.signer.headers(body);
    const tampered = await h.post("/telephony/telnyx/voice", { ...call, From: "+15559999999" }, signed);
    expect(tampered.status).toBe(403);
    expect(await tampered.text()).not.toContain("<Stream");
    expect((await h.post("/telephony/telnyx/voice", call, {})).status).toBe(403);
    const stale = h.signer.headers(body, Math.floor(Date.now() / 1000) - 600);
    expect((await h.post("/telephony/telnyx/voice", call, stale)).status).toBe(403);
    const other = new TelnyxWebhookSigner().headers(body);
    expect((await h.post("/telephony/telnyx/voice", call, other)).status).toBe(403);
    const ok = await h.post("/telephony/telnyx/voice", call);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toContain("text/xml");
    expect(await ok.text()).toContain('bidirectionalMode="rtp" bidirectionalCodec="PCMU"');
  });

  it("a stream without a token, or with a forged one, is closed with 1008", async () => {
    const none = await streamWith({});
    await none.waitFor(() => none.closeCode !== undefined);
    expect([none.closeCode, none.closeReason]).toEqual([1008, "stream token missing"]);
    const forged = await streamWith({ token: `t1${"ab".repeat(40)}` });
    await forged.waitFor(() => forged.closeCode !== undefined);
    expect([forged.closeCode, forged.closeReason]).toEqual([1008, "stream token unknown"]);
  });

  it("a reused token is refused with 1008, and a token for another call is refused too", async () => {
    const first = await h.dial();
    const sessions = h.app.runtime.listSessions().length;
    const replay = new TelnyxStreamClient({
      url: h.streamUrl,
      customParameters: first.customParameters,
      callControlId: first.callControlId,
    });
    await replay.connect();
    await replay.waitFor(() => replay.closeCode !== undefined);
    expect(replay.closeCode).toBe(1008);
    expect(h.app.runtime.listSessions().length).toBe(sessions);
    await first.stop();

    const res = await h.post("/telephony/telnyx/voice", { ...call, CallSid: telnyxCallControlId() });
    const stolen = await streamWith(h.parametersOf(await res.text())); // another call_control_id
    await stolen.waitFor(() => stolen.closeCode !== undefined);
    expect([stolen.closeCode, stolen.closeReason]).toEqual([1008, "stream token call_mismatch"]);
  });

  it("an A-law (PCMA) call: the TeXML asks for PCMU, Telnyx transcodes, and the call connects", async () => {
    const callSid = telnyxCallControlId();
    const texml = await (await h.post("/telephony/telnyx/voice", { ...call, CallSid: callSid })).text();
    expect(texml).toMatch(/<Stream [^>]*codec="PCMU"/);
    // Telnyx picks the stream's codec from the TeXML and the call's codec (the stand-in does as documented).
    const pcma = new TelnyxStreamClient({
      url: h.streamUrl,
      customParameters: h.parametersOf(texml),
      texml,
      callCodec: "PCMA",
      callControlId: callSid,
    });
    await pcma.connect();
    await waitUntil(() => pcma.closeCode !== undefined || h.sessionOf(callSid) !== undefined);
    expect(pcma.closeCode).toBeUndefined();
    expect(h.sessionOf(callSid)).toBeDefined();
    await pcma.stop();
  });

  it("a stream announcing a codec Telnyx cannot transcode to PCMU (a G722 call) is refused with 1008, naming it", async () => {
    const texml = await (
      await h.post("/telephony/telnyx/voice", { ...call, CallSid: telnyxCallControlId() })
    ).text();
    const g722 = new TelnyxStreamClient({
      url: h.streamUrl,
      customParameters: h.parametersOf(texml),
      texml,
      callCodec: "G722",
    });
    await g722.connect();
    await g722.waitFor(() => g722.closeCode !== undefined);
    expect(g722.closeCode).toBe(1008);
    expect(g722.closeReason).toContain("G722 16000 Hz mono");
  });

  it("bad JSON, bad base64, an unknown event, a foreign stream_id and Telnyx's error frames are refused with their reason; an oversized frame ends only its own call", async () => {
    const a = await h.dial();
    const b = await h.dial();
    a.sendRaw("{not json");
    a.sendJson({
      ...a.mediaFrame(new Uint8Array(160)),
      media: { track: "inbound", chunk: "999", payload: "@@" },
    });
    a.sendJson({ event: "hello", stream_id: a.streamId });
    a.sendJson({ event: "mark", stream_id: "someone-else", mark: { name: "x" } });
    a.sendJson({ event: "error", payload: { code: 100002, title: "unknown_error", detail: "test" } });
    a.sendDtmf("5");
    const sessionA = h.sessionOf(a.callControlId)!;
    await waitUntil(() => hasDigit(sessionA, "5"));
    for (const reason of ["bad_json", "bad_base64", "unknown_event", "wrong_stream_id", "carrier_error"])
      expect(rejections(reason).length, reason).toBeGreaterThanOrEqual(1);
    b.sendRaw(JSON.stringify({ event: "media", padding: "x".repeat(70_000) }));
    await b.waitFor(() => b.closeCode !== undefined);
    expect(b.closeCode).toBe(1009);
    const sessionB = h.sessionOf(b.callControlId);
    if (sessionB) await waitUntil(() => h.eventsOf(sessionB, "session.closed").length === 1);
    a.sendDtmf("6");
    await waitUntil(() => hasDigit(sessionA, "6"));
    expect(a.closeCode).toBeUndefined();
    await a.stop();
  });
});

describe("telnyx: reconnect grace", () => {
  it("a stream that drops without stop and comes back with the same token continues the same session", async () => {
    const first = await h.dial();
    const sessionId = h.sessionOf(first.callControlId)!;
    await first.close(); // the socket drops, no `stop`
    await waitUntil(() =>
      h.logs.some(
        (l) => l["callSid"] === first.callControlId && String(l["msg"]).startsWith("call: stream lost"),
      ),
    );
    const again = new TelnyxStreamClient({
      url: h.streamUrl,
      customParameters: first.customParameters,
      callControlId: first.callControlId,
    });
    await again.connect();
    await waitUntil(() =>
      h.logs.some(
        (l) => l["callSid"] === first.callControlId && l["msg"] === "call: stream reconnected within grace",
      ),
    );
    again.sendDtmf("9");
    await waitUntil(() => hasDigit(sessionId, "9"));
    expect(h.eventsOf(sessionId, "session.closed")).toHaveLength(0);
    expect(h.sessionOf(first.callControlId)).toBe(sessionId);
    await again.stop();
    await waitUntil(() => h.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "completed" });
  });
});

describe("telnyx: outbound calls", () => {
  async function place(): Promise<{ callSid: string; sessionId: string }> {
    const res = await fetch(`${h.baseUrl}/telephony/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ carrier: "telnyx", to: "+15557654321" }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { callSid: string; sessionId: string };
  }
  const status = (callSid: string, CallStatus: string, headers?: Record<string, string>) =>
    h.post("/telephony/telnyx/status", { AccountSid: TELNYX_ACCOUNT, CallSid: callSid, CallStatus }, headers);

  it("a placed call is a TeXML call whose stream joins the session made at dial time; completed ends it", async () => {
    const { callSid, sessionId } = await place();
    // Telnyx's answer names no call; its `initiated` status callback (the dial's URL) named it.
    const dial = h.rest.requests.find((r) => r.callSid === callSid)!;
    expect(dial.path).toBe(`/v2/texml/Accounts/${TELNYX_ACCOUNT}/Calls`);
    expect(dial.body).toMatchObject({
      ApplicationSid: TELNYX_CONNECTION_ID,
      To: "+15557654321",
      From: "+15550001111",
      StatusCallback: expect.stringMatching(
        /^http:\/\/talkgate\.test\/telephony\/telnyx\/status\?dial=dial-/,
      ),
      StatusCallbackEvent: "initiated ringing answered completed",
    });
    expect(String(dial.body["Texml"])).toContain("<Connect><Stream url=");
    expect((await status(callSid, "ringing")).status).toBe(204);

    const stream = new TelnyxStreamClient({
      url: h.streamUrl,
      customParameters: h.parametersOf(String(dial.body["Texml"])),
      callControlId: callSid,
    });
    await stream.connect();
    await stream.sendAudio(loadSpeechUlaw(SPEECH_RECORDINGS.goforward), { pace: "fast" });
    await stream.sendAudio(new Uint8Array(12_000).fill(0xff), { pace: "fast" });
    await waitUntil(() => h.eventsOf(sessionId, "transcript.done").length >= 1);
    expect(h.sessionOf(callSid)).toBe(sessionId);

    const read = await fetch(`${h.baseUrl}/telephony/calls/${encodeURIComponent(callSid)}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(await read.json()).toMatchObject({ state: "placed", callSid, sessionId });
    expect((await status(callSid, "completed")).status).toBe(204);
    await waitUntil(() => h.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "completed" });
    await stream.close();
  });

  it.each(["busy", "no-answer", "failed"])(
    "a signed %s status callback closes the session with that reason",
    async (word) => {
      const { callSid, sessionId } = await place();
      expect(h.app.runtime.getSession(sessionId)?.state).toBe("active");
      expect((await status(callSid, word)).status).toBe(204);
      await waitUntil(() => h.eventsOf(sessionId, "session.closed").length === 1);
      expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: word });
    },
  );

  it("a status callback with a bad signature is refused and the call goes on", async () => {
    const { callSid, sessionId } = await place();
    const forged = new TelnyxWebhookSigner().headers(`AccountSid=${TELNYX_ACCOUNT}`);
    expect((await status(callSid, "busy", forged)).status).toBe(403);
    expect((await status(callSid, "busy", {})).status).toBe(403);
    expect(h.app.runtime.getSession(sessionId)?.state).toBe("active");
    expect((await status(callSid, "canceled")).status).toBe(204);
    await waitUntil(() => h.eventsOf(sessionId, "session.closed").length === 1);
  });
});
