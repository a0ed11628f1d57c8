/**
 * Vonage at the boundary: signed webhooks only (401 otherwise, GET and POST),
 * streams only with a fresh one-time token naming the call, malformed frames
 * refused with their reason without touching the call or its neighbours,
 * and outbound calls through the Voice API with signed event webhooks.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vonageWebhookAuthorization } from "../../src/telephony/vonage/vonage-signature.js";
import {
  ADMIN_TOKEN,
  endpointOf,
  SIGNATURE_SECRET,
  startVonage,
  waitUntil,
  type VonageHarness,
} from "../support/vonage-harness.js";
import type { VonageStreamClient } from "../support/vonage-stream-client.js";

let h: VonageHarness;
beforeAll(async () => {
  h = await startVonage({ mode: "stt-tts" });
});
afterAll(async () => {
  await h.close();
});

const rejections = (reason: string) =>
  h.logs.filter((l) => l["reason"] === reason && String(l["msg"]).includes("frame rejected"));

/** A fresh answer's websocket headers for a new call uuid. */
async function answered(
  uuid = crypto.randomUUID(),
): Promise<{ uuid: string; headers: Record<string, string> }> {
  const res = await h.answer({ to: "447700900000", from: "447700900123", uuid, conversation_uuid: "CON-1" });
  expect(res.status).toBe(200);
  return { uuid, headers: endpointOf(await res.json()).headers };
}

/** A digit pressed on `client` reaches the call's session (pressed again until the stream's start has been taken). */
async function dtmfReaches(uuid: string, client: VonageStreamClient, digit: string): Promise<void> {
  const seen = (): boolean => {
    const sessionId = h.sessionOf(uuid);
    return (
      sessionId !== undefined &&
      h
        .eventsOf(sessionId, "transcript.done")
        .some((e) => (e.payload as { digits?: string }).digits === digit)
    );
  };
  for (let i = 0; i < 50 && !seen(); i++) {
    client.sendDtmf(digit);
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(seen()).toBe(true);
}

describe("telephony: Vonage webhook guards", () => {
  it("an answer webhook with a bad, missing, stale or other-payload token gets 401 and no NCCO", async () => {
    const query = { to: "447700900000", from: "447700900123", uuid: crypto.randomUUID() };
    const search = new URLSearchParams(query).toString();
    const url = `${h.publicUrl}/telephony/vonage/answer?${search}`;
    const other = vonageWebhookAuthorization(SIGNATURE_SECRET, {
      method: "GET",
      url: url.replace("447700900123", "447700900999"),
      rawBody: "",
    });
    const stale = vonageWebhookAuthorization(
      SIGNATURE_SECRET,
      { method: "GET", url, rawBody: "" },
      { iat: Math.floor(Date.now() / 1000) - 3600 },
    );
    const wrongKey = vonageWebhookAuthorization("not-the-secret", { method: "GET", url, rawBody: "" });
    for (const authorization of [null, "Bearer nonsense", other, stale, wrongKey]) {
      const res = await h.answer(query, { authorization });
      expect(res.status).toBe(401);
      expect(await res.text()).toBe("Unauthorized");
    }
    expect((await h.answer(query, { method: "POST", authorization: null })).status).toBe(401);
  });

  it("answers a signed GET and a signed POST JSON with the NCCO; a webhook naming no call gets 400", async () => {
    const get = await h.answer({ to: "447700900000", from: "447700900123", uuid: crypto.randomUUID() });
    expect(get.status).toBe(200);
    expect(get.headers.get("content-type")).toMatch(/^application\/json/);
    const endpoint = endpointOf(await get.json());
    expect(endpoint).toMatchObject({
      type: "websocket",
      uri: "ws://talkgate.test/telephony/vonage/stream",
      "content-type": "audio/l16;rate=16000",
    });
    expect(endpoint.headers["token"]).toMatch(/^t1[0-9a-f]+$/);
    const post = await h.answer(
      { to: "447700900000", from: "447700900123", uuid: crypto.randomUUID() },
      { method: "POST" },
    );
    expect(post.status).toBe(200);
    expect(endpointOf(await post.json()).type).toBe("websocket");
    expect((await h.answer({ to: "447700900000" })).status).toBe(400);
  });
});

describe("telephony: Vonage stream guards", () => {
  it("a stream without a token, with a forged one, or naming another call is closed with 1008", async () => {
    const { headers } = await answered();
    const none = await h.connect({ callId: headers["callId"]! });
    await none.waitFor(() => none.closeCode !== undefined);
    expect(none.closeCode).toBe(1008);
    const token = headers["token"]!;
    const forged = await h.connect({
      ...headers,
      token: `${token.slice(0, -2)}${token.endsWith("00") ? "11" : "00"}`,
    });
    await forged.waitFor(() => forged.closeCode !== undefined);
    expect(forged.closeCode).toBe(1008);
    const elsewhere = await h.connect({ ...headers, callId: crypto.randomUUID() });
    await elsewhere.waitFor(() => elsewhere.closeCode !== undefined);
    expect(elsewhere.closeCode).toBe(1008);
    // The token was not spent by those attempts: the real stream still gets its call.
    const real = await h.connect(headers);
    await waitUntil(() => h.sessionOf(headers["callId"]!) !== undefined);
    expect(real.closeCode).toBeUndefined();
  });

  it("a first message without the call's headers is closed at once with 1008, not left to the pre-start timer", async () => {
    const before = rejections("invalid_message").length;
    // The stand-in sends websocket:connected with these headers only: content-type and nothing of ours.
    const bare = await h.connect({});
    await bare.waitFor(() => bare.closeCode !== undefined);
    // The pre-start timer closes with its own reason ("no start message in time"); this is the start's.
    expect([bare.closeCode, bare.closeReason]).toEqual([1008, "stream headers missing"]);
    expect(rejections("invalid_message").length).toBe(before + 1);
  });

  it("a reused token is refused with 1008: the second stream does not get the call", async () => {
    const { uuid, headers } = await answered();
    const first = await h.connect(headers);
    await waitUntil(() => h.sessionOf(uuid) !== undefined);
    const second = await h.connect(headers);
    await second.waitFor(() => second.closeCode !== undefined);
    expect(second.closeCode).toBe(1008);
    await dtmfReaches(uuid, first, "3");
  });

  it("a stream announcing 8 kHz audio is refused (the line is L16 16 kHz)", async () => {
    const { headers } = await answered();
    const { VonageStreamClient } = await import("../support/vonage-stream-client.js");
    const client = new VonageStreamClient({ url: h.streamUrl, headers, contentType: "audio/l16;rate=8000" });
    await client.connect();
    await client.waitFor(() => client.closeCode !== undefined);
    expect(client.closeCode).toBe(1008);
    expect(client.closeReason).toMatch(/16000/);
  });

  it("bad JSON, odd-sized audio and a bad DTMF are refused with their reason; an oversized frame ends only its own call", async () => {
    const a = await answered();
    const b = await answered();
    const ca = await h.connect(a.headers);
    const cb = await h.connect(b.headers);
    await waitUntil(() => h.sessionOf(a.uuid) !== undefined && h.sessionOf(b.uuid) !== undefined);
    ca.sendText("{not json");
    ca.sendText("[1,2,3]");
    ca.sendBinary(new Uint8Array(641));
    ca.sendText({ event: "websocket:dtmf", digit: "99" });
    await dtmfReaches(a.uuid, ca, "5"); // processed after the bad frames: the call still works
    expect(rejections("bad_json").length).toBeGreaterThanOrEqual(1);
    expect(rejections("not_an_object").length).toBeGreaterThanOrEqual(1);
    expect(rejections("bad_audio").length).toBeGreaterThanOrEqual(1);
    expect(rejections("invalid_message").length).toBeGreaterThanOrEqual(1);
    cb.sendBinary(new Uint8Array(70_000));
    await cb.waitFor(() => cb.closeCode !== undefined);
    expect(cb.closeCode).toBe(1009);
    const sessionB = h.sessionOf(b.uuid)!;
    await waitUntil(() => h.eventsOf(sessionB, "session.closed").length === 1);
    expect(h.eventsOf(sessionB, "session.closed")[0]!.payload).toMatchObject({ reason: "protocol_error" });
    await dtmfReaches(a.uuid, ca, "6"); // the neighbour is untouched
    expect(ca.closeCode).toBeUndefined();
  });

  it("a socket Vonage drops abnormally is held for the reconnect grace, not ended", async () => {
    const { uuid, headers } = await answered();
    const client = await h.connect(headers);
    await waitUntil(() => h.sessionOf(uuid) !== undefined);
    const sessionId = h.sessionOf(uuid)!;
    client.terminate();
    await client.waitClosed();
    await new Promise((r) => setTimeout(r, 100));
    expect(h.eventsOf(sessionId, "session.closed")).toHaveLength(0);
    // The same token resumes the call within the grace.
    const again = await h.connect(headers);
    await dtmfReaches(uuid, again, "8");
  });
});

describe("telephony: Vonage outbound calls", () => {
  async function place(to = "+447700900111"): Promise<{ callSid: string; sessionId: string }> {
    const res = await fetch(`${h.baseUrl}/telephony/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ carrier: "vonage", to }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { callSid: string; sessionId: string };
  }

  it("places the call through the Voice API with the NCCO inline; its stream joins the session made at dial time; a signed completed event ends it", async () => {
    const { callSid, sessionId } = await place();
    const create = h.rest.requests.find((r) => r.method === "POST" && r.uuid === callSid)!;
    expect(create.body).toMatchObject({
      to: [{ type: "phone", number: "447700900111" }],
      from: { type: "phone", number: "447700900000" },
      event_url: [expect.stringMatching(/^http:\/\/talkgate\.test\/telephony\/vonage\/events/)],
      event_method: "POST",
    });
    const headers = endpointOf(create.body["ncco"]).headers;
    expect(headers["callId"]).toMatch(/^dial-/); // the dial's id: the call's uuid is not known when the NCCO is sent
    const client = await h.connect(headers);
    await dtmfReaches(callSid, client, "4");
    expect(h.sessionOf(callSid)).toBe(sessionId);
    const event = { uuid: callSid, status: "answered", direction: "outbound" };
    expect((await h.event(event)).status).toBe(204);
    expect(
      (await h.event({ ...event, status: "completed" }, { authorization: "Bearer forged" })).status,
    ).toBe(401);
    expect(h.eventsOf(sessionId, "session.closed")).toHaveLength(0);
    expect((await h.event({ ...event, status: "completed" })).status).toBe(204);
    await waitUntil(() => h.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "completed" });
  });

  it("a call nobody answers ends with Vonage's status in the shared words (unanswered: no-answer)", async () => {
    const { callSid, sessionId } = await place("+447700900222");
    expect((await h.event({ uuid: callSid, status: "ringing" })).status).toBe(204);
    expect((await h.event({ uuid: callSid, status: "unanswered" })).status).toBe(204);
    await waitUntil(() => h.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "no-answer" });
  });
});
