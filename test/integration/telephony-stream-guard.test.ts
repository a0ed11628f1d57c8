/**
 * The carrier boundary: signed webhooks only, streams only with a fresh
 * one-time token, and malformed frames refused with a clear reason without
 * touching the call they arrived on, nor any other call.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TwilioStreamClient } from "../support/twilio-stream-client.js";
import {
  ACCOUNT_SID,
  sessionOfCall,
  startTelephony,
  type TelephonyHarness,
} from "../support/telephony-harness.js";

let h: TelephonyHarness;
beforeAll(async () => {
  h = await startTelephony({ mode: "stt-tts" });
});
afterAll(async () => {
  await h.close();
});

const rejections = (reason: string) =>
  h.logs.filter((l) => l["reason"] === reason && String(l["msg"]).includes("frame rejected"));

async function streamWith(parameters: Record<string, string>, callSid: string): Promise<TwilioStreamClient> {
  const client = new TwilioStreamClient({
    url: `${h.baseUrl.replace(/^http/, "ws")}/telephony/twilio/stream`,
    customParameters: parameters,
    callSid,
    accountSid: ACCOUNT_SID,
  });
  await client.connect();
  return client;
}

describe("telephony: stream and webhook guards", () => {
  it("a webhook with a bad or missing signature gets 403 and no TwiML", async () => {
    const params = { CallSid: "CAbad", AccountSid: ACCOUNT_SID, From: "+15551112222", To: "+15550001111" };
    const forged = await h.webhook(params, "bm90LWEtc2lnbmF0dXJl");
    expect(forged.status).toBe(403);
    expect(await forged.text()).not.toContain("<Stream");
    expect((await h.webhook(params, null)).status).toBe(403);
  });

  it("a stream without a token is closed with 1008", async () => {
    const client = await streamWith({}, "CAnotoken");
    await client.waitFor(() => client.closeCode !== undefined);
    expect(client.closeCode).toBe(1008);
    expect(client.closeReason).toBe("stream token missing");
  });

  it("a reused token is refused with 1008: the second stream does not get the call", async () => {
    const first = await h.dial();
    const sessions = h.app.runtime.listSessions().length;
    const replay = await streamWith(first.customParameters, first.callSid); // the same start, on a new socket
    await replay.waitFor(() => replay.closeCode !== undefined);
    expect(replay.closeCode).toBe(1008);
    expect(h.app.runtime.listSessions().length).toBe(sessions);
    await first.stop();
  });

  it("bad JSON, bad base64, a wrong streamSid and an oversized frame are refused with their reason; the calls go on", async () => {
    const a = await h.dial();
    const b = await h.dial();
    a.sendRaw("{not json");
    a.sendJson({
      event: "media",
      sequenceNumber: "9",
      streamSid: a.streamSid,
      media: { track: "inbound", chunk: "1", timestamp: "20", payload: "@@not base64@@" },
    });
    a.sendJson({
      event: "media",
      sequenceNumber: "10",
      streamSid: "MZsomeoneelse",
      media: { track: "inbound", chunk: "2", timestamp: "40", payload: "/w==" },
    });
    a.sendDtmf("5"); // processed after the bad frames: the call still works
    const sessionA = sessionOfCall(h, a.callSid)!;
    await waitUntil(() =>
      h.eventsOf(sessionA, "transcript.done").some((e) => (e.payload as { digits?: string }).digits === "5"),
    );
    expect(rejections("bad_json").length).toBeGreaterThanOrEqual(1);
    expect(rejections("bad_base64").length).toBeGreaterThanOrEqual(1);
    expect(rejections("wrong_stream_sid").length).toBeGreaterThanOrEqual(1);
    b.sendRaw(JSON.stringify({ event: "media", padding: "x".repeat(70_000) }));
    await b.waitFor(() => b.closeCode !== undefined);
    expect(b.closeCode).toBe(1009);
    // The other call is untouched by its neighbour's oversized frame.
    a.sendDtmf("6");
    await waitUntil(() =>
      h.eventsOf(sessionA, "transcript.done").some((e) => (e.payload as { digits?: string }).digits === "6"),
    );
    expect(a.closeCode).toBeUndefined();
    await a.stop();
  });

  it("an oversized frame ends the call for good: no reconnect grace, its token cannot resume it", async () => {
    const call = await h.dial();
    const sessionId = sessionOfCall(h, call.callSid)!;
    call.sendRaw(JSON.stringify({ event: "media", padding: "x".repeat(70_000) }));
    await call.waitFor(() => call.closeCode !== undefined);
    expect(call.closeCode).toBe(1009);
    // Closed at once with its reason (the harness's grace is seconds long: a held call would still be open).
    await waitUntil(() => h.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "protocol_error" });
    const again = await streamWith(call.customParameters, call.callSid);
    await again.waitFor(() => again.closeCode !== undefined);
    expect(again.closeCode).toBe(1008);
  });
});

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}
