/**
 * The answer prepared ahead of the end of turn (talk.input.endOfTurn.prepareAnswer, on by default): the
 * whole server with a Twilio stand-in call, the local recognizer on a pocketsphinx-testdata recording,
 * and the agent as a local OpenAI-compatible chat completions server. The agent is asked while the
 * caller is quiet, before the fixed endpoint ends the turn, and that consult is the answer; when the
 * caller goes on after the pause, the early consult is closed and the answer is to all the words.
 * The endpoint is 6 s here so the words of the pause are in whatever the machine's load, and the caller's
 * audio comes in real time. Each app's recognizer has its model loaded before the call (warmRecognizer): a
 * call's first words wait for that load, and under the whole suite they came more than 2.7 s, then more than
 * 6 s, into the pause whose words these tests time (CI at 70ed1e9, f8dd816, aaf36e4's run).
 */
import { readFileSync } from "node:fs";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { toInt16 } from "../../src/codecs/testing/audio-tools.js";
import { FakeChatCompletionsServer } from "../support/fake-chat-completions-server.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";
import {
  logEventsIfFailed,
  sessionOfCall,
  startTelephony,
  type TelephonyHarness,
} from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
const chat = new FakeChatCompletionsServer({
  apiKey: undefined,
  answer: "Okay, going forward.",
  tokenChars: 6,
});
let chatUrl = "";

beforeAll(async () => {
  chatUrl = await chat.start();
});
afterAll(async () => {
  await chat.close();
});
afterEach(async (ctx) => {
  logEventsIfFailed(ctx, h);
  await h?.close();
  h = undefined;
  chat.requests.length = 0;
  chat.configure({ holdFirstToken: false });
});

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

/** The fixed endpoint of these calls, ms. */
const ENDPOINT_MS = 6000;

async function start(input: Record<string, unknown> = {}): Promise<TelephonyHarness> {
  const harness = await startTelephony({
    mode: "stt-tts",
    telephony: { greeting: "" },
    talk: { input: { silenceTimeoutMs: ENDPOINT_MS, ...input } },
    config: { agent: { endpoint: { baseUrl: chatUrl, model: "fake-model" }, progressCueMs: 0 } },
  });
  await warmRecognizer(harness);
  return harness;
}

/**
 * The app's recognizer (its default STT) decodes the recording once: its model is loaded when the call starts.
 * Speech, not silence: a stream of silence ends without a decode, so without waiting for the model.
 */
async function warmRecognizer(harness: TelephonyHarness): Promise<void> {
  const stt = harness.app.providers.optional("stt");
  if (!stt) throw new Error("the app has no speech recognizer");
  const stream = stt.startStream({
    format: { encoding: "pcm16", sampleRate: 16_000, channels: 1 },
    signal: new AbortController().signal,
  });
  stream.write(toInt16(readFileSync(SPEECH_RECORDINGS.goforward))); // 16 kHz s16le
  const { text } = await stream.finish();
  if (!/forward/i.test(text)) throw new Error(`the recognizer's warm-up heard "${text}"`);
}

type ChatBody = { messages: Array<{ role: string; content: string }> };
const userWords = (i: number) => (chat.requests[i]!.body as ChatBody).messages.at(-1)!.content;

/**
 * A call whose caller says one thing and is quiet (in real time: the recognizer's words at the pause come
 * while the caller is quiet), until its answer has played; the consults asked for by the end of its turn.
 */
async function oneTurn(h: TelephonyHarness) {
  const client = await h.dial();
  const sessionId = sessionOfCall(h, client.callSid)!;
  let askedByTurnEnd = -1;
  h.app.runtime.subscribeAll((e) => {
    if (e.sessionId === sessionId && e.type === "input.audio.speech_stopped")
      askedByTurnEnd = chat.requests.length;
  });
  await client.sendAudio(speech, { pace: "realtime" });
  await client.sendAudio(silence(ENDPOINT_MS + 1000), { pace: "realtime" });
  await waitUntil(() => h.eventsOf(sessionId, "output.audio.done").length === 1);
  return { client, sessionId, askedByTurnEnd };
}

/** The call's usage.metrics `preparedAnswers`, told as its session closes. */
async function preparedReport(h: TelephonyHarness, sessionId: string) {
  await waitUntil(() => h.eventsOf(sessionId, "session.closed").length === 1);
  const report = h
    .eventsOf(sessionId, "usage.metrics")
    .map((e) => (e.payload as Record<string, unknown>)["preparedAnswers"])
    .find((p) => p !== undefined);
  return report as { prepared: number; used: number; discarded: number };
}

describe("telephony: the answer prepared ahead of the end of turn", () => {
  it("the agent is asked while the caller is quiet, before the turn ends, and that consult is the answer", async () => {
    h = await start();
    const { client, sessionId, askedByTurnEnd } = await oneTurn(h);
    const heard = (h.eventsOf(sessionId, "transcript.done")[0]!.payload as { text: string }).text;
    expect(heard).not.toBe("");
    expect(askedByTurnEnd).toBe(1);
    expect(chat.requests).toHaveLength(1);
    expect(userWords(0)).toBe(heard);
    const said = h.eventsOf(sessionId, "output.text.done").map((e) => (e.payload as { text: string }).text);
    expect(said).toEqual(["Okay, going forward."]);
    expect(h.eventsOf(sessionId, "turn.cancelled")).toHaveLength(0);
    await client.stop();
    // In the session's usage record: one prepared, used.
    expect(await preparedReport(h, sessionId)).toEqual({ prepared: 1, used: 1, discarded: 0 });
  });

  it("the caller goes on after the pause: the early consult is closed, the answer is to all the words", async () => {
    h = await start();
    chat.configure({ holdFirstToken: true });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    await client.sendAudio(speech, { pace: "realtime" });
    // The recording ends in about 640 ms of quiet and starts with about 520: with up to 4.5 s more while the
    // first words are asked for (the stream held before its answer), a pause under the 6 s endpoint: one turn.
    for (let ms = 0; ms < 4500 && chat.requests.length === 0; ms += 20)
      await client.sendAudio(silence(20), { pace: "realtime" });
    expect(chat.requests.length).toBeGreaterThanOrEqual(1);
    expect(userWords(0)).not.toBe("");
    const closed = chat.nextDisconnect();
    await client.sendAudio(speech, { pace: "realtime" });
    await client.sendAudio(silence(ENDPOINT_MS + 1000), { pace: "realtime" });
    await closed;
    await waitUntil(() => h!.eventsOf(sessionId, "transcript.done").length === 1);
    const heard = (h.eventsOf(sessionId, "transcript.done")[0]!.payload as { text: string }).text;
    expect(h.eventsOf(sessionId, "turn.started")).toHaveLength(1);
    // The last request is for all the words (prepared at the second pause, or asked at the end of turn).
    expect(chat.requests.length).toBeGreaterThanOrEqual(2);
    expect(userWords(chat.requests.length - 1)).toBe(heard);
    // All the words: both utterances (the early consult was for the first, or, on a slow machine whose
    // recognizer gave no words at the first pause, for words the final decode changed).
    expect(heard.toLowerCase().match(/forward/g)).toHaveLength(2);
    chat.release();
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    expect(h.eventsOf(sessionId, "output.text.done")).toHaveLength(1);
    await client.stop();
    // The early consult is in the usage record as discarded (its tokens were spent).
    expect((await preparedReport(h, sessionId)).discarded).toBeGreaterThanOrEqual(1);
  });

  it("with prepareAnswer off the agent is asked only once the turn has ended", async () => {
    h = await start({ endOfTurn: { prepareAnswer: false } });
    const { client, askedByTurnEnd } = await oneTurn(h);
    expect(askedByTurnEnd).toBe(0);
    expect(chat.requests).toHaveLength(1);
    await client.stop();
  });
});
