/**
 * Call control on Telnyx, Plivo and Vonage calls (the whole server, each
 * carrier's stream stand-in and its fake REST API written from the
 * carrier's docs, the realtime stand-in calling the tools): per carrier, one
 * call sends DTMF with the carrier's own command and is then transferred
 * with a briefing (the fake sees the carrier's request; the briefing's
 * URL, fetched as the carrier would, serves the spoken summary), and one
 * call whose transfer or DTMF the carrier refuses: the model gets a tool
 * error, the caller hears the apology (the pre-rendered audio, byte for
 * byte) and the call goes on. Without REST credentials (Vonage), DTMF goes
 * in-band and is decoded by Goertzel from the audio the stand-in received.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderLine } from "../../src/app/faults.js";
import { detectDtmf, pcm16FromBytes, readWav } from "../../src/codecs/index.js";
import { PCM16_16K, ULAW_8K, type AudioFormat } from "../../src/core/talk-types.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { createEspeakTts } from "../../src/providers/index.js";
import { startPlivo, PLIVO_AUTH_ID, type PlivoHarness } from "../support/plivo-harness.js";
import { startTelnyx, type TelnyxHarness } from "../support/telnyx-harness.js";
import {
  APPLICATION_ID,
  SIGNATURE_SECRET,
  startVonage,
  type VonageHarness,
} from "../support/vonage-harness.js";

const TARGETS = { agent: { transferTargets: { "front desk": "+15550009999" } } };
const SETUP = { mode: "realtime" as const, telephony: { transfer: { announcement: "" } }, config: TARGETS };
const BRIEFING = "Ana is calling about order 42.";

/** One live call on a carrier, as the tests need it. */
interface Call {
  callId: string;
  sessionId: string;
  /** Everything the stand-in received as audio, in the line's format. */
  heard(): Uint8Array;
}

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.byteLength)));
}

function outcome(events: TalkEvent[], sessionId: string, nth = 0): TalkEvent | undefined {
  return events.filter(
    (e) => e.sessionId === sessionId && (e.type === "tool.result" || e.type === "tool.error"),
  )[nth];
}

async function toolOutcome(events: TalkEvent[], sessionId: string, nth = 0): Promise<TalkEvent> {
  await waitUntil(() => outcome(events, sessionId, nth) !== undefined);
  return outcome(events, sessionId, nth)!;
}

/** The apology as the caller hears it on a line of `format` (what the server pre-renders at start-up). */
async function apologyOn(text: string, format: AudioFormat): Promise<Buffer> {
  return Buffer.from((await renderLine(createEspeakTts(), text)).audioFor(format).data);
}

/** Its first second is in what the caller heard (whole frames, byte for byte). */
async function hearsApology(call: Call, apology: Buffer, bytesPerSecond: number): Promise<void> {
  const head = apology.subarray(0, bytesPerSecond);
  await waitUntil(() => Buffer.from(call.heard()).indexOf(head) >= 0);
}

describe("telephony call control: Telnyx", () => {
  let h: TelnyxHarness;
  beforeAll(async () => {
    h = await startTelnyx(SETUP);
  });
  afterAll(async () => h?.close());
  const dial = async (): Promise<Call> => {
    const client = await h.dial();
    const callId = client.callControlId;
    return { callId, sessionId: h.sessionOf(callId)!, heard: () => concat(client.media) };
  };

  it("send_dtmf is Call Control send_dtmf (retried with the same command_id after a 500); transfer_call plays the briefing as audio_url", async () => {
    const call = await dial();
    h.rest.failActions = 1;
    h.realtime!.callTool({ name: "send_dtmf", arguments: { digits: "12#9" } });
    expect((await toolOutcome(h.events, call.sessionId)).type).toBe("tool.result");
    const dtmf = h.rest.requests.filter((r) => r.path.endsWith("/actions/send_dtmf") && r.id === call.callId);
    expect(dtmf).toHaveLength(2);
    expect(dtmf[0]!.body).toMatchObject({ digits: "12#9", command_id: dtmf[1]!.body["command_id"] });
    expect(h.rest.performed.filter((r) => r.path.endsWith("/actions/send_dtmf"))).toHaveLength(1);

    h.realtime!.callTool({ name: "transfer_call", arguments: { target: "front desk", briefing: BRIEFING } });
    const transfer = await h.rest.waitFor(
      (r) => r.path.endsWith("/actions/transfer") && r.id === call.callId,
    );
    expect(transfer.body).toMatchObject({ to: "+15550009999", command_id: expect.any(String) });
    const audioUrl = String(transfer.body["audio_url"]);
    expect(audioUrl.startsWith(`${h.publicUrl}/telephony/telnyx/briefing?`)).toBe(true);
    // Telnyx fetches the file (unsigned): a WAV of the briefing spoken by the local TTS.
    const path = audioUrl.slice(h.publicUrl.length);
    const wav = await fetch(`${h.baseUrl}${path}`);
    expect([wav.status, wav.headers.get("content-type")]).toEqual([200, "audio/wav"]);
    const served = readWav(new Uint8Array(await wav.arrayBuffer()));
    expect(served.format).toMatchObject({ sampleRate: 8000, channels: 1 });
    const spoken = (await renderLine(createEspeakTts(), BRIEFING)).audioFor({
      encoding: "pcm16",
      sampleRate: 8000,
      channels: 1,
    });
    expect(Buffer.from(served.pcm.buffer, served.pcm.byteOffset, served.pcm.byteLength)).toEqual(
      Buffer.from(spoken.data),
    );
    // Without our signature, or with the text changed, nothing is spoken.
    expect((await fetch(`${h.baseUrl}${path.replace(/&sig=[^&]+/, "")}`)).status).toBe(403);
    expect((await fetch(`${h.baseUrl}${path.replace("order", "ordre")}`)).status).toBe(403);
    await waitUntil(() => h.eventsOf(call.sessionId, "session.closed").length === 1);
    expect(h.eventsOf(call.sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "transferred" });
  });

  it("a transfer Telnyx refuses: a tool error for the model, the apology for the caller, the call goes on", async () => {
    const call = await dial();
    h.rest.refuseActions.add("transfer");
    h.realtime!.callTool({ name: "transfer_call", arguments: { target: "front desk" } });
    const result = await toolOutcome(h.events, call.sessionId);
    expect(result.type).toBe("tool.error");
    expect(JSON.stringify(result.payload)).toContain("transfer refused");
    await hearsApology(call, await apologyOn(h.app.config.talk.faults.apology, ULAW_8K), 8000);
    expect(h.eventsOf(call.sessionId, "session.closed")).toHaveLength(0);
  });
});

describe("telephony call control: Plivo", () => {
  let h: PlivoHarness;
  beforeAll(async () => {
    h = await startPlivo(SETUP);
  });
  afterAll(async () => h?.close());
  const dial = async (): Promise<Call> => {
    const callId = crypto.randomUUID();
    const client = await h.dial({ callId });
    return { callId, sessionId: h.sessionOf(callId)!, heard: () => concat(client.media) };
  };
  const base = `/v1/Account/${PLIVO_AUTH_ID}/Call/`;
  const xmlPost = (url: string): Promise<Response> =>
    fetch(`${h.baseUrl}${url.slice(h.publicUrl.length)}`, { method: "POST" });

  it("send_dtmf is the Call DTMF API; transfer_call moves the call to a <Dial> whose confirmSound speaks the briefing", async () => {
    const call = await dial();
    h.realtime!.callTool({ name: "send_dtmf", arguments: { digits: "12#9" } });
    expect((await toolOutcome(h.events, call.sessionId)).type).toBe("tool.result");
    const dtmf = await h.rest.waitFor((r) => r.path === `${base}${call.callId}/DTMF/`);
    expect(dtmf.body).toEqual({ digits: "12#9", leg: "aleg" });

    h.realtime!.callTool({ name: "transfer_call", arguments: { target: "front desk", briefing: BRIEFING } });
    const transfer = await h.rest.waitFor((r) => r.method === "POST" && r.path === `${base}${call.callId}/`);
    expect(transfer.body).toMatchObject({ legs: "aleg", aleg_method: "POST" });
    const alegUrl = String(transfer.body["aleg_url"]);
    expect(alegUrl.startsWith(`${h.publicUrl}/telephony/plivo/transfer?`)).toBe(true);
    // Plivo fetches the XML, then confirmSound when the destination answers.
    const xml = await (await xmlPost(alegUrl)).text();
    expect(xml).toContain("<Number>15550009999</Number>");
    const confirm = /<Dial confirmSound="([^"]+)">/.exec(xml)![1]!.replace(/&amp;/g, "&");
    expect(confirm.startsWith(`${h.publicUrl}/telephony/plivo/briefing?`)).toBe(true);
    const briefing = await xmlPost(confirm);
    expect(briefing.status).toBe(200);
    expect(await briefing.text()).toContain(`<Speak>${BRIEFING}</Speak>`);
    // A destination that is not the one signed: refused.
    expect((await xmlPost(alegUrl.replace("15550009999", "15550006666"))).status).toBe(403);
    await waitUntil(() => h.eventsOf(call.sessionId, "session.closed").length === 1);
    expect(h.eventsOf(call.sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "transferred" });
  });

  it("DTMF Plivo refuses, or fails on (not repeatable: no retry): tool errors, the apology, the call goes on", async () => {
    const call = await dial();
    const apology = await apologyOn(h.app.config.talk.faults.apology, ULAW_8K);
    h.rest.refuse.add("dtmf");
    h.realtime!.callTool({ name: "send_dtmf", arguments: { digits: "5" } });
    expect((await toolOutcome(h.events, call.sessionId)).type).toBe("tool.error");
    await hearsApology(call, apology, 8000);
    h.rest.refuse.clear();
    h.rest.failActions = 1;
    h.realtime!.callTool({ name: "send_dtmf", arguments: { digits: "7" } });
    expect((await toolOutcome(h.events, call.sessionId, 1)).type).toBe("tool.error");
    expect(h.rest.requests.filter((r) => r.path === `${base}${call.callId}/DTMF/`)).toHaveLength(2);
    expect(h.eventsOf(call.sessionId, "session.closed")).toHaveLength(0);
  });
});

describe("telephony call control: Vonage", () => {
  let h: VonageHarness;
  beforeAll(async () => {
    h = await startVonage(SETUP);
  });
  afterAll(async () => h?.close());
  const dial = async (): Promise<Call> => {
    const { uuid, client } = await h.dial();
    return { callId: uuid, sessionId: h.sessionOf(uuid)!, heard: () => concat(client.frames) };
  };

  it("send_dtmf is PUT /dtmf; transfer_call connects a phone endpoint whose onAnswer NCCO talks the briefing", async () => {
    const call = await dial();
    h.realtime!.callTool({ name: "send_dtmf", arguments: { digits: "12#9" } });
    expect((await toolOutcome(h.events, call.sessionId)).type).toBe("tool.result");
    const dtmf = await h.rest.waitFor((r) => r.path === `/v1/calls/${call.callId}/dtmf`);
    expect([dtmf.method, dtmf.body]).toEqual(["PUT", { digits: "12#9" }]);

    h.realtime!.callTool({ name: "transfer_call", arguments: { target: "front desk", briefing: BRIEFING } });
    const transfer = await h.rest.waitFor(
      (r) => r.path === `/v1/calls/${call.callId}` && r.body["action"] === "transfer",
    );
    const ncco = (transfer.body["destination"] as { type: string; ncco: Array<Record<string, unknown>> })
      .ncco;
    const endpoint = (ncco[0]!["endpoint"] as Array<Record<string, unknown>>)[0]!;
    expect(endpoint).toMatchObject({ type: "phone", number: "15550009999" });
    const onAnswer = String((endpoint["onAnswer"] as { url: string }).url);
    expect(onAnswer.startsWith(`${h.publicUrl}/telephony/vonage/briefing?`)).toBe(true);
    const talk = await fetch(`${h.baseUrl}${onAnswer.slice(h.publicUrl.length)}`);
    expect(talk.status).toBe(200);
    expect(await talk.json()).toEqual([{ action: "talk", text: BRIEFING }]);
    await waitUntil(() => h.eventsOf(call.sessionId, "session.closed").length === 1);
    expect(h.eventsOf(call.sessionId, "session.closed")[0]!.payload).toMatchObject({ reason: "transferred" });
  });

  it("a transfer Vonage refuses: a tool error, the apology on the 16 kHz line, the call goes on", async () => {
    const call = await dial();
    h.rest.refuse.add("transfer");
    h.realtime!.callTool({ name: "transfer_call", arguments: { target: "front desk", briefing: BRIEFING } });
    expect((await toolOutcome(h.events, call.sessionId)).type).toBe("tool.error");
    await hearsApology(call, await apologyOn(h.app.config.talk.faults.apology, PCM16_16K), 32_000);
    expect(h.eventsOf(call.sessionId, "session.closed")).toHaveLength(0);
  });
});

describe("telephony call control: in-band DTMF", () => {
  it("Vonage without REST credentials: Q.23 tones in the 16 kHz audio, decoded back to the digits", async () => {
    const h = await startVonage({
      mode: "realtime",
      telephony: { vonage: { applicationId: APPLICATION_ID, signatureSecret: SIGNATURE_SECRET } },
    });
    try {
      const { uuid, client } = await h.dial();
      const sessionId = h.sessionOf(uuid)!;
      const before = client.frames.length;
      h.realtime!.callTool({ name: "send_dtmf", arguments: { digits: "12#9" } });
      expect((await toolOutcome(h.events, sessionId)).type).toBe("tool.result");
      const pcm = pcm16FromBytes(concat(client.frames.slice(before)));
      expect(detectDtmf(pcm, { sampleRate: 16_000 })).toBe("12#9");
      expect(h.rest.requests.filter((r) => r.path.endsWith("/dtmf"))).toHaveLength(0);
    } finally {
      await h.close();
    }
  });
});
