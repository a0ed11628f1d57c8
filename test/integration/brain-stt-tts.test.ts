import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { SegmentAudioPayload } from "../../src/voice/pipelines/tts-queue.js";
import { createSessionController } from "../../src/voice/pipelines/session-controller.js";
import type {
  PipelineOptions,
  PipelineProviderResolver,
} from "../../src/voice/pipelines/pipeline-options.js";
import { EventLog, RecordingSink } from "../../src/voice/pipelines/testing/pipeline-harness.js";
import type { TtsProvider, TtsRequest } from "../../src/core/provider-types.js";
import { createTalkRuntime } from "../../src/core/session-runtime.js";
import type { TalkRuntime } from "../../src/core/session-types.js";
import { chunkText } from "../../src/voice/speech/smart-chunker.js";
import { createEspeakTts } from "../../src/providers/espeak-ng/espeak-tts.js";
import { OpenAiChatAgent } from "../../src/providers/openai-compatible/openai-chat-agent.js";
import { createPocketsphinxStt } from "../../src/providers/pocketsphinx/pocketsphinx-stt.js";
import { FakeChatCompletionsServer, longAnswer } from "../support/fake-chat-completions-server.js";

/**
 * The brain end to end in an stt-tts session: real speech in (pocketsphinx),
 * a real OpenAI-compatible streaming agent client against a local server that
 * streams a long answer slowly and honours disconnects, real espeak-ng out.
 */
const GO_FORWARD = readFileSync("/usr/share/pocketsphinx/test/data/goforward.raw");
const espeak = createEspeakTts();
const stt = createPocketsphinxStt();

/** The real espeak-ng, recording what it was asked to say (text and voice) in request order. */
function recordingTts(): TtsProvider & { requests: TtsRequest[] } {
  const requests: TtsRequest[] = [];
  return Object.assign(Object.create(espeak) as TtsProvider, {
    requests,
    synthesize(request: TtsRequest) {
      requests.push(request);
      return espeak.synthesize(request);
    },
  });
}

let runtime: TalkRuntime | undefined;
let server: FakeChatCompletionsServer | undefined;
afterEach(async () => {
  await runtime?.close();
  await server?.close();
  runtime = undefined;
  server = undefined;
});

async function setup(
  serverOptions: ConstructorParameters<typeof FakeChatCompletionsServer>[0],
  brain: PipelineOptions["brain"] = {},
) {
  server = new FakeChatCompletionsServer({ apiKey: "k", ...serverOptions });
  const baseUrl = await server.start();
  const agent = new OpenAiChatAgent({ baseUrl, model: "fake-model", apiKey: "k" });
  const tts = recordingTts();
  const providers: PipelineProviderResolver = {
    stt: () => stt,
    tts: () => tts,
    agent: () => agent,
    realtime: () => undefined,
  };
  runtime = createTalkRuntime();
  const session = runtime.createSession({
    mode: "stt-tts",
    transport: "managed-room",
    brain: "agent-consult",
    owner: "gateway",
    metadata: { caller: "+15550001111" },
  });
  const log = new EventLog(session);
  const sink = new RecordingSink();
  const controller = createSessionController({
    session,
    providers,
    sink,
    options: { persona: "Trusted persona.", brain },
  });
  const ask = async (): Promise<string> => {
    const turn = controller.startTurn();
    for (let i = 0; i < GO_FORWARD.byteLength; i += 640)
      controller.appendAudio(GO_FORWARD.subarray(i, Math.min(i + 640, GO_FORWARD.byteLength)));
    await controller.endTurn(turn.id);
    return turn.id;
  };
  return { server, session, log, sink, controller, tts, ask };
}

const segments = (log: EventLog) =>
  log.ofType("output.audio.delta").map((e) => e.payload as SegmentAudioPayload);

describe("brain: chunked speech in an stt-tts session", () => {
  it("first TTS audio starts after the first chunk, while the agent has sent only a small fraction of the answer", async () => {
    const { server, log, sink, controller, ask } = await setup({
      answer: longAnswer(2000),
      tokenDelayMs: 10,
    });
    const turnId = await ask();
    await sink.firstWrite;
    const sentAtFirstAudio = server.tokensSent;
    const total = server.tokens.length;
    expect(sentAtFirstAudio).toBeLessThan(total * 0.2);
    // The audio is the first chunk, not something else.
    const first = segments(log)[0]!;
    expect(first.segment).toBe(0);
    expect(first.segmentText).toBe(chunkText(longAnswer(2000), { speakable: true })[0]);
    controller.cancelTurn(turnId, "client_request");
  });

  it("speaks every chunk in order, as one output item, and the request carries trusted context only", async () => {
    const answer = longAnswer(2000);
    const { server, log, sink, tts, ask } = await setup({ answer, tokenDelayMs: 1 });
    await ask();
    const done = await log.next("output.audio.done");
    const expected = chunkText(answer, { speakable: true });
    expect(expected.length).toBeGreaterThan(5);
    const spoken = segments(log);
    // Segments arrive in order, each fully before the next begins.
    const order = spoken.map((p) => p.segment);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(spoken.filter((p) => p.segmentText !== undefined).map((p) => p.segmentText)).toEqual(expected);
    expect(tts.requests.map((r) => r.text)).toEqual(expected);
    expect(new Set(sink.writes.map((w) => w.itemId)).size).toBe(1);
    expect((done.payload as SegmentAudioPayload).bytes).toBe(sink.bytes);
    expect(log.ofType("output.text.done")[0]!.payload).toEqual({ text: answer });
    // Gateway-built context: persona, caller metadata as data, then the words heard.
    const body = server.requests[0]!.body as { messages: { role: string; content: string }[] };
    expect(body.messages[0]).toEqual({ role: "system", content: "Trusted persona." });
    expect(body.messages[1]!.content).toContain('{"caller":"+15550001111"}');
    expect(body.messages.at(-1)).toEqual({ role: "user", content: "go forward ten meters" });
  });

  it("cancel mid-answer closes the agent's HTTP stream and no queued chunk is spoken afterwards", async () => {
    const { server, log, sink, controller, tts, ask } = await setup({
      answer: longAnswer(2000),
      tokenDelayMs: 10,
    });
    const turnId = await ask();
    await sink.firstWrite;
    const disconnected = server.nextDisconnect();
    expect(controller.cancelTurn(turnId, "client_request")).toBe(true);
    const writesAtCancel = sink.writes.length;
    const requestsAtCancel = tts.requests.length;
    await disconnected;
    expect(server.tokensSentAtDisconnect).toBeLessThan(server.tokens.length);
    expect(server.completedStreams).toBe(0);
    await runtime!.close(); // waits for the aborted work to settle
    expect(sink.writes.length).toBe(writesAtCancel);
    expect(tts.requests.length).toBe(requestsAtCancel);
    const cancelled = log.ofType("turn.cancelled");
    expect(cancelled).toHaveLength(1);
    expect(
      log.events.filter((e) => e.type === "output.audio.delta" && e.seq > cancelled[0]!.seq),
    ).toHaveLength(0);
    expect(log.ofType("output.audio.done")).toHaveLength(0);
  });

  it("a voice directive sets this reply's voice, is never spoken, and `once` leaves the next reply alone", async () => {
    const body = "Certainly. Here is the weather for today, which looks sunny and warm.";
    const { server, log, tts, ask } = await setup({
      answer: `{"voice":"en-gb","once":true,"speed":1.2,"mood":"x"} ${body}`,
    });
    await ask();
    await log.next("output.audio.done");
    expect(tts.requests.length).toBeGreaterThan(0);
    for (const r of tts.requests) {
      expect(r.text).not.toContain("{");
      expect(r.text).not.toContain("voice");
      expect(r).toMatchObject({ voice: "en-gb", speed: 1.2 });
    }
    expect(log.ofType("output.text.done")[0]!.payload).toEqual({ text: body });
    const firstReply = tts.requests.length;
    server.configure({ answer: body });
    await ask();
    await waitForCount(log, "output.audio.done", 2);
    for (const r of tts.requests.slice(firstReply)) {
      expect(r.voice).toBeUndefined();
      expect(r.speed).toBe(1);
    }
  });

  it("a directive without once changes the session's voice for later replies", async () => {
    const { server, log, tts, ask } = await setup({
      answer: `{"voice":"en-gb"}Noted, I will speak this way from now on.`,
    });
    await ask();
    await log.next("output.audio.done");
    const firstReply = tts.requests.length;
    server.configure({ answer: "And this is the next answer, in the same voice." });
    await ask();
    await waitForCount(log, "output.audio.done", 2);
    expect(tts.requests.slice(firstReply).map((r) => r.voice)).toEqual(["en-gb"]);
  });

  it("a slow agent gets the progress cue spoken before its answer, which then follows", async () => {
    const answer = "Here is what I found. The train leaves at nine.";
    const { server, log, tts, ask } = await setup(
      { answer, holdFirstToken: true },
      { progressCueMs: 50, progressCueText: "One moment please." },
    );
    const requested = server.nextRequest();
    await ask();
    await requested;
    const firstAudio = await log.next("output.audio.delta");
    expect(server.tokensSent).toBe(0);
    expect((firstAudio.payload as SegmentAudioPayload).segmentText).toBe("One moment please.");
    server.release();
    await log.next("output.audio.done");
    expect(tts.requests.map((r) => r.text)).toEqual([
      "One moment please.",
      ...chunkText(answer, { speakable: true }),
    ]);
  });

  it("a consult that times out is aborted, apologised for aloud and reported as tool.error, never silence", async () => {
    const { server, log, tts, ask } = await setup(
      { holdFirstToken: true },
      { progressCueMs: 0, consultTimeoutMs: 200, apologyText: "Sorry, I could not get that." },
    );
    const disconnected = server.nextDisconnect();
    const turnId = await ask();
    await log.next("output.audio.done");
    await disconnected;
    expect(tts.requests.map((r) => r.text)).toEqual(["Sorry, I could not get that."]);
    expect(log.ofType("tool.error")[0]).toMatchObject({
      turnId,
      payload: { name: "agent_consult", code: "timeout" },
    });
    expect(log.ofType("turn.cancelled")).toHaveLength(0);
    expect(log.ofType("session.error")).toHaveLength(0);
  });
});

async function waitForCount(
  log: EventLog,
  type: Parameters<EventLog["ofType"]>[0],
  count: number,
): Promise<void> {
  while (log.ofType(type).length < count) await new Promise((r) => setTimeout(r, 20));
}
