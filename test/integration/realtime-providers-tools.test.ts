/**
 * Tool round trips through the second and third realtime providers, the whole
 * server against each vendor's stand-in: a function call the model makes on a
 * phone call and in a Talk API relay session runs through the Gateway's tool
 * registry and policy, and its result goes back in the vendor's own shape
 * (xAI: a `function_call_output` conversation item and a new response;
 * Gemini: `toolResponse.functionResponses[]`, after which the model answers);
 * a call to a tool the policy denies is refused and the refusal reaches the
 * model the same way, with no side effect. The tools offered are the
 * policy's: call tools only to a phone call, never a denied one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TalkClient } from "../../src/client/index.js";
import type { TalkEvent } from "../../src/client/index.js";
import { FakeChatCompletionsServer } from "../support/fake-chat-completions-server.js";
import { speechAudio } from "../support/fake-openai-realtime-server.js";
import { FakeGeminiLiveServer, GEMINI_TEST_KEY, tone24k } from "../support/fake-gemini-live-server.js";
import { FakeXaiRealtimeServer, XAI_TEST_KEY } from "../support/fake-xai-realtime-server.js";
import {
  sessionOfCall,
  startTelephony,
  WRITE_TOKEN,
  type TelephonyHarness,
} from "../support/telephony-harness.js";

type Json = Record<string, unknown>;

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

/** All three realtime providers configured, `vendor` the default; send_dtmf denied by policy. */
async function start(
  vendor: "xai" | "gemini",
  xai: FakeXaiRealtimeServer,
  gemini: FakeGeminiLiveServer,
  agent: Json = {},
) {
  const xaiUrl = (await xai.start()).replace(/^ws/, "http").replace(/\/realtime$/, "");
  const geminiUrl = await gemini.start();
  return startTelephony({
    mode: "realtime",
    talk: {
      realtime: {
        provider: vendor,
        providers: {
          openai: { apiKey: "sk-not-used-here", baseUrl: "http://127.0.0.1:9/v1" },
          xai: { apiKey: XAI_TEST_KEY, baseUrl: xaiUrl },
          gemini: { apiKey: GEMINI_TEST_KEY, baseUrl: geminiUrl },
        },
      },
    },
    config: { agent: { tools: { deny: ["send_dtmf"] }, ...agent } },
  });
}

/** A Talk API relay session on `provider`, its events recorded. */
async function talkSession(h: TelephonyHarness, provider: string) {
  const client = await TalkClient.connect(`ws://127.0.0.1:${h.port}/talk`, { token: WRITE_TOKEN });
  const events: TalkEvent[] = [];
  client.on("talk.event", (e) => events.push(e));
  const { sessionId } = await client.request("talk.session.create", {
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    provider,
  });
  return { client, sessionId, events };
}

const namesOfXaiTools = (session: Json): string[] =>
  ((session.tools ?? []) as Json[]).map((t) => String(t.name)).sort();
const namesOfGeminiTools = (setup: Json): string[] =>
  ((setup.tools ?? []) as Json[])
    .flatMap((t) => (t.functionDeclarations ?? []) as Json[])
    .map((d) => String(d.name))
    .sort();

const isOutputOf =
  (callId: string) =>
  (e: { type: string; event: Json }): boolean =>
    e.type === "conversation.item.create" && (e.event.item as Json).call_id === callId;
const responseOf =
  (id: string) =>
  (m: Json): boolean =>
    ((m.toolResponse as Json | undefined)?.functionResponses as Json[] | undefined)?.some(
      (r) => r.id === id,
    ) === true;

describe("xAI Voice Agent: tool calls through the Gateway's policy", () => {
  let h: TelephonyHarness;
  const xai = new FakeXaiRealtimeServer();
  const gemini = new FakeGeminiLiveServer();

  beforeAll(async () => {
    h = await start("xai", xai, gemini);
  });
  afterAll(async () => {
    await h?.close();
    await xai.close();
    await gemini.close();
  });

  it("a phone call: get_time runs and returns as function_call_output; a denied send_dtmf is refused the same way", async () => {
    const updates = xai.received.filter((e) => e.type === "session.update").length;
    const client = await h.dial({ waitForProvider: false });
    await xai.waitFor(() => xai.received.filter((e) => e.type === "session.update").length > updates);
    // Offered: the policy's tools, the call tools included (a call is behind the session), send_dtmf not.
    expect(namesOfXaiTools(xai.session)).toEqual([
      "agent_consult",
      "collect_digits",
      "end_call",
      "get_time",
      "transfer_call",
    ]);
    const sessionId = sessionOfCall(h, client.callSid)!;
    const heardBefore = client.receivedAudioMs;

    const callId = xai.callTool({ name: "get_time", arguments: {} });
    const output = await xai.waitFor(isOutputOf(callId));
    expect(output.event.item).toMatchObject({ type: "function_call_output", call_id: callId });
    const result = JSON.parse(String((output.event.item as Json).output)) as Json;
    expect(Date.parse(String(result.iso))).not.toBeNaN();
    // The model is asked to answer with the result, and its answer reaches the caller.
    const at = xai.received.indexOf(output);
    await xai.waitFor((e) => e.type === "response.create" && xai.received.indexOf(e) > at);
    await client.waitFor(() => client.receivedAudioMs >= heardBefore + 500);
    await waitUntil(() => h.eventsOf(sessionId, "tool.result").length === 1);
    expect(h.eventsOf(sessionId, "tool.call")[0]).toMatchObject({
      callId,
      payload: { name: "get_time", argumentsJson: "{}" },
    });

    const denied = xai.callTool({ name: "send_dtmf", arguments: { digits: "1" } });
    const refusal = await xai.waitFor(isOutputOf(denied));
    expect(JSON.parse(String((refusal.event.item as Json).output))).toMatchObject({ error: "tool_denied" });
    await waitUntil(() => h.eventsOf(sessionId, "tool.error").length === 1);
    expect(h.eventsOf(sessionId, "tool.error")[0]).toMatchObject({
      callId: denied,
      payload: { name: "send_dtmf", code: "tool_denied" },
    });
    // No digits were played: the carrier's REST API was never asked.
    expect(h.rest.requests).toHaveLength(0);
    await client.stop();
  });

  it("a Talk API relay session: the tool events reach the client and the output the provider", async () => {
    const updates = xai.received.filter((e) => e.type === "session.update").length;
    const { client, sessionId, events } = await talkSession(h, "xai");
    try {
      await xai.waitFor(() => xai.received.filter((e) => e.type === "session.update").length > updates);
      // No call behind a Talk API session: no call tools.
      expect(namesOfXaiTools(xai.session)).toEqual(["agent_consult", "get_time"]);
      const callId = xai.callTool({ name: "get_time", arguments: {} });
      const output = await xai.waitFor(isOutputOf(callId));
      await waitUntil(() => events.some((e) => e.type === "tool.result" && e.callId === callId));
      const result = events.find((e) => e.type === "tool.result" && e.callId === callId)!;
      expect(result).toMatchObject({ sessionId, payload: { name: "get_time" } });
      expect((result.payload as { output: string }).output).toBe((output.event.item as Json).output);
      expect(typeof result.parentId).toBe("string");

      const denied = xai.callTool({ name: "end_call", arguments: {} });
      const refusal = await xai.waitFor(isOutputOf(denied));
      // end_call is not this session's to run (no call behind it): refused, never run.
      expect(JSON.parse(String((refusal.event.item as Json).output))).toMatchObject({
        error: "capability_unsupported",
      });
      await waitUntil(() => events.some((e) => e.type === "tool.error" && e.callId === denied));
    } finally {
      await client.close();
    }
  });
});

describe("Gemini Live: tool calls through the Gateway's policy", () => {
  let h: TelephonyHarness;
  const xai = new FakeXaiRealtimeServer();
  const answer = { audio: new Uint8Array(speechAudio("It is noon.", "pcm16")), transcript: "It is noon." };
  const gemini = new FakeGeminiLiveServer({ replies: [answer, answer, answer, answer] });
  // The agent behind agent_consult: holds its answer until released (a consult still running).
  const chat = new FakeChatCompletionsServer({ apiKey: undefined, answer: "Noon.", holdFirstToken: true });

  beforeAll(async () => {
    const agent = { endpoint: { baseUrl: await chat.start(), model: "fake-model" }, progressCueMs: 0 };
    h = await start("gemini", xai, gemini, agent);
  });
  afterAll(async () => {
    await h?.close();
    await xai.close();
    await gemini.close();
    await chat.close();
  });

  it("a phone call: get_time runs and returns as toolResponse; a denied send_dtmf is refused the same way", async () => {
    const connections = gemini.connections;
    const client = await h.dial({ waitForProvider: false });
    await waitUntil(() => gemini.connections > connections && gemini.setup !== undefined);
    expect(namesOfGeminiTools(gemini.setup!)).toEqual([
      "agent_consult",
      "collect_digits",
      "end_call",
      "get_time",
      "transfer_call",
    ]);
    const sessionId = sessionOfCall(h, client.callSid)!;

    const id = gemini.callTool("get_time", {});
    const message = await gemini.waitFor(responseOf(id));
    const [response] = (message.toolResponse as { functionResponses: Json[] }).functionResponses;
    // The output is a JSON object, so it is the response itself (the Live API wants an object).
    expect(response).toMatchObject({ id, name: "get_time", response: { iso: expect.any(String) } });
    // The model answers with the result: its audio reaches the caller, decoded to u-law.
    await client.waitFor(() => client.receivedAudioMs >= answer.audio.length / 48 - 40);
    await waitUntil(() => h.eventsOf(sessionId, "tool.result").length === 1);
    expect(h.eventsOf(sessionId, "tool.call")[0]).toMatchObject({
      callId: id,
      payload: { name: "get_time" },
    });
    await waitUntil(() => !gemini.modelSpeaking);

    const denied = gemini.callTool("send_dtmf", { digits: "1" });
    const refusal = await gemini.waitFor(responseOf(denied));
    expect((refusal.toolResponse as { functionResponses: Json[] }).functionResponses[0]).toMatchObject({
      id: denied,
      name: "send_dtmf",
      response: { error: "tool_denied" },
    });
    await waitUntil(() => h.eventsOf(sessionId, "tool.error").length === 1);
    expect(h.rest.requests).toHaveLength(0);
    // The service accepted both responses: the session was never closed on us.
    expect(gemini.connections).toBe(connections + 1);
    await client.stop();
  });

  it("a barge-in sends the service nothing but audio: no cancel or truncate exists, the line is cleared", async () => {
    const connections = gemini.connections;
    const client = await h.dial({ waitForProvider: false, playback: "manual" });
    await waitUntil(() => gemini.connections > connections && gemini.setup !== undefined);
    const sessionId = sessionOfCall(h, client.callSid)!;
    const from = gemini.received.length;
    gemini.respond({ audio: tone24k(4000), chunkBytes: 4800 });
    await client.waitFor(() => client.receivedAudioMs >= 1000);
    gemini.interrupt();
    await client.waitFor(() => client.clears === 1);
    await waitUntil(() => h.eventsOf(sessionId, "output.audio.cancelled").length === 1);
    // Only caller audio went to the service after the setup: nothing it would refuse (close 1007).
    const sent = gemini.received.slice(from).filter((m) => m.realtimeInput === undefined);
    expect(sent).toEqual([]);
    expect(gemini.connections).toBe(connections + 1);
    await client.stop();
  });

  it("caller speech while a consult runs: the service cancels the call, the Gateway aborts it and sends no response", async () => {
    const connections = gemini.connections;
    const client = await h.dial({ waitForProvider: false });
    await waitUntil(() => gemini.connections > connections && gemini.setup !== undefined);
    const sessionId = sessionOfCall(h, client.callSid)!;
    const requested = chat.nextRequest();
    const id = gemini.callTool("agent_consult", { request: "When is lunch?" });
    await requested; // the consult is running, its answer held
    const disconnected = chat.nextDisconnect();
    gemini.interrupt(); // the caller speaks: the service sends toolCallCancellation for the pending call
    expect(gemini.cancelledCalls).toEqual([id]);
    await disconnected; // the consult's request to the agent was aborted
    await waitUntil(() => h.eventsOf(sessionId, "tool.cancelled").length === 1);
    expect(h.eventsOf(sessionId, "tool.cancelled")[0]).toMatchObject({ callId: id });
    chat.release();
    // A cancelled call is never answered: no toolResponse for it reached the service.
    expect(gemini.received.some(responseOf(id))).toBe(false);
    expect(h.eventsOf(sessionId, "tool.result")).toHaveLength(0);
    await client.stop();
  });

  it("a Talk API relay session: tool events reach the client, the response the model", async () => {
    const connections = gemini.connections;
    const { client, sessionId, events } = await talkSession(h, "gemini");
    try {
      await waitUntil(() => gemini.connections > connections && gemini.setup !== undefined);
      expect(namesOfGeminiTools(gemini.setup!)).toEqual(["agent_consult", "get_time"]);
      const id = gemini.callTool("get_time", {});
      await gemini.waitFor(responseOf(id));
      await waitUntil(() => events.some((e) => e.type === "tool.result" && e.callId === id));
      expect(events.find((e) => e.type === "tool.call" && e.callId === id)).toMatchObject({
        sessionId,
        payload: { name: "get_time", argumentsJson: "{}" },
      });
      // The model's answer after the result streams to the client.
      await waitUntil(() => events.some((e) => e.type === "output.audio.done"));
    } finally {
      await client.close();
    }
  });
});
