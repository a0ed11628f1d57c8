/**
 * Call control on a real call (the whole server, the Twilio stand-in's stream
 * and REST API, the realtime stand-in calling the tools): DTMF sent into the
 * call as tones the far end decodes, digits collected from the keypad,
 * transfers with a briefing for whoever picks up, and carrier refusals and
 * outages that reach the model as tool errors while the call goes on.
 */
import { afterEach, describe, expect, it } from "vitest";
import { decodeMulaw, detectDtmf } from "../../src/codecs/index.js";
import { computeTwilioSignature } from "../../src/telephony/twilio/twilio-signature.js";
import {
  AUTH_TOKEN,
  sessionOfCall,
  startTelephony,
  type TelephonyHarness,
} from "../support/telephony-harness.js";

let h: TelephonyHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const TARGETS = { agent: { transferTargets: { "front desk": "+15550009999" } } };

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

function toolOutcome(
  h: TelephonyHarness,
  sessionId: string,
): { type: string; payload: Record<string, unknown> } | undefined {
  const e = h.eventsOf(sessionId).find((x) => x.type === "tool.result" || x.type === "tool.error");
  return e && { type: e.type, payload: e.payload as unknown as Record<string, unknown> };
}

describe("telephony: call control", () => {
  it("send_dtmf plays Q.23 tones into the call that the far end decodes back to the digits", async () => {
    h = await startTelephony({ mode: "realtime" });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    const before = client.media.length;
    h.realtime!.callTool({ name: "send_dtmf", arguments: { digits: "12#9" } });
    await waitUntil(() => toolOutcome(h!, sessionId) !== undefined);
    expect(toolOutcome(h, sessionId)).toMatchObject({ type: "tool.result" });
    const heard = decodeMulaw(concat(client.media.slice(before)));
    expect(detectDtmf(heard, { sampleRate: 8000 })).toBe("12#9");
    // 4 tones of 100 ms and their 80 ms gaps: the tool waited for them to be played.
    expect(heard.length).toBeGreaterThanOrEqual(4 * 180 * 8);
  });

  it("collect_digits returns the keys typed; they are events of the session, not text to the model", async () => {
    h = await startTelephony({ mode: "realtime" });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    h.realtime!.callTool({ name: "collect_digits", arguments: { count: 4 } });
    await waitUntil(() => h!.eventsOf(sessionId, "tool.call").length === 1);
    const itemsBefore = h.realtime!.received.filter((e) => e.type === "conversation.item.create").length;
    for (const d of "4821") client.sendDtmf(d);
    await waitUntil(() => toolOutcome(h!, sessionId) !== undefined);
    const outcome = toolOutcome(h, sessionId)!;
    expect(outcome.type).toBe("tool.result");
    expect(JSON.parse(String(outcome.payload["output"]))).toMatchObject({ digits: "4821", endedBy: "count" });
    const keyEvents = h
      .eventsOf(sessionId, "transcript.done")
      .filter((e) => (e.payload as { collected?: boolean }).collected);
    expect(keyEvents.map((e) => (e.payload as { digits: string }).digits).join("")).toBe("4821");
    // Only the tool's output went to the model, no "The caller pressed ..." items.
    const items = h
      .realtime!.received.filter((e) => e.type === "conversation.item.create")
      .slice(itemsBefore);
    expect(
      items.every(
        (e) => ((e.event as { item?: { type?: string } }).item ?? {}).type === "function_call_output",
      ),
    ).toBe(true);
  });

  it("collect_digits ends at the terminator and on a timeout with what was typed", async () => {
    h = await startTelephony({ mode: "realtime" });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    h.realtime!.callTool({ name: "collect_digits", arguments: { terminator: "#", timeoutMs: 1000 } });
    await waitUntil(() => h!.eventsOf(sessionId, "tool.call").length === 1);
    for (const d of "77#") client.sendDtmf(d);
    await waitUntil(() => h!.eventsOf(sessionId, "tool.result").length === 1);
    expect(
      JSON.parse(String((h.eventsOf(sessionId, "tool.result")[0]!.payload as { output: string }).output)),
    ).toMatchObject({
      digits: "77",
      endedBy: "terminator",
    });
    h.realtime!.callTool({ name: "collect_digits", arguments: { count: 6, timeoutMs: 1000 } });
    await waitUntil(() => h!.eventsOf(sessionId, "tool.call").length === 2);
    client.sendDtmf("5");
    await waitUntil(() => h!.eventsOf(sessionId, "tool.result").length === 2);
    expect(
      JSON.parse(String((h.eventsOf(sessionId, "tool.result")[1]!.payload as { output: string }).output)),
    ).toMatchObject({
      digits: "5",
      complete: false,
      endedBy: "timeout",
    });
  });

  it("transfer_call moves the call to the configured number with a briefing the callee hears first", async () => {
    h = await startTelephony({
      mode: "realtime",
      telephony: { transfer: { announcement: "" } },
      config: TARGETS,
    });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    h.realtime!.callTool({
      name: "transfer_call",
      arguments: { target: "front desk", briefing: "Ana is calling about order 42." },
    });
    const update = await h.rest.waitFor((r) => r.path.endsWith(`/Calls/${client.callSid}.json`));
    const twiml = update.params.get("Twiml")!;
    expect(twiml).toContain(">+15550009999</Number>");
    const briefingUrl = /<Number url="([^"]+)"/.exec(twiml)![1]!.replace(/&amp;/g, "&");
    expect(briefingUrl).toBe(
      `${h.publicUrl}/telephony/twilio/briefing?text=Ana%20is%20calling%20about%20order%2042.`,
    );
    // Twilio fetches the whisper with a signed POST; the callee hears the briefing.
    const path = briefingUrl.slice(h.publicUrl.length);
    const whisper = await fetch(`${h.baseUrl}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": computeTwilioSignature(AUTH_TOKEN, briefingUrl, {}),
      },
      body: "",
    });
    expect(whisper.status).toBe(200);
    expect(await whisper.text()).toContain("<Say>Ana is calling about order 42.</Say>");
    const forged = await fetch(`${h.baseUrl}${path}`, {
      method: "POST",
      headers: { "x-twilio-signature": "AAAA" },
    });
    expect(forged.status).toBe(403);
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "transferred" });
    expect(toolOutcome(h, sessionId)).toMatchObject({ type: "tool.result" });
  });

  it("the caller hears the announcement before the transfer is asked of the carrier", async () => {
    h = await startTelephony({
      mode: "realtime",
      telephony: { transfer: { announcement: "Please hold." } },
      config: TARGETS,
    });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    // The announcement is spoken by the provider: wait until the call's audio reaches it (its session is up).
    while (h.realtime!.audioMsReceived === 0) {
      await client.sendAudio(new Uint8Array(160).fill(0xff));
      await new Promise((r) => setTimeout(r, 20));
    }
    h.realtime!.callTool({ name: "transfer_call", arguments: { target: "front desk" } });
    await h.rest.waitFor((r) => r.path.endsWith(`/Calls/${client.callSid}.json`));
    const said = h.realtime!.received.filter(
      (e) => e.type === "conversation.item.create" || e.type === "response.create",
    );
    expect(JSON.stringify(said)).toContain("Please hold.");
    await waitUntil(() => h!.eventsOf(sessionId, "session.closed").length === 1);
  });

  it("a carrier outage is retried; a refusal is a tool error the model hears, and the call goes on", async () => {
    h = await startTelephony({
      mode: "realtime",
      telephony: { transfer: { announcement: "" } },
      config: TARGETS,
    });
    const client = await h.dial();
    const sessionId = sessionOfCall(h, client.callSid)!;
    h.rest.failUpdates = 1;
    h.realtime!.callTool({ name: "transfer_call", arguments: { target: "front desk" } });
    await waitUntil(() => toolOutcome(h!, sessionId) !== undefined);
    expect(toolOutcome(h, sessionId)).toMatchObject({ type: "tool.result" });
    expect(h.rest.requests.filter((r) => r.path.endsWith(`/Calls/${client.callSid}.json`))).toHaveLength(2);
    await h.close();

    h = await startTelephony({
      mode: "realtime",
      telephony: { transfer: { announcement: "" } },
      config: TARGETS,
    });
    const second = await h.dial();
    const secondSession = sessionOfCall(h, second.callSid)!;
    h.rest.refuseUpdates = true;
    h.realtime!.callTool({ name: "transfer_call", arguments: { target: "front desk" } });
    await waitUntil(() => toolOutcome(h!, secondSession) !== undefined);
    expect(toolOutcome(h, secondSession)).toMatchObject({ type: "tool.error" });
    expect(h.rest.requests.filter((r) => r.path.endsWith(`/Calls/${second.callSid}.json`))).toHaveLength(1);
    // The model got the error as the call's output, and the call is still up.
    await waitUntil(() => h!.realtime!.received.some((e) => e.type === "conversation.item.create"));
    const outputs = h
      .realtime!.received.filter((e) => e.type === "conversation.item.create")
      .map((e) => e.event);
    expect(JSON.stringify(outputs)).toContain("not in-progress");
    expect(h.eventsOf(secondSession, "session.closed")).toHaveLength(0);
    expect(second.closeCode).toBeUndefined();
  });
});
