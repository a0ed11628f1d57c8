/**
 * Plivo calls end to end against local stand-ins written from Plivo's
 * documentation: the V3-signed answer webhook -> Plivo XML `<Stream>` ->
 * the signed Audio Streams socket (start / media / dtmf; playAudio,
 * checkpoint -> playedStream, clearAudio -> clearedAudio) -> the call -> the
 * fake OpenAI Realtime server or the local stt-tts engines, and the Voice
 * REST API (dial with answer_url, hang-up) with signed hangup_url callbacks.
 */
import { afterEach, describe, expect, it } from "vitest";
import { speechAudio, toneAudio } from "../support/fake-openai-realtime-server.js";
import { PLIVO_ADMIN_TOKEN, PLIVO_AUTH_ID, startPlivo, type PlivoHarness } from "../support/plivo-harness.js";
import type { PlivoStreamClient } from "../support/plivo-stream-client.js";
import { parseExtraHeaders } from "../../src/telephony/plivo/plivo-stream-messages.js";
import { streamParametersOf } from "../../src/telephony/plivo/plivo-xml.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";

let h: PlivoHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);

describe("telephony: Plivo realtime calls", () => {
  it("a full call relays real speech as u-law both ways with checkpoints; the socket's close ends the call at once", async () => {
    const reply = speechAudio("Sure, I can help with that.", "g711_ulaw");
    h = await startPlivo({
      mode: "realtime",
      telephony: { reconnectGraceMs: 600_000 },
      realtime: { replies: [{ audio: reply, transcript: "Sure, I can help with that." }] },
    });
    const client = await h.dial();
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(silence(1000), { pace: "fast" });
    await client.waitFor(() => client.receivedAudioMs >= reply.length / 8);
    await waitUntil(() => h!.realtime!.audioMsReceived === (speech.length + 8000) / 8);
    // The caller's 20 ms frames reach the provider gathered into pieces of 60 ms (talk.input.providerAppendMs).
    const pieces = h
      .realtime!.received.filter((e) => e.type === "input_audio_buffer.append")
      .map((e) => e.event.audio as number);
    // A piece goes once it holds 60 ms (480 bytes), so a short frame (the recording's last) makes one longer;
    // the last piece may be what the sweep sent when the frames stopped.
    expect(pieces.slice(0, -1).every((n) => n >= 480 && n < 480 + 160)).toBe(true);
    expect(pieces.length).toBeLessThan((speech.length + 8000) / 160 / 2);
    const audio = h.realtime!.session.audio as { input: { format: unknown } };
    expect(audio.input.format).toEqual({ type: "audio/pcmu" });
    const plays = client.received.filter((m) => m.event === "playAudio");
    expect(plays.every((m) => (m.media as { contentType: string }).contentType === "audio/x-mulaw")).toBe(
      true,
    );
    expect(client.media.every((m) => m.byteLength === 160)).toBe(true);
    expect(client.checkpointsReceived.length).toBeGreaterThanOrEqual(Math.ceil(plays.length / 10));
    expect(client.checkpointsPlayed).toEqual(client.checkpointsReceived);
    const sessionId = h.sessionOf(client.callId)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    expect(h.eventsOf(sessionId, "transcript.done").map((e) => (e.payload as { role: string }).role)).toEqual(
      ["user", "assistant"],
    );
    // Plivo has no stop: the caller hanging up closes the socket, and no grace is held for it.
    await client.hangUp();
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "completed" });
  });

  it("barge-in: clearAudio, clearedAudio, truncation at the heard position of each reply", async () => {
    h = await startPlivo({
      mode: "realtime",
      realtime: {
        replies: [
          { audio: toneAudio(1000, "g711_ulaw") },
          { audio: toneAudio(4000, "g711_ulaw"), holdAfterDeltas: 20 },
        ],
      },
    });
    const client = await h.dial({ playback: "manual" });
    const sessionId = h.sessionOf(client.callId)!;
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 1000);
    client.play(1000);
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 3000);
    client.play(600);
    await client.waitFor(() => client.checkpointsPlayed.length >= 8);
    await processed(h, client);
    h.realtime!.triggerSpeechStarted();
    await client.waitFor(() => client.clears === 1);
    await h.realtime!.waitFor((e) => e.type === "conversation.item.truncate");
    expect(h.realtime!.truncations).toEqual([{ itemId: expect.any(String), audioEndMs: 600 }]);
    expect(client.received.some((m) => m.event === "clearAudio" && m.streamId === client.streamId)).toBe(
      true,
    );
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.cancelled").length === 1);
    expect(h.eventsOf(sessionId, "output.audio.cancelled")[0]!.payload).toMatchObject({ reason: "barge_in" });
  });

  it("DTMF becomes a talk.event and text to the model", async () => {
    h = await startPlivo({ mode: "realtime" });
    const client = await h.dial();
    client.sendDtmf("7");
    await h.realtime!.waitFor((e) => e.type === "conversation.item.create");
    const sessionId = h.sessionOf(client.callId)!;
    await waitUntil(() => h!.eventsOf(sessionId, "transcript.done").length >= 1);
    expect(h.eventsOf(sessionId, "transcript.done")[0]!.payload).toMatchObject({
      input: "dtmf",
      digits: "7",
    });
  });

  it("end_call hangs up through the Plivo REST API (DELETE Call) once the farewell's checkpoints are played", async () => {
    h = await startPlivo({
      mode: "realtime",
      realtime: { replies: [{ audio: toneAudio(1000, "g711_ulaw") }] },
    });
    const client = await h.dial({ playback: "manual" });
    h.rest.calls.set(client.callId, client.callId); // an inbound call is live at Plivo under its CallUUID
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 1000 && client.checkpointsReceived.length >= 5);
    h.realtime!.callTool({ name: "end_call", arguments: { reason: "caller done" } });
    const sessionId = h.sessionOf(client.callId)!;
    await waitUntil(() => h!.eventsOf(sessionId, "tool.call").length === 1);
    client.play(500);
    await processed(h, client);
    expect(h.rest.requests).toHaveLength(0);
    client.play(500);
    const request = await h.rest.waitFor((r) => r.method === "DELETE");
    expect(request.path).toBe(`/v1/Account/${PLIVO_AUTH_ID}/Call/${client.callId}/`);
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
  });

  it("a connection dropped without a close frame ends the call as connection_lost (Plivo never reopens a stream)", async () => {
    h = await startPlivo({ mode: "realtime", telephony: { reconnectGraceMs: 600_000 } });
    const client = await h.dial();
    const sessionId = h.sessionOf(client.callId)!;
    await client.drop();
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "connection_lost" });
  });
});

describe("telephony: Plivo stt-tts calls", () => {
  it("real speech makes a turn, is transcribed, and the answer is spoken back as 20 ms u-law playAudio with checkpoints", async () => {
    h = await startPlivo({ mode: "stt-tts" });
    const client = await h.dial();
    await client.sendAudio(silence(300), { pace: "fast" });
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(silence(1500), { pace: "fast" });
    const sessionId = h.sessionOf(client.callId)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    const heard = h
      .eventsOf(sessionId, "transcript.done")
      .find((e) => (e.payload as { role: string }).role === "user")!;
    expect((heard.payload as { text: string }).text.length).toBeGreaterThan(0);
    expect(client.receivedAudioMs).toBeGreaterThan(300);
    expect(client.media.every((m) => m.length === 160)).toBe(true);
    expect(client.checkpointsPlayed.length).toBeGreaterThan(0);
    await client.hangUp();
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
  });
});

describe("telephony: Plivo calls from the longest caller ids", () => {
  // Plivo SIP endpoints: a username of 1-25 letters and digits plus the 12 digits Plivo appends
  // (docs.plivo.com/docs/voice/api/endpoints; support.plivo.com "Troubleshooting Plivo Endpoints").
  const endpoint = (name: string) => `sip:${name.padEnd(25, "x")}123456789012@phone.plivo.com`;

  it("a SIP endpoint calling a SIP endpoint on ?mode=stt-tts: extraHeaders within Plivo's 512 bytes, the call connects with its caller ids", async () => {
    h = await startPlivo({ mode: "stt-tts" });
    const from = endpoint("caller");
    const to = endpoint("callee");
    // The stand-in refuses extraHeaders over 512 bytes or with anything but letters and digits, as Plivo does.
    const client = await h.dial({ from, to, path: "/telephony/plivo/answer?mode=stt-tts" });
    expect(client.extraHeaders.length).toBeLessThanOrEqual(512);
    const session = h.app.runtime.listSessions().find((s) => s.metadata["callSid"] === client.callId)!;
    expect(session.metadata).toMatchObject({ from, to, direction: "inbound" });
  });

  it("caller ids too long for any packing: the call still connects, its token without them, and says so in the log", async () => {
    h = await startPlivo({ mode: "stt-tts" });
    const from = `sip:${"a".repeat(200)}@trunk.example.com`;
    const client = await h.dial({
      from,
      to: endpoint("callee"),
      path: "/telephony/plivo/answer?mode=stt-tts",
    });
    const session = h.app.runtime.listSessions().find((s) => s.metadata["callSid"] === client.callId)!;
    expect(session.metadata["from"]).toBeUndefined();
    expect(h.logs.some((l) => String(l["msg"]).includes("caller ids too long"))).toBe(true);
  });
});

describe("telephony: Plivo webhooks and streams refused", () => {
  it("answer webhooks without a valid V3 signature get 403", async () => {
    h = await startPlivo({ mode: "stt-tts" });
    const params = {
      CallUUID: "c0ffee00-0000-4000-8000-000000000001",
      Direction: "inbound",
      From: "1",
      To: "2",
    };
    expect((await h.post("/telephony/plivo/answer", params, null)).status).toBe(403);
    expect((await h.post("/telephony/plivo/answer", params, "bm90LWEtc2lnbmF0dXJl")).status).toBe(403);
    expect((await h.post("/telephony/plivo/answer", params)).status).toBe(200);
    expect((await h.post("/telephony/plivo/answer", { Direction: "inbound" })).status).toBe(400);
  });

  it("a stream with an unsigned handshake, no token, a forged token or a reused token is closed 1008; calls are unaffected", async () => {
    h = await startPlivo({ mode: "stt-tts" });
    const answer = async (callId: string) =>
      (
        await h!.post("/telephony/plivo/answer", {
          CallUUID: callId,
          Direction: "inbound",
          From: "1",
          To: "2",
        })
      ).text();
    const tryStream = async (
      xml: string,
      callId: string,
      options: Parameters<PlivoHarness["streamFor"]>[2] = {},
    ) => {
      const c = h!.streamFor(xml, callId, options);
      await c.connect();
      await c.waitFor(() => c.closeCode !== undefined);
      return [c.closeCode, c.closeReason];
    };
    const neighbour = await h.dial();
    const id = "c0ffee00-0000-4000-8000-00000000000a";
    expect(await tryStream(await answer(id), id, { authToken: null })).toEqual([1008, "signature rejected"]);
    expect(await tryStream(await answer(id), id, { authToken: "not-the-token" })).toEqual([
      1008,
      "signature rejected",
    ]);
    expect(await tryStream(await answer(id), id, { extraHeaders: "" })).toEqual([
      1008,
      "stream token missing",
    ]);
    const forged = `t1${"ab".repeat(80)}${"00".repeat(16)}`;
    expect(await tryStream(await answer(id), id, { extraHeaders: `token=${forged}` })).toEqual([
      1008,
      "stream token unknown",
    ]);
    // Another call's token, presented for this call, is refused (and burned); the same token twice is refused the second time.
    const other = "c0ffee00-0000-4000-8000-00000000000b";
    const otherToken = tokenOf(await answer(other));
    const claimsId = `token=${otherToken},callIdHex=${Buffer.from(id).toString("hex")}`;
    expect(await tryStream(await answer(id), id, { extraHeaders: claimsId })).toEqual([
      1008,
      "stream token call_mismatch",
    ]);
    const xml = await answer(id);
    const first = h.streamFor(xml, id);
    await first.connect();
    await waitUntil(() => h!.sessionOf(id) !== undefined);
    expect(await tryStream(xml, id)).toEqual([1008, "stream token reused"]);
    // Malformed frames on the live call are answered by rejection only; both calls go on.
    for (const bad of [
      "{",
      "[]",
      JSON.stringify({ event: "stop" }),
      JSON.stringify({ event: "media", streamId: first.streamId }),
    ])
      first.sendRaw(bad);
    first.sendJson({
      event: "media",
      sequenceNumber: 9,
      streamId: first.streamId,
      media: { track: "inbound", payload: "@@@" },
    });
    await neighbour.sendAudio(speech, { pace: "fast" });
    await neighbour.sendAudio(silence(1500), { pace: "fast" });
    const sessionId = h.sessionOf(neighbour.callId)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    expect(h.app.runtime.getSession(h.sessionOf(id)!)?.state).toBe("active");
    expect(first.closeCode).toBeUndefined();
    const rejected = h.logs.filter((l) => String(l["msg"]).startsWith("media stream frame rejected"));
    expect(rejected.map((l) => l["reason"])).toEqual(
      expect.arrayContaining(["bad_json", "not_an_object", "unknown_event", "invalid_message", "bad_base64"]),
    );
  });
});

describe("telephony: Plivo outbound calls", () => {
  async function placeCall(harness: PlivoHarness): Promise<{ callSid: string; sessionId: string }> {
    const res = await fetch(`${harness.baseUrl}/telephony/calls`, {
      method: "POST",
      headers: { authorization: `Bearer ${PLIVO_ADMIN_TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ carrier: "plivo", to: "+15557654321" }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { callSid: string; sessionId: string };
  }

  it.each(["busy", "no-answer", "timeout", "cancel"])(
    "a signed hangup_url callback with %s closes the dialled call with that reason",
    async (status) => {
      h = await startPlivo({ mode: "stt-tts" });
      const { callSid, sessionId } = await placeCall(h);
      const dial = h.rest.requests.find((r) => r.requestUuid !== undefined)!;
      expect(callSid).toBe(dial.requestUuid);
      expect(dial.body).toMatchObject({
        from: "15550001111",
        to: "15557654321",
        answer_method: "POST",
        hangup_url: `${h.publicUrl}/telephony/plivo/status`,
      });
      expect(String(dial.body["answer_url"])).toMatch(
        /^https:\/\/talkgate\.test\/telephony\/plivo\/answer\?token=t1[0-9a-f]+$/,
      );
      const bad = await h.post(
        "/telephony/plivo/status",
        { RequestUUID: callSid, Direction: "outbound", CallStatus: status },
        "AAAA",
      );
      expect(bad.status).toBe(403);
      const res = await h.post("/telephony/plivo/status", {
        CallUUID: "c0ffee00-0000-4000-8000-0000000000ff",
        RequestUUID: callSid,
        Direction: "outbound",
        CallStatus: status,
        HangupCause: "USER_BUSY",
      });
      expect(res.status).toBe(204);
      await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
      expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: status });
    },
  );

  it("answered: Plivo fetches answer_url, the stream joins the dialled session (real speech in), end_call hangs up the live CallUUID", async () => {
    h = await startPlivo({
      mode: "realtime",
      realtime: { replies: [{ audio: toneAudio(400, "g711_ulaw") }] },
    });
    const { callSid, sessionId } = await placeCall(h);
    const stream = await h.answerDialled(callSid);
    expect(h.sessionOf(callSid)).toBe(sessionId);
    await stream.sendAudio(speech, { pace: "fast" });
    await waitUntil(() => h!.realtime!.audioMsReceived === speech.length / 8);
    h.realtime!.respond();
    await stream.waitFor(() => stream.receivedAudioMs >= 400);
    h.realtime!.callTool({ name: "end_call", arguments: { reason: "done" } });
    // Plivo knows the answered call by the CallUUID the stream's start named, not the dial's request_uuid.
    const hangUp = await h.rest.waitFor((r) => r.method === "DELETE");
    expect(hangUp.path).toBe(`/v1/Account/${PLIVO_AUTH_ID}/Call/${stream.callId}/`);
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
  });

  it("an answer_url with a forged or inbound token is refused; the dial's own works once per stream", async () => {
    h = await startPlivo({ mode: "stt-tts" });
    const { callSid } = await placeCall(h);
    const params = {
      CallUUID: "c0ffee00-0000-4000-8000-0000000000ee",
      RequestUUID: callSid,
      Direction: "outbound",
    };
    const forged = `t1${"ab".repeat(80)}${"00".repeat(16)}`;
    expect((await h.post(`/telephony/plivo/answer?token=${forged}`, params)).status).toBe(403);
    const inbound = await (
      await h.post("/telephony/plivo/answer", { CallUUID: "x-1", Direction: "inbound" })
    ).text();
    const inboundToken = tokenOf(inbound);
    expect((await h.post(`/telephony/plivo/answer?token=${inboundToken}`, params)).status).toBe(403);
  });
});

/** The stream token an answer document carries (in its extraHeaders, packed). */
function tokenOf(xml: string): string {
  const extra = /extraHeaders="([^"]*)"/.exec(xml)![1]!;
  return streamParametersOf(parseExtraHeaders(extra.split(",").join(";")))["token"]!;
}

/** Frames are handled in order: once a later audio frame reached the provider, the frames before it were processed. */
async function processed(h: PlivoHarness, client: PlivoStreamClient): Promise<void> {
  const before = h.realtime!.audioMsReceived;
  await client.sendAudio(new Uint8Array(160).fill(0xff));
  await waitUntil(() => h.realtime!.audioMsReceived > before);
}

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

describe("telephony: a Plivo call whose stream reaches another worker", () => {
  let other: PlivoHarness | undefined;
  const prefix = uniquePrefix("plivo");
  afterEach(async () => {
    await other?.close();
    other = undefined;
    await deleteKeys(SHARED_REDIS_URL, prefix);
  });

  it("two servers on one Redis: the answer webhook on one, the stream on the other; audio both ways", async () => {
    const redis = { redis: { url: SHARED_REDIS_URL, keyPrefix: prefix } };
    h = await startPlivo({ mode: "stt-tts", config: redis });
    other = await startPlivo({ mode: "stt-tts", config: redis });
    const callId = "c0ffee00-0000-4000-8000-0000000000c1";
    const res = await h.post("/telephony/plivo/answer", {
      CallUUID: callId,
      Direction: "inbound",
      From: "1",
      To: "2",
    });
    const client = other.streamFor(await res.text(), callId, {
      url: `ws://127.0.0.1:${other.port}/telephony/plivo/stream`,
    });
    await client.connect();
    await waitUntil(() => other!.sessionOf(callId) !== undefined);
    expect(h.sessionOf(callId)).toBeUndefined();
    await client.sendAudio(silence(300), { pace: "fast" });
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(silence(1500), { pace: "fast" });
    const sessionId = other.sessionOf(callId)!;
    await waitUntil(() => other!.eventsOf(sessionId, "output.audio.done").length === 1);
    expect(
      other
        .eventsOf(sessionId, "transcript.done")
        .some((e) => (e.payload as { role: string }).role === "user"),
    ).toBe(true);
    expect(client.receivedAudioMs).toBeGreaterThan(300);
    expect(client.checkpointsPlayed.length).toBeGreaterThan(0);
    await client.hangUp();
    await waitUntil(() => other!.eventsOf(sessionId, "session.closed").length === 1);
  });
});
