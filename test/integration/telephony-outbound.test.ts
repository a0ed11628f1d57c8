/**
 * Outbound calls (POST /telephony/calls and the Talk API's telephony.call)
 * against the local fake Twilio REST API, the signed status callbacks that
 * end them with the carrier's reason, and the reconnect grace of a call
 * whose stream socket drops.
 */
import { afterEach, describe, expect, it } from "vitest";
import { TalkClient } from "../../src/client/talk-client.js";
import { isTalkError } from "../../src/core/errors.js";
import { computeTwilioSignature } from "../../src/telephony/twilio/twilio-signature.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS, TwilioStreamClient } from "../support/twilio-stream-client.js";
import {
  ACCOUNT_SID,
  ADMIN_TOKEN,
  AUTH_TOKEN,
  WRITE_TOKEN,
  sessionOfCall,
  startTelephony,
  type TelephonyHarness,
} from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
const talkClients: TalkClient[] = [];
afterEach(async () => {
  for (const c of talkClients.splice(0)) await c.close();
  await h?.close();
  h = undefined;
});

async function placeCall(
  harness: TelephonyHarness,
  body: Record<string, unknown> = { to: "+15557654321" },
): Promise<{ callSid: string; sessionId: string }> {
  const res = await fetch(`${harness.baseUrl}/telephony/calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { callSid: string; sessionId: string };
}

async function statusCallback(
  harness: TelephonyHarness,
  params: Record<string, string>,
  signature?: string,
): Promise<Response> {
  const url = `${harness.publicUrl}/telephony/twilio/status`;
  return fetch(`${harness.baseUrl}/telephony/twilio/status`, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-twilio-signature": signature ?? computeTwilioSignature(AUTH_TOKEN, url, params),
    },
    body: new URLSearchParams(params),
  });
}

describe("telephony: outbound calls", () => {
  it.each(["busy", "no-answer", "failed", "completed"])(
    "a signed %s status callback closes the call's session with that reason",
    async (status) => {
      h = await startTelephony({ mode: "stt-tts" });
      const { callSid, sessionId } = await placeCall(h);
      const dial = h.rest.requests.find((r) => r.path.endsWith("/Calls.json"))!;
      expect(dial.params.get("To")).toBe("+15557654321");
      expect(dial.params.get("StatusCallback")).toBe(`${h.publicUrl}/telephony/twilio/status`);
      expect(dial.params.get("Twiml")).toContain("<Connect><Stream");
      expect(h.app.runtime.getSession(sessionId)?.state).toBe("active");

      const res = await statusCallback(h, { CallSid: callSid, AccountSid: ACCOUNT_SID, CallStatus: status });
      expect(res.status).toBe(204);
      await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
      expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: status });
    },
  );

  it("a status callback with a bad signature is refused and the call goes on", async () => {
    h = await startTelephony({ mode: "stt-tts" });
    const { callSid, sessionId } = await placeCall(h);
    const res = await statusCallback(
      h,
      { CallSid: callSid, AccountSid: ACCOUNT_SID, CallStatus: "busy" },
      "bm90LWEtc2lnbmF0dXJl",
    );
    expect(res.status).toBe(403);
    // A valid ringing callback after it is processed in order: the session is still active.
    expect(
      (await statusCallback(h, { CallSid: callSid, AccountSid: ACCOUNT_SID, CallStatus: "ringing" })).status,
    ).toBe(204);
    expect(h.app.runtime.getSession(sessionId)?.state).toBe("active");
    expect(h.eventsOf(sessionId, "session.closed")).toHaveLength(0);
  });

  it("a busy callback that beats Twilio's answer to the dial still ends the call busy; late callbacks are answered, unknown calls get 404", async () => {
    h = await startTelephony({ mode: "stt-tts" });
    h.rest.holdCreates = true;
    const placing = placeCall(h);
    const dial = await h.rest.waitFor((r) => r.path.endsWith("/Calls.json"));
    const busy = { CallSid: dial.sid!, AccountSid: ACCOUNT_SID, CallStatus: "busy" };
    expect((await statusCallback(h, busy)).status).toBe(204);
    h.rest.releaseCreates();
    const { callSid, sessionId } = await placing;
    expect(callSid).toBe(dial.sid);
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "busy" });

    const status = await fetch(`${h.baseUrl}/telephony/calls/${callSid}`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(await status.json()).toEqual({ state: "ended", callSid, sessionId, reason: "busy" });
    // Twilio repeating the callback after the call ended: known, nothing to do.
    expect((await statusCallback(h, busy)).status).toBe(204);
    const unknown = await statusCallback(h, { ...busy, CallSid: `CA${"e".repeat(32)}` });
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe("session_not_found");
    expect(h.eventsOf(sessionId, "session.closed")).toHaveLength(1);
  });

  it("the placed call's stream connects to the session created at dial time", async () => {
    h = await startTelephony({ mode: "stt-tts" });
    const { callSid, sessionId } = await placeCall(h);
    const twiml = h.rest.requests.find((r) => r.path.endsWith("/Calls.json"))!.params.get("Twiml")!;
    const parameters = Object.fromEntries(
      [...twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]),
    );
    const stream = new TwilioStreamClient({
      url: `ws://127.0.0.1:${h.port}/telephony/twilio/stream`,
      customParameters: parameters,
      callSid,
      accountSid: ACCOUNT_SID,
    });
    await stream.connect();
    await stream.sendAudio(loadSpeechUlaw(SPEECH_RECORDINGS.goforward), { pace: "fast" });
    await stream.sendAudio(new Uint8Array(12_000).fill(0xff), { pace: "fast" });
    await waitUntil(() => h!.eventsOf(sessionId, "transcript.done").length >= 1);
    expect(sessionOfCall(h, callSid)).toBe(sessionId);
    await stream.stop();
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "completed" });
  });

  it("telephony.call on the Talk API places a call for an admin and is forbidden without the admin scope", async () => {
    h = await startTelephony({ mode: "stt-tts" });
    const url = `ws://127.0.0.1:${h.port}/talk`;
    const admin = await TalkClient.connect(url, { token: ADMIN_TOKEN });
    const writer = await TalkClient.connect(url, { token: WRITE_TOKEN });
    talkClients.push(admin, writer);
    expect(h.app.gateway.scopes["telephony.call"]).toBe("admin");

    const placed = (await admin.requestUntyped("telephony.call", {
      to: "+15557654321",
      greeting: "Hello from the test.",
    })) as {
      placed: boolean;
      callSid: string;
      sessionId: string;
    };
    expect(placed.placed).toBe(true);
    expect(h.app.runtime.getSession(placed.sessionId)?.metadata).toMatchObject({
      callSid: placed.callSid,
      direction: "outbound-api",
    });
    expect(h.rest.requests.filter((r) => r.path.endsWith("/Calls.json"))).toHaveLength(1);

    const denied = await writer.requestUntyped("telephony.call", { to: "+15557654321" }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isTalkError(denied) && denied.code).toBe("forbidden");
    const invalid = await admin
      .requestUntyped("telephony.call", { to: "5557654321", instructions: "x" })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(isTalkError(invalid) && invalid.code).toBe("invalid_params");
    expect(h.rest.requests.filter((r) => r.path.endsWith("/Calls.json"))).toHaveLength(1);
  });
});

describe("telephony: reconnect grace", () => {
  it("a stream that drops and comes back with the same call within the grace continues the same session", async () => {
    h = await startTelephony({ mode: "stt-tts", telephony: { reconnectGraceMs: 600_000 } });
    const first = await h.dial();
    const sessionId = sessionOfCall(h, first.callSid)!;
    await first.close(); // the socket drops without `stop`
    await waitUntil(() => callState(h!, first.callSid) === "detached");

    const again = new TwilioStreamClient({
      url: `ws://127.0.0.1:${h.port}/telephony/twilio/stream`,
      customParameters: first.customParameters,
      callSid: first.callSid,
      accountSid: ACCOUNT_SID,
    });
    await again.connect();
    await waitUntil(() => callState(h!, first.callSid) === "connected");
    await again.sendAudio(loadSpeechUlaw(SPEECH_RECORDINGS.goforward), { pace: "fast" });
    await again.sendAudio(new Uint8Array(12_000).fill(0xff), { pace: "fast" });
    // The same session hears the caller and answers on the new socket.
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    expect(again.receivedAudioMs).toBeGreaterThan(0);
    expect(h.eventsOf(sessionId, "session.closed")).toHaveLength(0);
    expect(h.app.runtime.listSessions().filter((s) => s.metadata["callSid"] === first.callSid)).toHaveLength(
      1,
    );
    await again.stop();
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "completed" });
  });

  it("after the grace the session is closed with connection_lost and the call cannot be resumed", async () => {
    h = await startTelephony({ mode: "stt-tts", telephony: { reconnectGraceMs: 50 } });
    const first = await h.dial();
    const sessionId = sessionOfCall(h, first.callSid)!;
    await first.close();
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "connection_lost" });

    const late = new TwilioStreamClient({
      url: `ws://127.0.0.1:${h.port}/telephony/twilio/stream`,
      customParameters: first.customParameters,
      callSid: first.callSid,
      accountSid: ACCOUNT_SID,
    });
    await late.connect();
    await late.waitFor(() => late.closeCode !== undefined);
    expect(late.closeCode).toBe(1008);
  });
});

/** The adapter's view of the call, from its log lines (the app does not expose the call registry). */
function callState(harness: TelephonyHarness, callSid: string): "detached" | "connected" | undefined {
  const lines = harness.logs.filter((l) => l["callSid"] === callSid).map((l) => String(l["msg"]));
  const last = lines.filter((m) => m.startsWith("call: stream")).at(-1);
  if (last === "call: stream lost, session held for the reconnect grace") return "detached";
  if (last === "call: stream reconnected within grace") return "connected";
  return undefined;
}

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}
