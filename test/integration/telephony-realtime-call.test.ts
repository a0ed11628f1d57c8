/**
 * Realtime phone calls end to end: signed webhook -> TwiML -> stream socket
 * (the local Twilio client) -> call adapter -> core session -> OpenAI
 * Realtime (the local fake server) and back, with real caller speech.
 */
import { afterEach, describe, expect, it } from "vitest";
import { speechAudio, toneAudio } from "../support/fake-openai-realtime-server.js";
import {
  loadSpeechUlaw,
  SPEECH_RECORDINGS,
  type TwilioStreamClient,
} from "../support/twilio-stream-client.js";
import { sessionOfCall, startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);

describe("telephony: realtime calls", () => {
  it("a full call relays real speech as u-law both ways, with marks, transcripts and one session.closed on stop", async () => {
    const reply = speechAudio("Sure, I can help with that.", "g711_ulaw");
    h = await startTelephony({
      mode: "realtime",
      realtime: { replies: [{ audio: reply, transcript: "Sure, I can help with that." }] },
    });
    const client = await h.dial();
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(new Uint8Array(8000).fill(0xff), { pace: "fast" }); // 1 s of silence ends the turn
    await client.waitFor(() => client.receivedAudioMs >= reply.length / 8);
    // u-law went to the provider untouched: the session asked for audio/pcmu both ways.
    const audio = h.realtime!.session.audio as { input: { format: unknown }; output: { format: unknown } };
    expect(audio.input.format).toEqual({ type: "audio/pcmu" });
    expect(audio.output.format).toEqual({ type: "audio/pcmu" });
    await waitUntil(() => h!.realtime!.audioMsReceived === (speech.length + 8000) / 8); // every frame arrived, as sent
    // Whole 20 ms frames, up to a burst's 10 in one message (Twilio plays any length), every burst followed by a
    // mark that was echoed.
    const sizes = client.received
      .filter((m) => m.event === "media")
      .map((m) => Buffer.from(String((m.media as { payload: string }).payload), "base64").length);
    expect(sizes.every((n) => n > 0 && n % 160 === 0 && n <= 1600)).toBe(true);
    const frames = sizes.reduce((a, n) => a + n / 160, 0);
    expect(client.marksReceived.length).toBeGreaterThanOrEqual(Math.ceil(frames / 10));
    const sessionId = sessionOfCall(h, client.callSid)!;
    expect(sessionId).toBeDefined();
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    const session = h.app.runtime.getSession(sessionId)!;
    expect(session.metadata).toMatchObject({ callSid: client.callSid, surface: "phone" });
    expect(h.eventsOf(sessionId, "transcript.done").map((e) => (e.payload as { role: string }).role)).toEqual(
      ["user", "assistant"],
    );
    await client.stop();
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "completed" });
  });

  it("barge-in during a long answer: clear, response cancelled, truncated at the heard position, one terminal event", async () => {
    const long = toneAudio(6000, "g711_ulaw");
    h = await startTelephony({
      mode: "realtime",
      realtime: { replies: [{ audio: long, holdAfterDeltas: 30 }] },
    });
    const client = await h.dial({ playback: "manual" });
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 2000);
    client.play(1000); // the caller heard one second
    await client.waitFor(() => client.marksEchoed.length >= 5);
    await processed(h, client);
    h.realtime!.triggerSpeechStarted();
    await client.waitFor(() => client.clears === 1);
    await h.realtime!.waitFor((e) => e.type === "conversation.item.truncate");
    const truncate = h.realtime!.received.find((e) => e.type === "conversation.item.truncate")!.event;
    expect(truncate.audio_end_ms).toBe(1000);
    expect(h.realtime!.truncations).toHaveLength(1);
    expect(h.realtime!.received.some((e) => e.type === "response.cancel")).toBe(true);
    const sessionId = sessionOfCall(h, client.callSid)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.cancelled").length === 1);
    expect(h.eventsOf(sessionId, "output.audio.done")).toHaveLength(0);
    expect(h.eventsOf(sessionId, "output.audio.cancelled")[0]!.payload).toMatchObject({ reason: "barge_in" });
  });

  it("truncation offsets are per reply: a second reply is cut at its own heard position, not the stream clock", async () => {
    const first = toneAudio(1000, "g711_ulaw");
    const second = toneAudio(4000, "g711_ulaw");
    h = await startTelephony({
      mode: "realtime",
      realtime: { replies: [{ audio: first }, { audio: second, holdAfterDeltas: 20 }] },
    });
    const client = await h.dial({ playback: "manual" });
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 1000);
    client.play(1000);
    const sessionId = sessionOfCall(h, client.callSid)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 3000);
    client.play(600);
    await client.waitFor(() => client.marksEchoed.length >= 8);
    await processed(h, client);
    h.realtime!.triggerSpeechStarted();
    await h.realtime!.waitFor((e) => e.type === "conversation.item.truncate");
    // 600 ms of the second reply were heard (marks every 200 ms); the stream clock would say 1600.
    expect(h.realtime!.truncations).toEqual([{ itemId: expect.any(String), audioEndMs: 600 }]);
  });

  it("a protected greeting is not interrupted by caller speech", async () => {
    h = await startTelephony({
      mode: "realtime",
      telephony: { greeting: "Hello, you reached the test line.", greetingProtectMs: 600_000 },
      realtime: { replies: [{ audio: toneAudio(3000, "g711_ulaw"), holdAfterDeltas: 10 }] },
    });
    const client = await h.dial({ playback: "manual" });
    await h.realtime!.waitFor((e) => e.type === "response.create");
    await client.waitFor(() => client.receivedAudioMs >= 1000);
    h.realtime!.triggerSpeechStarted();
    const sessionId = sessionOfCall(h, client.callSid)!;
    await waitUntil(() => h!.eventsOf(sessionId, "input.audio.speech_started").length === 1);
    expect(client.clears).toBe(0);
    expect(h.realtime!.received.some((e) => e.type === "response.cancel")).toBe(false);
    // The speech starts no turn of its own: the greeting's turn is neither superseded nor cancelled.
    expect(h.eventsOf(sessionId, "turn.cancelled")).toHaveLength(0);
    expect(h.eventsOf(sessionId, "output.audio.cancelled")).toHaveLength(0);
    expect(h.eventsOf(sessionId, "turn.started")).toHaveLength(1);
  });

  it("DTMF digits become a talk.event and reach the model as text", async () => {
    h = await startTelephony({ mode: "realtime" });
    const client = await h.dial();
    client.sendDtmf("7");
    await h.realtime!.waitFor((e) => e.type === "conversation.item.create");
    const item = h.realtime!.received.find((e) => e.type === "conversation.item.create")!.event.item as {
      content: Array<{ text: string }>;
    };
    expect(item.content[0]!.text).toContain("7");
    const sessionId = sessionOfCall(h, client.callSid)!;
    await waitUntil(() => h!.eventsOf(sessionId, "transcript.done").length >= 1);
    expect(h.eventsOf(sessionId, "transcript.done")[0]!.payload).toMatchObject({
      role: "user",
      input: "dtmf",
      digits: "7",
    });
  });

  it("end_call hangs up through the Twilio REST API only after the farewell's last mark is echoed", async () => {
    const farewell = toneAudio(1000, "g711_ulaw");
    h = await startTelephony({
      mode: "realtime",
      realtime: { replies: [{ audio: farewell, transcript: "Goodbye!" }] },
    });
    const client = await h.dial({ playback: "manual" });
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 1000 && client.marksReceived.length >= 5);
    h.realtime!.callTool({ name: "end_call", arguments: { reason: "caller done" } });
    const sessionId = sessionOfCall(h, client.callSid)!;
    await waitUntil(() => h!.eventsOf(sessionId, "tool.call").length === 1);
    client.play(500);
    await processed(h, client);
    expect(h.rest.requests).toHaveLength(0); // half the farewell heard: no hang-up yet
    client.play(500);
    const request = await h.rest.waitFor((r) => r.path.endsWith(`/Calls/${client.callSid}.json`));
    expect(request.params.get("Status")).toBe("completed");
    expect(client.playedMs).toBe(1000);
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
  });
});

/** Frames from the client are handled in order: once a later audio frame reached the provider, the echoes before it were processed. */
async function processed(h: TelephonyHarness, client: TwilioStreamClient): Promise<void> {
  const before = h.realtime!.audioMsReceived;
  await client.sendAudio(new Uint8Array(160).fill(0xff));
  await waitUntil(() => h.realtime!.audioMsReceived > before);
}

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}
