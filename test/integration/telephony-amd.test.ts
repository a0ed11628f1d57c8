/**
 * Answering-machine detection of outbound calls against each carrier's
 * stand-in (fake REST API + the carrier's signed AMD callback, from its
 * docs): what the dial requests, and what each result does by policy:
 * voicemail after the beep then hang-up (Twilio), a person greeted only
 * after detection and a fax hung up on (Telnyx), hang-up on a machine and
 * the timeout fallback (Plivo), detection refused by the carrier (Vonage);
 * bad callbacks and bad requests get clear 4xx, bad config is refused at start.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateConfig } from "../../src/config/load-config.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { computeTwilioSignature } from "../../src/telephony/twilio/twilio-signature.js";
import { plivoAmd, telnyxAmd, twilioAmd, vonageAmd } from "../support/carrier-amd-stand-in.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { PLIVO_ADMIN_TOKEN, startPlivo, type PlivoHarness } from "../support/plivo-harness.js";
import {
  ACCOUNT_SID,
  ADMIN_TOKEN,
  AUTH_TOKEN,
  startTelephony,
  type TelephonyHarness,
} from "../support/telephony-harness.js";
import { ADMIN_TOKEN as TELNYX_ADMIN, startTelnyx, type TelnyxHarness } from "../support/telnyx-harness.js";
import { TelnyxStreamClient } from "../support/telnyx-stream-client.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS, TwilioStreamClient } from "../support/twilio-stream-client.js";
import {
  ADMIN_TOKEN as VONAGE_ADMIN,
  endpointOf,
  startVonage,
  type VonageHarness,
} from "../support/vonage-harness.js";

const GREETING = "Hello, this is the assistant calling.";
const MESSAGE = "Please call us back tomorrow.";

async function until(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

async function place(
  baseUrl: string,
  token: string,
  body: Record<string, unknown>,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${baseUrl}/telephony/calls`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function callStatus(baseUrl: string, token: string, id: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${baseUrl}/telephony/calls/${encodeURIComponent(id)}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return (await res.json()) as Record<string, unknown>;
}

/** The words the assistant spoke in a session (stt-tts: each segment's text rides its first audio delta). */
function spoken(events: TalkEvent[]): string {
  return events
    .map((e) => (e.payload as { segmentText?: string }).segmentText ?? "")
    .filter(Boolean)
    .join(" ");
}

function amdUpdates(events: TalkEvent[]): Array<Record<string, unknown>> {
  return events
    .filter((e) => e.type === "session.updated" && "machineDetection" in (e.payload as object))
    .map((e) => (e.payload as { machineDetection: Record<string, unknown> }).machineDetection);
}

describe("amd: Twilio", () => {
  let h: TelephonyHarness;
  let amd: ReturnType<typeof twilioAmd>;
  beforeAll(async () => {
    h = await startTelephony({ mode: "stt-tts", telephony: { greeting: GREETING } });
    amd = twilioAmd(h);
  });
  afterAll(() => h.close());

  async function answered(callSid: string): Promise<TwilioStreamClient> {
    const twiml = h.rest.requests.find((r) => r.sid === callSid)!.params.get("Twiml")!;
    const parameters = Object.fromEntries(
      [...twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]),
    );
    const stream = new TwilioStreamClient({
      url: `ws://127.0.0.1:${h.port}/telephony/twilio/stream`,
      customParameters: parameters,
      callSid,
      accountSid: ACCOUNT_SID,
    });
    await stream.connect();
    return stream;
  }

  it("voicemail: nothing is said over the machine's greeting; the message follows the beep, then the call is hung up", async () => {
    const placed = await place(h.baseUrl, ADMIN_TOKEN, {
      to: "+15557654321",
      machineDetection: { policy: "voicemail", message: MESSAGE },
    });
    expect(placed.status).toBe(201);
    const callSid = placed.json["callSid"] as string;
    const sessionId = placed.json["sessionId"] as string;
    expect(amd.requested(callSid).mode).toBe("detect_message_end");
    const stream = await answered(callSid);
    // The machine's greeting plays: it is not the caller's turn, and the assistant stays silent.
    await stream.sendAudio(loadSpeechUlaw(SPEECH_RECORDINGS.goforward), { pace: "fast" });
    expect((await amd.answer(callSid, "machine_start")).status).toBe(204);
    await until(() => amdUpdates(h.eventsOf(sessionId)).some((u) => u["action"] === "waiting_for_beep"));
    expect(await callStatus(h.baseUrl, ADMIN_TOKEN, callSid)).toMatchObject({
      state: "placed",
      machineDetection: { policy: "voicemail", answeredBy: "machine", action: "waiting_for_beep" },
    });
    expect(h.eventsOf(sessionId, "output.audio.started")).toHaveLength(0);
    expect(stream.receivedAudioMs).toBe(0);

    const beepAt = h.events.length;
    expect((await amd.answer(callSid, "machine_end_beep")).status).toBe(204);
    const hangUp = await h.rest.waitFor(
      (r) => r.path.endsWith(`/Calls/${callSid}.json`) && r.params.get("Status") === "completed",
    );
    // The message played in full before the hang-up reached the carrier.
    expect(stream.receivedAudioMs).toBeGreaterThan(500);
    expect(hangUp).toBeDefined();
    const afterBeep = h.events.slice(beepAt).filter((e) => e.sessionId === sessionId);
    expect(afterBeep.findIndex((e) => e.type === "output.audio.started")).toBeGreaterThan(-1);
    expect(spoken(h.eventsOf(sessionId))).toContain("call us back");
    expect(spoken(h.eventsOf(sessionId))).not.toContain("assistant calling");
    expect(h.eventsOf(sessionId, "transcript.done")).toHaveLength(0);
    await until(() => h.eventsOf(sessionId, "session.closed").length === 1);
    expect(await callStatus(h.baseUrl, ADMIN_TOKEN, callSid)).toMatchObject({
      state: "ended",
      reason: "hung_up",
      machineDetection: {
        answeredBy: "machine",
        greetingEnded: true,
        carrierResult: "machine_end_beep",
        action: "voicemail_left",
      },
    });
    await stream.close();
  });

  it("bad AMD callbacks get a clear 4xx and change nothing", async () => {
    const placed = await place(h.baseUrl, ADMIN_TOKEN, {
      to: "+15557654321",
      machineDetection: { policy: "hangup" },
    });
    const callSid = placed.json["callSid"] as string;
    expect(amd.requested(callSid).mode).toBe("detect");
    const robot = await amd.answer(callSid, "robot", { CallSid: callSid, AnsweredBy: "robot" });
    expect(robot.status).toBe(400);
    const err = ((await robot.json()) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe("invalid_params");
    expect(err.message).toMatch(/^AnsweredBy:/);
    const noCall = await amd.answer(callSid, "human", { AnsweredBy: "human" });
    expect(noCall.status).toBe(400);
    expect(((await noCall.json()) as { error: { message: string } }).error.message).toMatch(/^CallSid:/);
    const unknown = await amd.answer(callSid, "human", {
      CallSid: `CA${"f".repeat(32)}`,
      AnsweredBy: "human",
    });
    expect(unknown.status).toBe(404);
    const path = amd.requested(callSid).callbackPath;
    const forged = await fetch(`${h.baseUrl}${path}`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        "x-twilio-signature": computeTwilioSignature("not-the-token", `${h.publicUrl}${path}`, {
          CallSid: callSid,
          AnsweredBy: "machine_start",
        }),
      },
      body: new URLSearchParams({ CallSid: callSid, AnsweredBy: "machine_start" }),
    });
    expect(forged.status).toBe(403);
    expect(await callStatus(h.baseUrl, ADMIN_TOKEN, callSid)).toMatchObject({
      state: "placed",
      machineDetection: { action: "detecting" },
    });
    expect(h.rest.requests.filter((r) => r.path.endsWith(`/Calls/${callSid}.json`))).toHaveLength(0);
    expect(AUTH_TOKEN).not.toBe("not-the-token");
  });

  it("a request with a bad policy, or a voicemail without a message, is invalid_params naming the field", async () => {
    const bad = await place(h.baseUrl, ADMIN_TOKEN, {
      to: "+15557654321",
      machineDetection: { policy: "shout" },
    });
    expect(bad.status).toBe(400);
    expect((bad.json["error"] as { message: string }).message).toMatch(/^machineDetection\.policy:/);
    const silent = await place(h.baseUrl, ADMIN_TOKEN, {
      to: "+15557654321",
      machineDetection: { policy: "voicemail" },
    });
    expect(silent.status).toBe(400);
    expect((silent.json["error"] as { message: string }).message).toMatch(/^machineDetection\.message:/);
  });
});

describe("amd: outbound-call jobs (Redis)", () => {
  it("the job's status carries the detection as it changes", async () => {
    const prefix = uniquePrefix("amd");
    const h = await startTelephony({
      mode: "stt-tts",
      telephony: { greeting: GREETING },
      config: { redis: { url: SHARED_REDIS_URL, keyPrefix: prefix } },
    });
    try {
      const placed = await place(h.baseUrl, ADMIN_TOKEN, {
        to: "+15557654321",
        machineDetection: { policy: "hangup" },
      });
      expect(placed.status).toBe(202);
      const jobId = placed.json["jobId"] as string;
      const dial = await h.rest.waitFor((r) => r.path.endsWith("/Calls.json"));
      const amd = twilioAmd(h);
      // The job reaches the call from any worker; `worker` names the one running its detection.
      expect(amd.requested(dial.sid!).callbackPath).toBe(
        `/telephony/twilio/status?job=${jobId}&worker=${encodeURIComponent(h.app.cluster.coordinator.workerId)}`,
      );
      const parameters = Object.fromEntries(
        [...dial.params.get("Twiml")!.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [
          m[1]!,
          m[2]!,
        ]),
      );
      await until(() => h.app.runtime.listSessions().some((x) => x.metadata["callSid"] === dial.sid));
      const stream = new TwilioStreamClient({
        url: `ws://127.0.0.1:${h.port}/telephony/twilio/stream`,
        customParameters: parameters,
        callSid: dial.sid!,
        accountSid: ACCOUNT_SID,
      });
      await stream.connect();
      expect((await amd.answer(dial.sid!, "human")).status).toBe(204);
      let status: Record<string, unknown> = {};
      while ((status["machineDetection"] as { action?: string } | undefined)?.action !== "greeted") {
        await new Promise((r) => setTimeout(r, 20));
        status = await callStatus(h.baseUrl, ADMIN_TOKEN, jobId);
      }
      expect(status).toMatchObject({ state: "placed", jobId, machineDetection: { answeredBy: "human" } });
      await stream.stop();
    } finally {
      await h.close();
      await deleteKeys(SHARED_REDIS_URL, prefix);
    }
  });
});

describe("amd: Telnyx", () => {
  let h: TelnyxHarness;
  let amd: ReturnType<typeof telnyxAmd>;
  beforeAll(async () => {
    h = await startTelnyx({ mode: "stt-tts", telephony: { greeting: GREETING, amd: { message: MESSAGE } } });
    amd = telnyxAmd(h);
  });
  afterAll(() => h.close());

  async function answered(callSid: string): Promise<TelnyxStreamClient> {
    const dial = h.rest.requests.find((r) => r.callSid === callSid)!;
    const stream = new TelnyxStreamClient({
      url: h.streamUrl,
      customParameters: h.parametersOf(String(dial.body["Texml"])),
      callControlId: callSid,
    });
    await stream.connect();
    return stream;
  }

  it("a person hears the greeting only once detection says human", async () => {
    const placed = await place(h.baseUrl, TELNYX_ADMIN, {
      carrier: "telnyx",
      to: "+15557654321",
      machineDetection: { policy: "hangup" },
    });
    const callSid = placed.json["callSid"] as string;
    const sessionId = placed.json["sessionId"] as string;
    expect(amd.requested(callSid).mode).toBe("detect");
    const stream = await answered(callSid);
    await until(() => h.app.runtime.getSession(sessionId)?.state === "active");
    expect(h.eventsOf(sessionId, "output.audio.started")).toHaveLength(0);
    expect((await amd.answer(callSid, "human")).status).toBe(204);
    await stream.waitFor(() => stream.receivedAudioMs > 400);
    expect(spoken(h.eventsOf(sessionId))).toContain("assistant calling");
    expect(amdUpdates(h.eventsOf(sessionId)).at(-1)).toMatchObject({
      answeredBy: "human",
      action: "greeted",
    });
    expect(h.rest.requests.filter((r) => r.path.endsWith("/actions/hangup"))).toHaveLength(0);
    await stream.close();
  });

  it("a fax under the voicemail policy is hung up on (it records no message)", async () => {
    const placed = await place(h.baseUrl, TELNYX_ADMIN, {
      carrier: "telnyx",
      to: "+15557654321",
      machineDetection: { policy: "voicemail" },
    });
    const callSid = placed.json["callSid"] as string;
    const sessionId = placed.json["sessionId"] as string;
    expect(amd.requested(callSid).mode).toBe("detect_message_end");
    const stream = await answered(callSid);
    expect((await amd.answer(callSid, "fax")).status).toBe(204);
    await h.rest.waitFor((r) => r.path === `/v2/calls/${callSid}/actions/hangup`);
    await until(() => h.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "output.audio.started")).toHaveLength(0);
    expect(amdUpdates(h.eventsOf(sessionId)).at(-1)).toMatchObject({ answeredBy: "fax", action: "hung_up" });
    await stream.close();
  });
});

describe("amd: Plivo", () => {
  let h: PlivoHarness;
  let amd: ReturnType<typeof plivoAmd>;
  beforeAll(async () => {
    h = await startPlivo({
      mode: "stt-tts",
      telephony: { greeting: GREETING, amd: { policy: "hangup", timeoutMs: 3000 } },
    });
    amd = plivoAmd(h);
  });
  afterAll(() => h.close());

  it("hangup policy (from telephony.amd): a machine is hung up on through the REST API", async () => {
    const placed = await place(h.baseUrl, PLIVO_ADMIN_TOKEN, { carrier: "plivo", to: "+15557654321" });
    const requestUuid = placed.json["callSid"] as string;
    const sessionId = placed.json["sessionId"] as string;
    expect(amd.requested(requestUuid).mode).toBe("detect");
    const stream = await h.answerDialled(requestUuid);
    const callUuid = h.rest.calls.get(requestUuid)!;
    expect((await amd.answer(requestUuid, true, callUuid)).status).toBe(204);
    await h.rest.waitFor((r) => r.method === "DELETE" && r.path.includes(callUuid));
    await until(() => h.eventsOf(sessionId, "session.closed").length === 1);
    expect(h.eventsOf(sessionId, "output.audio.started")).toHaveLength(0);
    expect(amdUpdates(h.eventsOf(sessionId)).at(-1)).toMatchObject({
      answeredBy: "machine",
      carrierResult: "Machine=true",
      action: "hung_up",
    });
    await stream.close();
  });

  it("voicemail: Plivo reports no beep, so the message follows the greeting's end heard on the line", async () => {
    const placed = await place(h.baseUrl, PLIVO_ADMIN_TOKEN, {
      carrier: "plivo",
      to: "+15557654321",
      machineDetection: { policy: "voicemail", message: MESSAGE },
    });
    const requestUuid = placed.json["callSid"] as string;
    const sessionId = placed.json["sessionId"] as string;
    const stream = await h.answerDialled(requestUuid);
    const callUuid = h.rest.calls.get(requestUuid)!;
    expect((await amd.answer(requestUuid, true, callUuid)).status).toBe(204);
    await until(() => amdUpdates(h.eventsOf(sessionId)).some((u) => u["action"] === "waiting_for_beep"));
    await stream.sendAudio(loadSpeechUlaw(SPEECH_RECORDINGS.goforward), { pace: "fast" });
    expect(h.eventsOf(sessionId, "output.audio.started")).toHaveLength(0);
    await stream.sendAudio(new Uint8Array(16_000).fill(0xff), { pace: "fast" });
    await h.rest.waitFor((r) => r.method === "DELETE" && r.path.includes(callUuid));
    expect(spoken(h.eventsOf(sessionId))).toContain("call us back");
    expect(amdUpdates(h.eventsOf(sessionId)).at(-1)).toMatchObject({
      answeredBy: "machine",
      greetingEnded: true,
      greetingEndedBy: "silence",
      action: "voicemail_left",
    });
    await stream.close();
  });

  it("no result within timeoutMs: unknown, and the callee is greeted (never silence)", async () => {
    const placed = await place(h.baseUrl, PLIVO_ADMIN_TOKEN, { carrier: "plivo", to: "+15557654321" });
    const requestUuid = placed.json["callSid"] as string;
    const sessionId = placed.json["sessionId"] as string;
    const stream = await h.answerDialled(requestUuid);
    await stream.waitFor(() => stream.receivedAudioMs > 400);
    expect(spoken(h.eventsOf(sessionId))).toContain("assistant calling");
    expect(amdUpdates(h.eventsOf(sessionId)).at(-1)).toMatchObject({
      answeredBy: "unknown",
      fallback: "timeout",
      action: "greeted",
    });
    // Plivo's late result changes nothing.
    const callUuid = h.rest.calls.get(requestUuid)!;
    expect((await amd.answer(requestUuid, true, callUuid)).status).toBe(204);
    expect(h.rest.requests.filter((r) => r.method === "DELETE" && r.path.includes(callUuid))).toHaveLength(0);
    await stream.close();
  });
});

describe("amd: Vonage", () => {
  let h: VonageHarness;
  let amd: ReturnType<typeof vonageAmd>;
  beforeAll(async () => {
    h = await startVonage({ mode: "stt-tts", telephony: { greeting: GREETING } });
    amd = vonageAmd(h);
  });
  afterAll(() => h.close());

  it("requests Advanced Machine Detection; a person is greeted after the human event", async () => {
    const placed = await place(h.baseUrl, VONAGE_ADMIN, {
      to: "+447700900111",
      machineDetection: { policy: "voicemail", message: MESSAGE },
    });
    const uuid = placed.json["callSid"] as string;
    const sessionId = placed.json["sessionId"] as string;
    expect(amd.requested(uuid).mode).toBe("detect_message_end");
    const create = h.rest.requests.find((r) => r.uuid === uuid)!;
    const client = await h.connect(endpointOf(create.body["ncco"]).headers);
    expect((await amd.answer(uuid, "human")).status).toBe(204);
    await until(() => h.eventsOf(sessionId, "output.audio.started").length > 0);
    expect(spoken(h.eventsOf(sessionId))).toContain("assistant calling");
    expect((await amd.answer(uuid, "human", "beep_start")).status).toBe(400);
    await client.close();
  });

  it("greet at_once: a machine found mid-greeting cuts the assistant; the message follows Vonage's beep_start", async () => {
    const placed = await place(h.baseUrl, VONAGE_ADMIN, {
      to: "+447700900111",
      machineDetection: { policy: "voicemail", message: MESSAGE, greet: "at_once" },
    });
    const uuid = placed.json["callSid"] as string;
    const sessionId = placed.json["sessionId"] as string;
    const create = h.rest.requests.find((r) => r.uuid === uuid)!;
    // Played at 1x: with playback "immediate" the whole greeting could be heard before the machine result
    // arrives on a loaded machine, leaving nothing to cut (a 30 s timeout waiting for output.audio.cancelled).
    const client = await h.connect(endpointOf(create.body["ncco"]).headers, "realtime");
    await until(() => h.eventsOf(sessionId, "output.audio.started").length === 1);
    expect((await amd.answer(uuid, "machine")).status).toBe(204);
    await until(() => h.eventsOf(sessionId, "output.audio.cancelled").length === 1);
    expect(amdUpdates(h.eventsOf(sessionId)).at(-1)).toMatchObject({ action: "waiting_for_beep" });
    expect((await amd.answer(uuid, "machine", "beep_start")).status).toBe(204);
    await h.rest.waitFor(
      (r) => r.method === "PUT" && r.path === `/v1/calls/${uuid}` && r.body["action"] === "hangup",
    );
    expect(h.eventsOf(sessionId, "output.audio.started")).toHaveLength(2);
    expect(spoken(h.eventsOf(sessionId))).toContain("call us back");
    expect(amdUpdates(h.eventsOf(sessionId)).at(-1)).toMatchObject({
      answeredBy: "machine",
      carrierResult: "machine/beep_start",
      action: "voicemail_left",
    });
    await client.close();
  });

  it("detection refused by the carrier: the call is placed without it and goes on as unknown", async () => {
    h.rest.refuseAmd = true;
    const placed = await place(h.baseUrl, VONAGE_ADMIN, {
      to: "+447700900111",
      machineDetection: { policy: "hangup" },
    });
    h.rest.refuseAmd = false;
    expect(placed.status).toBe(201);
    const uuid = placed.json["callSid"] as string;
    const sessionId = placed.json["sessionId"] as string;
    const creates = h.rest.requests.filter((r) => r.method === "POST" && r.path === "/v1/calls").slice(-2);
    expect(creates[0]!.body["advanced_machine_detection"]).toBeDefined();
    expect(creates[1]!.body["advanced_machine_detection"]).toBeUndefined();
    expect(creates[1]!.uuid).toBe(uuid);
    const client = await h.connect(endpointOf(creates[1]!.body["ncco"]).headers);
    await until(() => h.eventsOf(sessionId, "output.audio.started").length > 0);
    expect(amdUpdates(h.eventsOf(sessionId)).at(-1)).toMatchObject({
      answeredBy: "unknown",
      fallback: "refused",
      action: "greeted",
    });
    await client.close();
  });
});

describe("amd: configuration", () => {
  it.each([
    [{ policy: "voicemail" }, /telephony\.amd\.message: the voicemail policy needs a message/],
    [{ policy: "ring" }, /telephony\.amd\.policy:/],
    [
      { numbers: { "+15550001111": { policy: "voicemail" } } },
      /telephony\.amd\.numbers\.\+15550001111\.message/,
    ],
    [{ numbers: { "555": { policy: "hangup" } } }, /telephony\.amd\.numbers/],
    [{ timeoutMs: 5 }, /telephony\.amd\.timeoutMs/],
  ])("%j is refused at start, naming the key", (amd, message) => {
    expect(() => validateConfig({ telephony: { amd } })).toThrow(message);
  });
});
