/**
 * Vonage calls end to end: signed answer webhook (GET) -> NCCO -> the
 * WebSocket (the local Vonage stand-in: websocket:connected with the NCCO's
 * headers, binary L16 16 kHz frames, notify / clear) -> call -> core session
 * -> OpenAI Realtime (the local fake) or the local stt-tts engines, and back,
 * with real caller speech.
 */
import { afterEach, describe, expect, it } from "vitest";
import { speechAudio, toneAudio } from "../support/fake-openai-realtime-server.js";
import { startVonage, waitUntil, type VonageHarness } from "../support/vonage-harness.js";
import { loadSpeechPcm16k, type VonageStreamClient } from "../support/vonage-stream-client.js";

let h: VonageHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const speech = loadSpeechPcm16k();
const silence = (ms: number) => new Uint8Array(ms * 32);

/** Caller audio reached the provider after everything sent before it (ordering barrier). */
async function processed(harness: VonageHarness, client: VonageStreamClient): Promise<void> {
  const before = harness.realtime!.audioMsReceived;
  await client.sendAudio(silence(20));
  await waitUntil(() => harness.realtime!.audioMsReceived > before);
}

describe("telephony: Vonage realtime calls", () => {
  it("a full call relays real speech both ways as 640-byte L16 frames, with notifies, transcripts, and ends when Vonage closes the socket", async () => {
    const reply = speechAudio("Sure, I can help with that.", "pcm16");
    h = await startVonage({
      mode: "realtime",
      realtime: { replies: [{ audio: reply, transcript: "Sure, I can help with that." }] },
    });
    const { uuid, client } = await h.dial();
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(silence(1000), { pace: "fast" });
    const replyMs = reply.length / 48; // PCM16 24 kHz
    await client.waitFor(() => client.receivedAudioMs >= replyMs - 20);
    // Every 20 ms of caller audio reached the provider (resampled once per leg to its format).
    await waitUntil(() => h!.realtime!.audioMsReceived >= (speech.length + 32_000) / 32 - 20);
    expect(client.frames.every((f) => f.byteLength === 640)).toBe(true);
    expect(client.notifiesReceived.length).toBeGreaterThanOrEqual(Math.ceil(client.frames.length / 10));
    expect(client.notifiesEchoed.length).toBe(client.notifiesReceived.length);
    const sessionId = h.sessionOf(uuid)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    expect(h.app.runtime.getSession(sessionId)!.metadata).toMatchObject({
      callSid: uuid,
      carrier: "vonage",
      surface: "phone",
      from: "447700900123",
    });
    expect(h.eventsOf(sessionId, "transcript.done").map((e) => (e.payload as { role: string }).role)).toEqual(
      ["user", "assistant"],
    );
    await client.hangUp(); // Vonage sends no stop: the socket closes with 1000
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "completed" });
  });

  it("barge-in during a long answer: clear (answered websocket:cleared), response cancelled, truncated at the heard position", async () => {
    h = await startVonage({
      mode: "realtime",
      realtime: { replies: [{ audio: toneAudio(6000, "pcm16"), holdAfterDeltas: 30 }] },
    });
    const { uuid, client } = await h.dial({ playback: "manual" });
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 2000);
    client.play(1000); // the caller heard one second
    await client.waitFor(() => client.notifiesEchoed.length >= 5);
    await processed(h, client);
    h.realtime!.triggerSpeechStarted();
    await client.waitFor(() => client.clears === 1);
    await h.realtime!.waitFor((e) => e.type === "conversation.item.truncate");
    // What was heard, to the last notify answered: the provider's 24 kHz audio resampled to the line's 16 kHz
    // starts a few ms late, so notify positions sit a frame off the second: never beyond what was played.
    const [cut] = h.realtime!.truncations;
    expect(cut!.audioEndMs).toBeLessThanOrEqual(1000);
    expect(cut!.audioEndMs).toBeGreaterThanOrEqual(900);
    expect(h.realtime!.truncations).toHaveLength(1);
    expect(h.realtime!.received.some((e) => e.type === "response.cancel")).toBe(true);
    const sessionId = h.sessionOf(uuid)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.cancelled").length === 1);
    expect(h.eventsOf(sessionId, "output.audio.done")).toHaveLength(0);
    expect(h.eventsOf(sessionId, "output.audio.cancelled")[0]!.payload).toMatchObject({ reason: "barge_in" });
  });

  it("truncation offsets are per reply: a second reply is cut at its own heard position", async () => {
    h = await startVonage({
      mode: "realtime",
      realtime: {
        replies: [
          { audio: toneAudio(1000, "pcm16") },
          { audio: toneAudio(4000, "pcm16"), holdAfterDeltas: 20 },
        ],
      },
    });
    const { uuid, client } = await h.dial({ playback: "manual" });
    h.realtime!.respond();
    const sessionId = h.sessionOf(uuid)!;
    await client.waitFor(() => client.receivedAudioMs >= 960);
    client.play(1000);
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 2900);
    client.play(600);
    await client.waitFor(() => client.notifiesEchoed.length >= 8);
    await processed(h, client);
    h.realtime!.triggerSpeechStarted();
    await h.realtime!.waitFor((e) => e.type === "conversation.item.truncate");
    // 600 ms of the second reply were heard (to a frame: see the barge-in test); the stream clock would say ~1600.
    const [cut] = h.realtime!.truncations;
    expect(h.realtime!.truncations).toHaveLength(1);
    expect(cut!.audioEndMs).toBeLessThanOrEqual(600);
    expect(cut!.audioEndMs).toBeGreaterThanOrEqual(500);
  });

  it("a 40 s answer is paced under Vonage's buffer: never more than the bound ahead, none dropped, all of it played", async () => {
    h = await startVonage({
      mode: "realtime",
      realtime: { replies: [{ audio: toneAudio(40_000, "pcm16"), chunkBytes: 48 * 1000 }] },
    });
    const { uuid, client } = await h.dial({ playback: "manual" });
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 14_000);
    await new Promise((r) => setTimeout(r, 200)); // nothing more comes while nothing is played
    expect(client.receivedAudioMs).toBeLessThanOrEqual(15_000 + 200);
    const sessionId = h.sessionOf(uuid)!;
    while (h.eventsOf(sessionId, "output.audio.done").length === 0) {
      client.play(1000);
      await new Promise((r) => setTimeout(r, 5));
      expect(client.receivedAudioMs - client.playedMs).toBeLessThanOrEqual(15_000 + 200);
    }
    expect(client.receivedAudioMs).toBeGreaterThanOrEqual(40_000);
    expect(client.overflowFrames).toBe(0);
    expect(client.peakBufferedFrames).toBeLessThanOrEqual(760);
  });

  it("DTMF digits become a talk.event and reach the model as text", async () => {
    h = await startVonage({ mode: "realtime" });
    const { uuid, client } = await h.dial();
    client.sendDtmf("7");
    await h.realtime!.waitFor((e) => e.type === "conversation.item.create");
    const item = h.realtime!.received.find((e) => e.type === "conversation.item.create")!.event.item as {
      content: Array<{ text: string }>;
    };
    expect(item.content[0]!.text).toContain("7");
    const sessionId = h.sessionOf(uuid)!;
    await waitUntil(() => h!.eventsOf(sessionId, "transcript.done").length >= 1);
    expect(h.eventsOf(sessionId, "transcript.done")[0]!.payload).toMatchObject({
      role: "user",
      input: "dtmf",
      digits: "7",
    });
  });

  it("end_call hangs up through the Voice API (PUT hangup) only after the farewell's last notify is answered", async () => {
    h = await startVonage({
      mode: "realtime",
      realtime: { replies: [{ audio: toneAudio(1000, "pcm16"), transcript: "Goodbye!" }] },
    });
    const { uuid, client } = await h.dial({ playback: "manual" });
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 1000 && client.notifiesReceived.length >= 5);
    h.realtime!.callTool({ name: "end_call", arguments: { reason: "caller done" } });
    const sessionId = h.sessionOf(uuid)!;
    await waitUntil(() => h!.eventsOf(sessionId, "tool.call").length === 1);
    client.play(500);
    await processed(h, client);
    expect(h.rest.requests).toHaveLength(0); // half the farewell heard: no hang-up yet
    client.play(500);
    const request = await h.rest.waitFor((r) => r.path === `/v1/calls/${uuid}`);
    expect(request).toMatchObject({ method: "PUT", body: { action: "hangup" } });
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
  });
});

describe("telephony: Vonage stt-tts calls", () => {
  it("speech starts and ends a turn, the caller is transcribed, the answer is spoken back as 640-byte L16 frames with notifies", async () => {
    h = await startVonage({ mode: "stt-tts" });
    const { uuid, client } = await h.dial();
    await client.sendAudio(silence(300), { pace: "fast" });
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(silence(1500), { pace: "fast" });
    const sessionId = h.sessionOf(uuid)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1, 30_000);
    const heard = h
      .eventsOf(sessionId, "transcript.done")
      .find((e) => (e.payload as { role: string }).role === "user")!;
    expect((heard.payload as { text: string }).text.length).toBeGreaterThan(0);
    expect(client.receivedAudioMs).toBeGreaterThan(300);
    expect(client.frames.every((f) => f.byteLength === 640)).toBe(true);
    expect(client.notifiesEchoed.length).toBeGreaterThan(0);
    expect(h.eventsOf(sessionId, "turn.started").length).toBe(1);
  });
});
