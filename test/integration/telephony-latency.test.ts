/**
 * latency.metrics on a call's session: the call adapter measures caller
 * stop-speaking -> first assistant frame and barge-in -> clear, core carries
 * them as talk.events (no thresholds asserted: figures are in bench/).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { speechAudio, toneAudio } from "../support/fake-openai-realtime-server.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";
import { sessionOfCall, startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);
const metrics = (events: TalkEvent[], name: string) =>
  events
    .filter((e) => e.type === "latency.metrics" && (e.payload as { name: string }).name === name)
    .map((e) => e.payload as Record<string, unknown>);

describe("telephony: latency.metrics", () => {
  it("realtime: provider speech_stopped -> first answer frame, and speech_started -> clear, are talk.events of the call", async () => {
    const reply = speechAudio("Sure.", "g711_ulaw");
    h = await startTelephony({
      mode: "realtime",
      realtime: { replies: [{ audio: reply }, { audio: toneAudio(4000, "g711_ulaw"), holdAfterDeltas: 10 }] },
    });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(silence(1000), { pace: "fast" });
    await waitUntil(() => metrics(h!.eventsOf(sessionId), "speech_end_to_first_audio").length === 1);
    const [first] = metrics(h.eventsOf(sessionId), "speech_end_to_first_audio");
    expect(first).toMatchObject({ detector: "provider", ms: expect.any(Number) });
    expect(first!.ms as number).toBeGreaterThanOrEqual(0);
    // The metric follows the stop and precedes nothing it measures: speech_stopped came first.
    const types = h.eventsOf(sessionId).map((e) => e.type);
    expect(types.indexOf("input.audio.speech_stopped")).toBeLessThan(types.indexOf("latency.metrics"));
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);

    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= reply.length / 8 + 500);
    expect(metrics(h.eventsOf(sessionId), "barge_in_to_clear")).toHaveLength(0);
    h.realtime!.triggerSpeechStarted();
    await client.waitFor(() => client.clears === 1);
    await waitUntil(() => metrics(h!.eventsOf(sessionId), "barge_in_to_clear").length === 1);
    expect(metrics(h.eventsOf(sessionId), "barge_in_to_clear")[0]).toMatchObject({
      detector: "provider",
      ms: expect.any(Number),
    });
  });

  it("stt-tts: local VAD end of speech -> first answer frame carries the endpointing hangover; local barge-in -> clear", async () => {
    h = await startTelephony({
      mode: "stt-tts",
      telephony: { greeting: "Welcome to the test line. ".repeat(8), greetingProtectMs: 0 },
    });
    const client = await h.dial({ playback: "manual" });
    const sessionId = sessionOfCall(h, client.callSid)!;
    await client.waitFor(() => client.receivedAudioMs >= 2000);
    // The greeting's first frame followed no caller speech: no first-audio metric for it.
    expect(metrics(h.eventsOf(sessionId), "speech_end_to_first_audio")).toHaveLength(0);
    await client.sendAudio(speech, { pace: "fast" });
    await client.waitFor(() => client.clears === 1);
    await waitUntil(() => metrics(h!.eventsOf(sessionId), "barge_in_to_clear").length === 1);
    expect(metrics(h.eventsOf(sessionId), "barge_in_to_clear")[0]).toMatchObject({ detector: "local_vad" });
    await client.sendAudio(silence(1500), { pace: "fast" });
    client.play(600_000);
    await waitUntil(() => metrics(h!.eventsOf(sessionId), "speech_end_to_first_audio").length === 1);
    expect(metrics(h.eventsOf(sessionId), "speech_end_to_first_audio")[0]).toMatchObject({
      detector: "local_vad",
      endpointingMs: h.app.config.talk.input.silenceTimeoutMs,
    });
    await client.stop();
  });

  it("stt-tts, adaptive end of turn: the metric carries the endpoint that ended that turn, not silenceTimeoutMs", async () => {
    // maxMs 600: whatever the words (none yet: 600; words: 550; a finished sentence: 300), not the 800 ms.
    h = await startTelephony({
      mode: "stt-tts",
      telephony: { greeting: "Welcome to the test line. ".repeat(8), greetingProtectMs: 0 },
      talk: { input: { endOfTurn: { mode: "adaptive", minMs: 300, maxMs: 600 } } },
    });
    const client = await h.dial({ playback: "manual" });
    const sessionId = sessionOfCall(h, client.callSid)!;
    await client.waitFor(() => client.receivedAudioMs >= 2000);
    await client.sendAudio(speech, { pace: "fast" });
    await client.waitFor(() => client.clears === 1);
    await client.sendAudio(silence(1500), { pace: "fast" });
    client.play(600_000);
    await waitUntil(() => metrics(h!.eventsOf(sessionId), "speech_end_to_first_audio").length === 1);
    const stopped = h.eventsOf(sessionId, "input.audio.speech_stopped").at(-1)!.payload as {
      endpointMs: number;
    };
    expect(stopped.endpointMs).toBeLessThan(h.app.config.talk.input.silenceTimeoutMs);
    expect(metrics(h.eventsOf(sessionId), "speech_end_to_first_audio")[0]).toMatchObject({
      detector: "local_vad",
      endpointingMs: stopped.endpointMs,
    });
    await client.stop();
  });
});

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}
