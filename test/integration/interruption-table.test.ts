/**
 * One interruption table, three surfaces (issue 36): every session has a
 * media leg, and the leg alone decides and carries out who speaks, so the
 * same cases give the same events on a phone call (the Twilio stream
 * stand-in, the OpenAI Realtime stand-in), a meeting assistant (its
 * stt-tts leg, espeak-ng and the local agent, the page's audio sink, the
 * echo gate's trigger) and a Talk API session (the whole gateway, a real
 * WebSocket client, the Realtime stand-in). Each surface brings an answer
 * to playing and makes caller speech over it through its own trigger; the
 * table says what the session's events must then be, checked alike.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { AgentProvider } from "../../src/core/provider-types.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { createTalkRuntime } from "../../src/core/session-runtime.js";
import type { TalkRuntime } from "../../src/core/session-types.js";
import { NOOP_LOGGER } from "../../src/core/logger.js";
import { MeetingAssistant } from "../../src/meetings/agent/meeting-assistant.js";
import { Utterance } from "../../src/meetings/bot/utterance-segmenter.js";
import { EspeakTtsProvider } from "../../src/providers/espeak-ng/espeak-tts.js";
import { createLocalAgent } from "../../src/providers/local-agent/local-agent.js";
import { sessionControllerFactory } from "../../src/voice/pipelines/controller-factory.js";
import { OpenAiChatAgent } from "../../src/providers/openai-compatible/openai-chat-agent.js";
import { FakeChatCompletionsServer, longAnswer } from "../support/fake-chat-completions-server.js";
import { FakeOpenAiRealtimeServer, toneAudio } from "../support/fake-openai-realtime-server.js";
import { OPENAI_KEY, recordEvents, startGateway, type GatewayHarness } from "../support/gateway-harness.js";
import { sessionOfCall, startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";

/** A surface with an answer playing, and caller speech over it through the surface's own trigger. */
interface Surface {
  /** The session's events so far. */
  events(): TalkEvent[];
  /** Caller speech over the answer that plays. */
  speak(): Promise<void>;
  /** Lets a held answer go on to its end (the stand-in's held deltas) and the listener play it all. */
  finish(): void | Promise<void>;
  /** Whether the listener was told to stop what it plays (the carrier's clear, the page's clear); undefined: the surface has no such message (a Talk API client stops on the terminal event). */
  cleared(): boolean | undefined;
  /**
   * The one terminal event speech over the answer must give: `turn.cancelled` while the turn's agent
   * still streams the answer (the speech ends the turn), `output.audio.cancelled` once only the answer's
   * audio is left. Undefined: either (the surface's answer is scripted whole).
   */
  bargeInTerminal?: "turn.cancelled" | "output.audio.cancelled";
  close(): Promise<void>;
}

interface Answer {
  itemId: string;
  turnId: string;
}

type SurfaceStart = (o: { interruptOnSpeech: boolean }) => Promise<{ surface: Surface; answer: Answer }>;

const TERMINAL = new Set(["output.audio.cancelled", "turn.cancelled"]);

/** The events that end `answer` (its output or its turn). */
function terminalsOf(events: TalkEvent[], answer: Answer): TalkEvent[] {
  return events.filter(
    (e) =>
      (e.type === "output.audio.cancelled" && e.itemId === answer.itemId) ||
      (e.type === "turn.cancelled" && e.turnId === answer.turnId) ||
      (e.type === "output.audio.done" && e.itemId === answer.itemId),
  );
}

async function until(predicate: () => boolean, what: string, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Case {
  name: string;
  interruptOnSpeech: boolean;
  /** The event types that end the answer, in order. */
  ends: "barge_in" | "completed";
}

const CASES: Case[] = [
  {
    name: "speech over an answer interrupts it: one terminal event (barge_in), nothing of it after",
    interruptOnSpeech: true,
    ends: "barge_in",
  },
  {
    name: "speech over an answer when talk.input.interruptOnSpeech is off is only noted: the answer plays to its end",
    interruptOnSpeech: false,
    ends: "completed",
  },
];

let current: Surface | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
});

// --- the phone path: a Twilio call relayed to the Realtime stand-in -------------------------------

const phone: SurfaceStart = async ({ interruptOnSpeech }) => {
  const h: TelephonyHarness = await startTelephony({
    mode: "realtime",
    talk: { input: { interruptOnSpeech } },
    realtime: { replies: [{ audio: toneAudio(3000, "g711_ulaw"), holdAfterDeltas: 10 }] },
  });
  try {
    const client = await h.dial({ playback: "manual" });
    h.realtime!.respond();
    await client.waitFor(() => client.receivedAudioMs >= 500);
    const sessionId = sessionOfCall(h, client.callSid)!;
    const started = h.eventsOf(sessionId, "output.audio.started")[0]!;
    const surface: Surface = {
      events: () => h.eventsOf(sessionId),
      speak: async () => {
        const before = h.eventsOf(sessionId, "input.audio.speech_started").length;
        h.realtime!.triggerSpeechStarted();
        await until(
          () => h.eventsOf(sessionId, "input.audio.speech_started").length > before,
          "speech_started",
        );
      },
      finish: async () => {
        h.realtime!.resume();
        await client.waitFor(() => client.receivedAudioMs >= 3000);
        // The caller's phone plays it all: the carrier echoes every mark.
        client.play(60_000);
      },
      cleared: () => client.clears > 0,
      close: () => h.close(),
    };
    return { surface, answer: { itemId: started.itemId!, turnId: started.turnId! } };
  } catch (err) {
    await h.close();
    throw err;
  }
};

// --- the Talk API path: the whole gateway, a WebSocket client, the Realtime stand-in ---------------

const talkApi: SurfaceStart = async ({ interruptOnSpeech }) => {
  const realtime = new FakeOpenAiRealtimeServer({
    apiKey: OPENAI_KEY,
    replies: [{ audio: toneAudio(3000, "pcm16"), transcript: "A long answer.", holdAfterDeltas: 10 }],
  });
  const realtimeUrl = await realtime.start();
  let h: GatewayHarness | undefined;
  try {
    h = await startGateway({ realtimeUrl, input: { interruptOnSpeech } });
    const client = await h.connect({ as: "writer" });
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", {
      mode: "realtime",
      transport: "gateway-relay",
    });
    await realtime.waitFor((e) => e.type === "session.update");
    realtime.respond();
    const started = await rec.next((e) => e.type === "output.audio.started");
    const gateway = h;
    const surface: Surface = {
      events: () => rec.events.filter((e) => e.sessionId === sessionId),
      speak: async () => {
        const before = rec.events.filter((e) => e.type === "input.audio.speech_started").length;
        realtime.triggerSpeechStarted();
        await until(
          () => rec.events.filter((e) => e.type === "input.audio.speech_started").length > before,
          "speech_started",
        );
      },
      finish: () => realtime.resume(),
      cleared: () => undefined,
      close: async () => {
        await gateway.close();
        await realtime.close();
      },
    };
    return { surface, answer: { itemId: started.itemId!, turnId: started.turnId! } };
  } catch (err) {
    await h?.close();
    await realtime.close();
    throw err;
  }
};

// --- the meeting path: the assistant's stt-tts leg, its page sink and its echo gate ----------------

const meeting: SurfaceStart = (o) => meetingWith(o, createLocalAgent({ maxEchoLength: 400 }));

/**
 * The meeting assistant whose agent (chat completions over real HTTP) still streams its long answer when
 * the participant speaks over it: the speech ends the turn, one turn.cancelled, the agent's stream closed.
 */
const meetingStreaming: SurfaceStart = async (o) => {
  const chat = new FakeChatCompletionsServer({ apiKey: "k", answer: longAnswer(3000), tokenDelayMs: 40 });
  const baseUrl = await chat.start();
  try {
    const agent = new OpenAiChatAgent({ baseUrl, model: "fake-model", apiKey: "k" });
    const { surface, answer } = await meetingWith(o, agent);
    const streaming: Surface = {
      ...surface,
      bargeInTerminal: "turn.cancelled",
      close: async () => {
        await surface.close();
        await chat.close();
      },
    };
    // The answer plays while its agent has sent only part of it.
    expect(chat.completedStreams).toBe(0);
    return { surface: streaming, answer };
  } catch (err) {
    await chat.close();
    throw err;
  }
};

async function meetingWith(
  { interruptOnSpeech }: { interruptOnSpeech: boolean },
  agent: AgentProvider,
): Promise<{ surface: Surface; answer: Answer }> {
  const runtime: TalkRuntime = createTalkRuntime();
  const tts = new EspeakTtsProvider();
  const createController = sessionControllerFactory({
    providers: { stt: () => undefined, tts: () => tts, agent: () => agent, realtime: () => undefined },
    options: { persona: "The meeting's test assistant.", interruptOnSpeech },
    logger: NOOP_LOGGER,
  });
  const frames: (Uint8Array | string)[] = [];
  const assistant = new MeetingAssistant({
    botId: "bot-table",
    platform: "test",
    runtime,
    createController,
    triggers: () => ["assistant"],
    send: (data) => frames.push(data),
    options: { wakeWindowMs: 10_000, bargeInMs: 300, echoTailMs: 0 },
    logger: NOOP_LOGGER,
  });
  const events: TalkEvent[] = [];
  assistant.session.subscribe((e) => events.push(e));
  try {
    await assistant.ready;
    assistant.onCaption(
      "Alice",
      "assistant " + "please read the whole of this rather long question back to me slowly ".repeat(3),
    );
    await until(() => events.some((e) => e.type === "output.audio.started"), "the answer's audio");
    await until(() => assistant.speaking, "the meeting hearing the answer");
    const started = events.find((e) => e.type === "output.audio.started")!;
    const surface: Surface = {
      events: () => events,
      speak: async () => {
        // A participant speaks over the answer for longer than the echo gate's bargeInMs: real speech.
        const utterance = new Utterance("participant-1");
        const admitted = assistant.admit(utterance);
        for (let i = 0; i < 40; i++) utterance.push(new Int16Array(160));
        await admitted;
        utterance.end();
      },
      finish: () => {},
      cleared: () => frames.some((f) => typeof f === "string" && f.includes('"clear"')),
      close: async () => {
        await assistant.close("completed");
        await runtime.close();
      },
    };
    return { surface, answer: { itemId: started.itemId!, turnId: started.turnId! } };
  } catch (err) {
    await runtime.close();
    throw err;
  }
}

const SURFACES: [string, SurfaceStart][] = [
  ["phone call", phone],
  ["meeting assistant", meeting],
  ["Talk API session", talkApi],
];

describe.each(SURFACES)("interruption table: %s", (_name, start) => {
  it.each(CASES)("$name", (c) => runCase(start, c), 180_000);
});

describe("interruption table: meeting assistant, its agent still streaming the answer", () => {
  it.each(CASES.filter((c) => c.ends === "barge_in"))("$name", (c) => runCase(meetingStreaming, c), 180_000);
});

async function runCase(start: SurfaceStart, c: Case): Promise<void> {
  const { surface, answer } = await start({ interruptOnSpeech: c.interruptOnSpeech });
  current = surface;
  await surface.speak();
  if (c.ends === "barge_in") {
    await until(() => terminalsOf(surface.events(), answer).length > 0, "the answer's terminal event");
    // Give anything still in flight the time to (wrongly) show up.
    await new Promise((r) => setTimeout(r, 300));
    const events = surface.events();
    const terminals = terminalsOf(events, answer);
    expect(terminals).toHaveLength(1);
    expect(TERMINAL.has(terminals[0]!.type)).toBe(true);
    if (surface.bargeInTerminal) expect(terminals[0]!.type).toBe(surface.bargeInTerminal);
    expect(terminals[0]!.payload).toMatchObject({ reason: "barge_in" });
    const at = events.indexOf(terminals[0]!);
    expect(
      events.slice(at + 1).filter((e) => e.type === "output.audio.delta" && e.itemId === answer.itemId),
    ).toEqual([]);
    expect(surface.cleared() ?? true).toBe(true);
  } else {
    await surface.finish();
    await until(() => terminalsOf(surface.events(), answer).length > 0, "the answer's end", 90_000);
    const terminals = terminalsOf(surface.events(), answer);
    expect(terminals.map((e) => e.type)).toEqual(["output.audio.done"]);
    expect(surface.cleared() ?? false).toBe(false);
  }
}
