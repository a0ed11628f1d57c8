/**
 * Telnyx calls end to end: Ed25519-signed TeXML webhook -> TeXML
 * <Connect><Stream rtp> -> the media stream (the local Telnyx peer, frames
 * as Telnyx documents them, media delivered out of order) -> the call ->
 * core session -> OpenAI Realtime (the local fake) or the local stt-tts
 * engines, and back as PCMU `media` frames with marks Telnyx sends back
 * once played; `clear` on barge-in, DTMF, and end_call hanging up through
 * Call Control once the farewell was heard.
 */
import { afterEach, describe, expect, it } from "vitest";
import { speechAudio, toneAudio } from "../support/fake-openai-realtime-server.js";
import type { TelnyxStreamClient } from "../support/telnyx-stream-client.js";
import { startTelnyx, waitUntil, type TelnyxHarness } from "../support/telnyx-harness.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";

let h: TelnyxHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);

describe("telnyx: realtime calls", () => {
  it("a full call relays real speech (sent out of order) as PCMU both ways, with marks, transcripts and one session.closed on stop", async () => {
    const reply = speechAudio("Sure, I can help with that.", "g711_ulaw");
    h = await startTelnyx({
      mode: "realtime",
      realtime: { replies: [{ audio: reply, transcript: "Sure, I can help with that." }] },
    });
    const client = await h.dial();
    await client.sendAudio(speech, { pace: "fast", order: "swapped" });
    await client.sendAudio(silence(1000), { pace: "fast", order: "swapped" });
    await client.waitFor(() => client.receivedAudioMs >= reply.length / 8);
    const audio = h.realtime!.session.audio as { input: { format: unknown }; output: { format: unknown } };
    expect(audio.input.format).toEqual({ type: "audio/pcmu" });
    expect(audio.output.format).toEqual({ type: "audio/pcmu" });
    // Every frame reached the provider once, none lost to the reordering.
    await waitUntil(() => h!.realtime!.audioMsReceived === (speech.length + 8000) / 8);
    expect(client.media.every((m) => m.length > 0 && m.length % 160 === 0 && m.length <= 1600)).toBe(true);
    expect(client.marksReceived.length).toBeGreaterThanOrEqual(Math.ceil(client.media.length / 10));
    expect(client.marksEchoed).toEqual(client.marksReceived);
    expect(client.refused).toEqual([]); // every frame we sent is one Telnyx takes
    const sessionId = h.sessionOf(client.callControlId)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    expect(h.app.runtime.getSession(sessionId)!.metadata).toMatchObject({
      callSid: client.callControlId,
      surface: "phone",
    });
    expect(h.eventsOf(sessionId, "transcript.done").map((e) => (e.payload as { role: string }).role)).toEqual(
      ["user", "assistant"],
    );
    await client.stop();
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "completed" });
  });

  it("barge-in during a long answer: clear, response cancelled, truncated at the heard position", async () => {
    h = await startTelnyx({
      mode: "realtime",
      realtime: { replies: [{ audio: toneAudio(6000, "g711_ulaw"), holdAfterDeltas: 30 }] },
    });
    const client = await h.dial({ playback: "manual" });
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 2000);
    client.play(1000);
    await client.waitFor(() => client.marksEchoed.length >= 5);
    await processed(h, client);
    h.realtime!.triggerSpeechStarted();
    await client.waitFor(() => client.clears === 1);
    await h.realtime!.waitFor((e) => e.type === "conversation.item.truncate");
    expect(h.realtime!.truncations).toEqual([{ itemId: expect.any(String), audioEndMs: 1000 }]);
    expect(h.realtime!.received.some((e) => e.type === "response.cancel")).toBe(true);
    const sessionId = h.sessionOf(client.callControlId)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.cancelled").length === 1);
    expect(h.eventsOf(sessionId, "output.audio.done")).toHaveLength(0);
    expect(h.eventsOf(sessionId, "output.audio.cancelled")[0]!.payload).toMatchObject({ reason: "barge_in" });
  });

  it("truncation is per reply: a second reply is cut at its own heard position", async () => {
    h = await startTelnyx({
      mode: "realtime",
      realtime: {
        replies: [
          { audio: toneAudio(1000, "g711_ulaw") },
          { audio: toneAudio(4000, "g711_ulaw"), holdAfterDeltas: 20 },
        ],
      },
    });
    const client = await h.dial({ playback: "manual" });
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 1000);
    client.play(1000);
    const sessionId = h.sessionOf(client.callControlId)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 3000);
    client.play(600);
    await client.waitFor(() => client.marksEchoed.length >= 8);
    await processed(h, client);
    h.realtime!.triggerSpeechStarted();
    await h.realtime!.waitFor((e) => e.type === "conversation.item.truncate");
    expect(h.realtime!.truncations).toEqual([{ itemId: expect.any(String), audioEndMs: 600 }]);
  });

  it("a DTMF frame becomes a talk.event and reaches the model as text", async () => {
    h = await startTelnyx({ mode: "realtime" });
    const client = await h.dial();
    client.sendDtmf("7");
    await h.realtime!.waitFor((e) => e.type === "conversation.item.create");
    const item = h.realtime!.received.find((e) => e.type === "conversation.item.create")!.event.item as {
      content: Array<{ text: string }>;
    };
    expect(item.content[0]!.text).toContain("7");
    const sessionId = h.sessionOf(client.callControlId)!;
    await waitUntil(() => h!.eventsOf(sessionId, "transcript.done").length >= 1);
    expect(h.eventsOf(sessionId, "transcript.done")[0]!.payload).toMatchObject({
      role: "user",
      input: "dtmf",
      digits: "7",
    });
  });

  it("end_call hangs up through Call Control only after the farewell's last mark came back", async () => {
    h = await startTelnyx({
      mode: "realtime",
      realtime: { replies: [{ audio: toneAudio(1000, "g711_ulaw"), transcript: "Goodbye!" }] },
    });
    const client = await h.dial({ playback: "manual" });
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 1000 && client.marksReceived.length >= 5);
    h.realtime!.callTool({ name: "end_call", arguments: { reason: "caller done" } });
    const sessionId = h.sessionOf(client.callControlId)!;
    await waitUntil(() => h!.eventsOf(sessionId, "tool.call").length === 1);
    client.play(500);
    await processed(h, client);
    expect(h.rest.requests).toHaveLength(0);
    client.play(500);
    const request = await h.rest.waitFor((r) => r.path.endsWith("/actions/hangup"));
    expect(request.id).toBe(client.callControlId);
    expect(client.playedMs).toBe(1000);
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
  });
});

describe("telnyx: stt-tts calls", () => {
  it("a full call: real speech (out of order) is transcribed, the answer comes back as PCMU with marks", async () => {
    h = await startTelnyx({ mode: "stt-tts" });
    const client = await h.dial();
    await client.sendAudio(silence(300), { pace: "fast", order: "swapped" });
    await client.sendAudio(speech, { pace: "fast", order: "swapped" });
    await client.sendAudio(silence(1500), { pace: "fast", order: "swapped" });
    const sessionId = h.sessionOf(client.callControlId)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    const heard = h
      .eventsOf(sessionId, "transcript.done")
      .find((e) => (e.payload as { role: string }).role === "user")!;
    expect((heard.payload as { text: string }).text.length).toBeGreaterThan(0);
    expect(client.receivedAudioMs).toBeGreaterThan(300);
    expect(client.media.every((m) => m.length > 0 && m.length % 160 === 0 && m.length <= 1600)).toBe(true);
    expect(client.marksEchoed.length).toBeGreaterThan(0);
    expect(h.eventsOf(sessionId, "turn.started")).toHaveLength(1);
    await client.stop();
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
  });

  it("caller speech during a long answer clears the line and cancels the answer", async () => {
    h = await startTelnyx({
      mode: "stt-tts",
      telephony: { greeting: "Welcome to the test line. ".repeat(12), greetingProtectMs: 0 },
    });
    const client = await h.dial({ playback: "manual" });
    const sessionId = h.sessionOf(client.callControlId)!;
    await client.waitFor(() => client.receivedAudioMs >= 2000);
    client.play(500);
    await client.sendAudio(speech, { pace: "fast" });
    await client.waitFor(() => client.clears === 1);
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.cancelled").length === 1);
    expect(h.eventsOf(sessionId, "output.audio.cancelled")[0]!.payload).toMatchObject({ reason: "barge_in" });
    await client.stop();
  });
});

/** Frames are handled in order: once a later audio frame reached the provider, the marks before it were processed. */
async function processed(harness: TelnyxHarness, client: TelnyxStreamClient): Promise<void> {
  const before = harness.realtime!.audioMsReceived;
  await client.sendAudio(silence(20));
  await waitUntil(() => harness.realtime!.audioMsReceived > before);
}
