/**
 * A realtime provider that fails under a Twilio call (the local OpenAI
 * Realtime server's fault modes, written from the API's documented
 * behaviour): the socket terminated or closed 1011 mid-answer, a
 * server_error event, a response that stops sending with the socket open,
 * the connection refused at call start. Each time the caller hears the
 * apology (the pre-rendered audio, byte for byte, as media frames after the
 * fault), then the call goes on on a new provider session that knows the
 * conversation so far, or is hung up with `provider_lost` (stream closed,
 * REST hang-up) after the goodbye. Never a silent open line.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { renderLine } from "../../src/app/faults.js";
import { createEspeakTts } from "../../src/providers/index.js";
import { ULAW_8K } from "../../src/core/talk-types.js";
import { toneAudio } from "../support/fake-openai-realtime-server.js";
import { sessionOfCall, startTelephony, type TelephonyHarness } from "../support/telephony-harness.js";
import type { TwilioStreamClient } from "../support/twilio-stream-client.js";

const APOLOGY = "Sorry, one moment please.";
const GOODBYE = "Sorry, we have to end this call. Goodbye.";
const lines: { apology: Uint8Array; goodbye: Uint8Array } = {
  apology: new Uint8Array(0),
  goodbye: new Uint8Array(0),
};
beforeAll(async () => {
  lines.apology = await render(APOLOGY);
  lines.goodbye = await render(GOODBYE);
});

let h: TelephonyHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The line as the caller hears it: rendered by the local TTS, u-law 8 kHz (what the server pre-renders). */
async function render(text: string): Promise<Uint8Array> {
  return (await renderLine(createEspeakTts(), text)).audioFor(ULAW_8K).data;
}

function faultsConfig(policy: "reconnect" | "hangup", more: Record<string, unknown> = {}) {
  return { faults: { apology: APOLOGY, goodbye: GOODBYE, policy, retryBackoffMs: 50, ...more } };
}

/** Everything the caller received as media, in order. */
function heard(client: TwilioStreamClient): Uint8Array {
  return Buffer.concat(client.media);
}

/** Where `line` starts in what the caller heard (its first second, whole frames), or -1. */
function find(client: TwilioStreamClient, line: Uint8Array): number {
  return Buffer.from(heard(client)).indexOf(Buffer.from(line.subarray(0, 8000)));
}

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

/** A long answer that has started playing: 1 s sent, the rest held until the test says. */
async function midAnswer(client: TwilioStreamClient): Promise<number> {
  h!.realtime!.respond({ audio: toneAudio(6000, "g711_ulaw"), holdAfterDeltas: 10 });
  await client.waitFor(() => client.receivedAudioMs >= 1000);
  return client.media.length;
}

describe("telephony: a realtime provider fails under a call", () => {
  it("socket terminated mid-answer: the apology, then a new provider session with the conversation so far; the call goes on", async () => {
    h = await startTelephony({
      mode: "realtime",
      talk: faultsConfig("reconnect"),
      realtime: { replies: [{ audio: toneAudio(400, "g711_ulaw"), transcript: "Welcome to the clinic." }] },
    });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    h.realtime!.respond();
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);
    client.sendDtmf("4");
    await h.realtime!.waitFor((e) => e.type === "conversation.item.create");
    await waitUntil(() => h!.realtime!.activeResponseId === undefined);
    const before = await midAnswer(client);

    h.realtime!.disconnect();
    await client.waitFor(() => find(client, lines.apology) >= 0);
    expect(
      Buffer.concat(client.media.slice(before)).indexOf(Buffer.from(lines.apology.subarray(0, 8000))),
    ).toBeGreaterThanOrEqual(0);
    expect(client.clears).toBeGreaterThanOrEqual(1); // the lost answer's tail was cleared first
    await waitUntil(() => h!.realtime!.connections === 2);
    await waitUntil(() => h!.realtime!.instructions.length === 2);
    const resumed = h.realtime!.instructions[1]!;
    expect(resumed).toContain("Assistant: Welcome to the clinic.");
    expect(resumed).toContain("Caller: The caller pressed 4 on the keypad.");
    expect(h.eventsOf(sessionId, "output.audio.cancelled").at(-1)!.payload).toMatchObject({
      reason: "error",
    });
    expect(h.eventsOf(sessionId, "session.error").at(-1)!.payload).toMatchObject({
      details: { fault: "connection_lost", provider: "realtime", recovery: "recover" },
    });

    // The call goes on: the new session answers, and the caller hears it.
    const heardBefore = client.receivedAudioMs;
    h.realtime!.respond({ audio: toneAudio(500, "g711_ulaw") });
    await client.waitFor(() => client.receivedAudioMs >= heardBefore + 500);
    expect(h.eventsOf(sessionId, "session.closed")).toHaveLength(0);
    expect(client.closeCode).toBeUndefined();
  });

  it("socket closed 1011 mid-answer with policy hangup: the goodbye, then the stream closed and the call hung up (provider_lost)", async () => {
    h = await startTelephony({ mode: "realtime", talk: faultsConfig("hangup") });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    await midAnswer(client);
    h.realtime!.closeSocket(1011, "Internal server error");
    await client.waitFor(() => client.closeCode !== undefined);
    expect(find(client, lines.goodbye)).toBeGreaterThanOrEqual(0);
    expect(find(client, lines.apology)).toBe(-1);
    expect(client.closeReason).toBe("provider_lost");
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "provider_lost" });
    const hangUp = await h.rest.waitFor((r) => r.path.endsWith(`/Calls/${client.callSid}.json`));
    expect(hangUp.params.get("Status")).toBe("completed");
    expect(h.realtime!.connections).toBe(1); // no reconnect under this policy
  });

  it("a server_error event mid-answer: the apology, then a new provider session", async () => {
    h = await startTelephony({ mode: "realtime", talk: faultsConfig("reconnect") });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    await midAnswer(client);
    h.realtime!.serverError();
    await client.waitFor(() => find(client, lines.apology) >= 0);
    await waitUntil(() => h!.realtime!.connections === 2);
    expect(h.eventsOf(sessionId, "session.error").at(-1)!.payload).toMatchObject({
      upstreamCode: "server_error",
      details: { fault: "provider_error", recovery: "recover" },
    });
    expect(h.eventsOf(sessionId, "session.closed")).toHaveLength(0);
  });

  it("a provider that stops sending mid-answer (socket open): after interChunkTimeoutMs the apology, then a new session", async () => {
    h = await startTelephony({
      mode: "realtime",
      talk: faultsConfig("reconnect", { interChunkTimeoutMs: 400 }),
    });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    await midAnswer(client); // never resumed: the socket stays open, nothing more comes
    await client.waitFor(() => find(client, lines.apology) >= 0);
    await waitUntil(() => h!.realtime!.connections === 2);
    expect(h.eventsOf(sessionId, "session.error").at(-1)!.payload).toMatchObject({
      code: "timeout",
      details: { fault: "stalled", provider: "realtime" },
    });
  });

  it("the connection refused at call start, once: the apology, then the call runs on the next connection", async () => {
    h = await startTelephony({ mode: "realtime", talk: faultsConfig("reconnect") });
    h.realtime!.refuseConnections(1, 503);
    const client = await h.dial({ waitForProvider: false });
    await client.waitFor(() => find(client, lines.apology) >= 0);
    await waitUntil(() => h!.realtime!.connections === 1);
    expect(h.realtime!.refusedConnections).toBe(1);
    const sessionId = sessionOfCall(h, client.callSid)!;
    expect(h.eventsOf(sessionId, "session.error")[0]!.payload).toMatchObject({
      code: "provider_unavailable",
      details: { fault: "connect_failed" },
    });
    await h.realtime!.waitFor((e) => e.type === "session.update");
    const heardBefore = client.receivedAudioMs;
    h.realtime!.respond({ audio: toneAudio(500, "g711_ulaw") });
    await client.waitFor(() => client.receivedAudioMs >= heardBefore + 500);
    expect(client.closeCode).toBeUndefined();
  });

  it("the connection refused at call start, every time: the apology, the goodbye, then provider_lost", async () => {
    h = await startTelephony({ mode: "realtime", talk: faultsConfig("reconnect", { retries: 2 }) });
    h.realtime!.refuseConnections();
    const client = await h.dial({ waitForProvider: false });
    await client.waitFor(() => client.closeCode !== undefined);
    const apologyAt = find(client, lines.apology);
    const goodbyeAt = find(client, lines.goodbye);
    expect(apologyAt).toBe(0);
    expect(goodbyeAt).toBeGreaterThan(apologyAt);
    expect(client.closeReason).toBe("provider_lost");
    expect(h.realtime!.refusedConnections).toBe(3); // the first try and two reconnects
    await h.rest.waitFor((r) => r.path.endsWith(`/Calls/${client.callSid}.json`));
  });

  it("the connection refused at call start with policy hangup: a greeting waits for nothing, the goodbye is heard, then provider_lost", async () => {
    h = await startTelephony({
      mode: "realtime",
      talk: faultsConfig("hangup"),
      telephony: { greeting: "Hello, you reached the test line." },
    });
    h.realtime!.refuseConnections();
    const client = await h.dial({ waitForProvider: false });
    await client.waitFor(() => client.closeCode !== undefined);
    expect(find(client, lines.goodbye)).toBe(0);
    expect(client.closeReason).toBe("provider_lost");
    expect(h.realtime!.refusedConnections).toBe(1);
  });
});
