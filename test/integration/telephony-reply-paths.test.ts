/**
 * Seed 003's reply paths on a phone call: the path comes from configuration
 * (agent.realtime.replyPath), the caller's u-law is decoded for the embedded
 * pocketsphinx instead of passing through to the provider, and the provider
 * (the OpenAI Realtime stand-in) answers or speaks as the path says.
 */
import { afterEach, describe, expect, it } from "vitest";
import { BRIDGE_LABEL } from "../../src/voice/pipelines/realtime-local-replies.js";
import type { ReceivedEvent } from "../support/fake-openai-realtime-server.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";
import { sessionOfCall, startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = new Uint8Array(12_000).fill(0xff); // 1.5 s of u-law silence ends the caller's turn

const userText = (e: ReceivedEvent): string | undefined => {
  if (e.type !== "conversation.item.create") return undefined;
  const item = e.event["item"] as { type?: string; role?: string; content?: { text?: string }[] };
  return item.type === "message" && item.role === "user" ? item.content?.[0]?.text : undefined;
};

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

describe("telephony: realtime reply paths", () => {
  it("bridge: the caller's words reach the provider as labelled text, its answer reaches the caller", async () => {
    h = await startTelephony({ mode: "realtime", config: { agent: { realtime: { replyPath: "bridge" } } } });
    const client = await h.dial();
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(silence, { pace: "fast" });
    const sent = await h.realtime!.waitFor((e) => userText(e) !== undefined);
    // Phone-band audio: pocketsphinx's words vary, so the check is that the provider got exactly them.
    const sessionId = sessionOfCall(h, client.callSid)!;
    const heard = (h.eventsOf(sessionId, "transcript.done")[0]!.payload as { text: string }).text;
    expect(heard.length).toBeGreaterThan(0);
    expect(userText(sent)).toBe(`${BRIDGE_LABEL} ${heard}`);
    // The provider heard nothing: PCM, not the line's u-law, and no audio at all.
    expect(h.realtime!.received.filter((e) => e.type === "input_audio_buffer.append")).toEqual([]);
    await client.waitFor(() => client.receivedAudioMs >= 400);
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    await client.stop();
  });

  it("brain: the provider gets no tools and speaks the local agent's answer to what the caller said", async () => {
    h = await startTelephony({ mode: "realtime", config: { agent: { realtime: { replyPath: "brain" } } } });
    const client = await h.dial();
    const update = await h.realtime!.waitFor((e) => e.type === "session.update");
    expect((update.event["session"] as { tools: unknown[] }).tools).toEqual([]);
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(silence, { pace: "fast" });
    const sessionId = sessionOfCall(h, client.callSid)!;
    await waitUntil(() => h!.eventsOf(sessionId, "transcript.done").length >= 1);
    const heard = (h.eventsOf(sessionId, "transcript.done")[0]!.payload as { text: string }).text;
    const said = await h.realtime!.waitFor(
      (e) => e.type === "response.create" && (e.event["response"] as { input?: unknown }).input !== undefined,
    );
    // The built-in agent repeats what it did not understand: the provider reads the agent's words.
    const text = (said.event["response"] as { input: { content: { text: string }[] }[] }).input[0]!
      .content[0]!.text;
    expect(text.toLowerCase()).toContain(heard.toLowerCase());
    await client.waitFor(() => client.receivedAudioMs >= 400);
    expect(h.realtime!.received.filter((e) => e.type === "input_audio_buffer.append")).toEqual([]);
    await client.stop();
  });
});
