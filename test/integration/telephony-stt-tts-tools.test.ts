/**
 * Tools in stt-tts calls: the whole server with a Twilio stand-in call (its
 * stream and REST API), the local STT and TTS, and the agent as a local
 * OpenAI-compatible chat completions server that streams `tool_calls`. The
 * agent hangs up and transfers through function calls, a refused transfer
 * comes back to it as a tool result and the caller hears an answer, the
 * number of rounds is bounded, and caller speech cancels a running tool and
 * a running round. Keypad digits start the turns (they reach the agent as
 * text), which keeps the tests fast and exact.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { FakeChatCompletionsServer } from "../support/fake-chat-completions-server.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";
import {
  logEventsIfFailed,
  sessionOfCall,
  startTelephony,
  type TelephonyHarness,
} from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
const chat = new FakeChatCompletionsServer({ apiKey: undefined, answer: "Okay.", tokenChars: 6 });
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
  chat.configure({ script: [] });
});

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

function start(agent: Record<string, unknown> = {}, telephony: Record<string, unknown> = {}) {
  return startTelephony({
    mode: "stt-tts",
    telephony: { greeting: "", ...telephony },
    config: {
      agent: {
        endpoint: { baseUrl: chatUrl, model: "fake-model" },
        transferTargets: { "front desk": "+15550009999" },
        progressCueMs: 0,
        ...agent,
      },
    },
  });
}

type ChatBody = { tools?: Array<{ function: { name: string } }>; messages: Array<Record<string, unknown>> };
const bodyOf = (i: number) => chat.requests[i]!.body as ChatBody;

describe("telephony: tools in stt-tts calls", () => {
  it("the agent says goodbye and hangs up through end_call, after the farewell was played", async () => {
    chat.configure({
      script: [{ text: "Thanks for calling, goodbye!", toolCalls: [{ name: "end_call", arguments: {} }] }],
    });
    h = await start();
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    client.sendDtmf("9");
    let playedAtHangUp = -1;
    const hangUp = await h.rest.waitFor((r) => {
      const match = r.path.endsWith(`/Calls/${client.callSid}.json`);
      if (match) playedAtHangUp = h!.eventsOf(sessionId, "output.audio.done").length;
      return match;
    });
    expect(hangUp.params.get("Status")).toBe("completed");
    // The canonical tools as functions, without agent_consult (the agent is the brain here).
    const offered = bodyOf(0).tools!.map((t) => t.function.name);
    expect(offered).toEqual(
      expect.arrayContaining(["end_call", "transfer_call", "send_dtmf", "collect_digits", "get_time"]),
    );
    expect(offered).not.toContain("agent_consult");
    // The farewell was spoken and played before the carrier was asked to hang up.
    const farewell = h
      .eventsOf(sessionId, "output.text.done")
      .find((e) => (e.payload as { text: string }).text.includes("goodbye"))!;
    const played = h.eventsOf(sessionId, "output.audio.done").find((e) => e.itemId === farewell.itemId)!;
    expect(played).toBeDefined();
    expect(playedAtHangUp).toBe(1);
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "hung_up" });
    expect(h.eventsOf(sessionId, "tool.call")[0]).toMatchObject({
      provider: "openai-compatible-agent",
      payload: { name: "end_call" },
    });
    expect(h.eventsOf(sessionId, "tool.result")).toHaveLength(1);
  });

  it("the agent transfers the call through transfer_call; the caller hears the announcement first", async () => {
    chat.configure({
      script: [
        {
          text: "Let me transfer you.",
          toolCalls: [{ name: "transfer_call", arguments: { target: "front desk", briefing: "Order 42." } }],
        },
      ],
    });
    h = await start({}, { transfer: { announcement: "Please hold." } });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    client.sendDtmf("0");
    const update = await h.rest.waitFor((r) => r.path.endsWith(`/Calls/${client.callSid}.json`));
    expect(update.params.get("Twiml")).toContain(">+15550009999</Number>");
    // The announcement is part of the tool's turn, not a new turn that would have cancelled the transfer.
    const said = h.eventsOf(sessionId, "output.text.done").map((e) => (e.payload as { text: string }).text);
    expect(said).toEqual(["Let me transfer you.", "Please hold."]);
    expect(h.eventsOf(sessionId, "turn.cancelled")).toHaveLength(0);
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "transferred" });
    expect(h.eventsOf(sessionId, "tool.result")[0]!.payload).toMatchObject({ name: "transfer_call" });
  });

  it("a refused transfer reaches the agent as a tool result and the caller hears speech, never silence", async () => {
    const transfer = { name: "transfer_call", arguments: { target: "front desk" } };
    chat.configure({
      script: [
        { toolCalls: [{ id: "call_refused", ...transfer }] },
        { text: "Sorry, the front desk cannot take your call right now." },
        // The second time the agent says nothing after the failure: the configured line is spoken.
        { toolCalls: [transfer] },
        { text: "" },
      ],
    });
    h = await start({}, { transfer: { announcement: "" } });
    h.rest.refuseUpdates = true;
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    client.sendDtmf("0");
    // A round of calls only says nothing (no audio); the round after the error speaks.
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    expect(h.eventsOf(sessionId, "tool.error")[0]!.payload).toMatchObject({ name: "transfer_call" });
    // The second request carries the call and its error, as the chat completions wire has them.
    const messages = bodyOf(1).messages.slice(-2);
    expect(messages[0]).toMatchObject({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "call_refused", type: "function", function: { name: "transfer_call" } }],
    });
    expect(messages[1]).toMatchObject({ role: "tool", tool_call_id: "call_refused" });
    expect(JSON.parse(String(messages[1]!["content"]))).toMatchObject({ error: expect.any(String) });
    const said = () =>
      h!.eventsOf(sessionId, "output.text.done").map((e) => (e.payload as { text: string }).text);
    expect(said()).toContain("Sorry, the front desk cannot take your call right now.");
    client.sendDtmf("0");
    await waitUntil(() => said().includes("Sorry, that did not work."));
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 2);
    expect(client.receivedAudioMs).toBeGreaterThan(1000);
    expect(h.eventsOf(sessionId, "session.closed")).toHaveLength(0);
  });

  it("rounds are bounded: an agent that keeps calling tools fails its turn with a clear error", async () => {
    const again = { toolCalls: [{ name: "get_time", arguments: {} }] };
    chat.configure({ script: [again, again, again] });
    h = await start({ maxToolRounds: 1 });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    client.sendDtmf("5");
    await waitUntil(() => h!.eventsOf(sessionId, "session.error").length >= 1);
    expect(h.eventsOf(sessionId, "session.error")[0]!.payload).toMatchObject({
      code: "provider_error",
      details: { reason: "tool_rounds_exceeded", maxToolRounds: 1 },
    });
    // One round of calls ran; the second round's calls did not.
    expect(h.eventsOf(sessionId, "tool.call")).toHaveLength(1);
    expect(chat.requests).toHaveLength(2);
  });

  it("caller speech cancels a running tool and a running agent round", async () => {
    chat.configure({
      script: [
        { toolCalls: [{ name: "collect_digits", arguments: { count: 4, timeoutMs: 60000 } }] },
        { hold: true },
      ],
    });
    h = await start({ collectDigits: { cancelOnSpeech: false } });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    client.sendDtmf("1");
    await waitUntil(() => h!.eventsOf(sessionId, "tool.call").length === 1);
    await client.sendAudio(speech, { pace: "fast" });
    await waitUntil(() => h!.eventsOf(sessionId, "tool.cancelled").length === 1);
    expect(h.eventsOf(sessionId, "tool.cancelled")[0]!.payload).toMatchObject({
      name: "collect_digits",
      started: true,
    });
    await client.sendAudio(silence(1200), { pace: "fast" });
    // The speech's own turn asks the agent (held): speech again cancels that round's HTTP stream.
    await waitUntil(() => chat.requests.length === 2);
    const gone = chat.nextDisconnect();
    await client.sendAudio(speech, { pace: "fast" });
    await gone;
    // The cancelled tool's result never went to the agent.
    expect(JSON.stringify(bodyOf(1).messages)).not.toContain('"role":"tool"');
    chat.release();
  });
});
