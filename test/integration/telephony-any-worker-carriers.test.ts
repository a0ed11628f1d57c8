/**
 * Every carrier's call may reach another worker with its stream than with its
 * webhook: two real worker processes on the shared Redis, configured with all
 * four carriers (webhook signatures checked with test credentials), behind a
 * front door that sends plain HTTP (the carrier's signed answer webhook) to
 * one and WebSocket upgrades (the media stream) to the other. For each
 * carrier the call is answered by the first worker, its stream is served by
 * the second (which verifies and spends the token the first signed), and
 * audio flows both ways on the local stt-tts engines: the greeting, the
 * caller's speech, the answer. The calls run concurrently on one pair of
 * workers.
 *
 * No carrier REST credentials are configured: an inbound call never calls
 * the carrier's API (only end_call, DTMF and transfers do), so no REST
 * stand-ins are needed and nothing can reach a real carrier.
 */
import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { computePlivoSignature } from "../../src/telephony/plivo/plivo-signature.js";
import { computeTwilioSignature } from "../../src/telephony/twilio/twilio-signature.js";
import { vonageWebhookAuthorization } from "../../src/telephony/vonage/vonage-signature.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { WorkerProcess } from "../support/cluster-workers.js";
import { eventually, within } from "../support/bounded-waits.js";
import { FrontDoor, hostPort } from "../support/front-door.js";
import { PLIVO_AUTH_TOKEN } from "../support/plivo-harness.js";
import { PlivoStreamClient } from "../support/plivo-stream-client.js";
import { ACCOUNT_SID, AUTH_TOKEN } from "../support/telephony-harness.js";
import { TELNYX_ACCOUNT } from "../support/telnyx-harness.js";
import { telnyxCallControlId, TelnyxStreamClient } from "../support/telnyx-stream-client.js";
import { TelnyxWebhookSigner } from "../support/telnyx-webhook-signer.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS, TwilioStreamClient } from "../support/twilio-stream-client.js";
import { endpointOf, SIGNATURE_SECRET } from "../support/vonage-harness.js";
import { loadSpeechPcm16k, VonageStreamClient } from "../support/vonage-stream-client.js";

const WAIT = 60_000;
const prefix = uniquePrefix("any-worker-carriers");
const telnyxSigner = new TelnyxWebhookSigner();
const lines: Line[] = [];
let webhookWorker: WorkerProcess;
let streamWorker: WorkerProcess;
let door: FrontDoor;
let publicUrl: string;
let wsUrl: string;

const speechUlaw = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silenceUlaw = (ms: number): Uint8Array => new Uint8Array(ms * 8).fill(0xff);
const speechPcm = loadSpeechPcm16k();
const silencePcm = (ms: number): Uint8Array => new Uint8Array(ms * 32);

/** One carrier's call as the test drives it: its stand-in stream client behind one shape. */
interface Line {
  readonly receivedAudioMs: number;
  /** Playback acknowledgements sent back (marks, checkpoints, notifies: the carrier played our audio). */
  readonly acknowledged: number;
  /** Frames of ours the carrier would refuse (Telnyx answers them with `error`). */
  readonly refused: readonly string[];
  waitFor(predicate: () => boolean): Promise<void>;
  /** 300 ms of silence, the recording, 1.5 s of silence: one caller turn. */
  speak(): Promise<void>;
  /** The caller hangs up, as the carrier signals it. */
  hangUp(): Promise<void>;
  close(): Promise<void>;
}

interface Answered {
  callId: string;
  /** The stream URL the answer document names. */
  streamUrl: string;
  line: Line;
}

const form = (params: Record<string, string>): string => new URLSearchParams(params).toString();

/** `<Parameter name value/>`s of a TwiML / TeXML answer. */
function parametersOf(xml: string): Record<string, string> {
  return Object.fromEntries(
    [...xml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]),
  );
}

async function text(res: Response): Promise<string> {
  const body = await res.text();
  if (res.status !== 200) throw new Error(`answer webhook answered ${res.status}: ${body}`);
  return body;
}

/** What each carrier does for an inbound call, through the front door: its signed answer webhook, then its stream. */
const CARRIERS: Record<string, () => Promise<Answered>> = {
  async twilio() {
    const callId = `CA${randomUUID().replace(/-/g, "")}`;
    const params = { CallSid: callId, AccountSid: ACCOUNT_SID, From: "+15550002222", To: "+15550001111" };
    const url = `${publicUrl}/telephony/twilio/voice`;
    const twiml = await text(
      await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "x-twilio-signature": computeTwilioSignature(AUTH_TOKEN, url, params),
        },
        body: form(params),
      }),
    );
    const streamUrl = /<Stream url="([^"]+)"/.exec(twiml)![1]!;
    const client = new TwilioStreamClient({
      url: streamUrl,
      callSid: callId,
      customParameters: parametersOf(twiml),
    });
    await client.connect();
    return {
      callId,
      streamUrl,
      line: {
        get receivedAudioMs() {
          return client.receivedAudioMs;
        },
        get acknowledged() {
          return client.marksEchoed.length;
        },
        refused: [],
        waitFor: (p) => client.waitFor(p),
        async speak() {
          await client.sendAudio(silenceUlaw(300), { pace: "fast" });
          await client.sendAudio(speechUlaw, { pace: "fast" });
          await client.sendAudio(silenceUlaw(1500), { pace: "fast" });
        },
        hangUp: () => client.stop(),
        close: () => client.close(),
      },
    };
  },

  async telnyx() {
    const callId = telnyxCallControlId();
    const body = form({
      AccountSid: TELNYX_ACCOUNT,
      CallSid: callId,
      From: "+15550002222",
      To: "+15550001111",
      Direction: "inbound",
      CallStatus: "ringing",
    });
    const texml = await text(
      await fetch(`${publicUrl}/telephony/telnyx/voice`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", ...telnyxSigner.headers(body) },
        body,
      }),
    );
    const streamUrl = /<Stream url="([^"]+)"/.exec(texml)![1]!;
    const client = new TelnyxStreamClient({
      url: streamUrl,
      callControlId: callId,
      customParameters: parametersOf(texml),
    });
    await client.connect();
    // Telnyx may deliver media out of order: neighbours swapped, chunk numbers telling the truth.
    const send = (ulaw: Uint8Array) => client.sendAudio(ulaw, { pace: "fast", order: "swapped" });
    return {
      callId,
      streamUrl,
      line: {
        get receivedAudioMs() {
          return client.receivedAudioMs;
        },
        get acknowledged() {
          return client.marksEchoed.length;
        },
        get refused() {
          return client.refused;
        },
        waitFor: (p) => client.waitFor(p),
        async speak() {
          await send(silenceUlaw(300));
          await send(speechUlaw);
          await send(silenceUlaw(1500));
        },
        hangUp: () => client.stop(),
        close: () => client.close(),
      },
    };
  },

  async plivo() {
    const callId = randomUUID();
    const params = {
      CallUUID: callId,
      From: "15557654321",
      To: "15550001111",
      Direction: "inbound",
      CallStatus: "in-progress",
    };
    const path = "/telephony/plivo/answer";
    const nonce = String(Math.floor(Math.random() * 1e18));
    const xml = await text(
      await fetch(`${publicUrl}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "x-plivo-signature-v3": computePlivoSignature(
            PLIVO_AUTH_TOKEN,
            nonce,
            "POST",
            `${publicUrl}${path}`,
            params,
          ),
          "x-plivo-signature-v3-nonce": nonce,
        },
        body: form(params),
      }),
    );
    const streamUrl = /<Stream [^>]*>([^<]+)<\/Stream>/.exec(xml)![1]!;
    // Plivo signs the stream's upgrade too: over the public URL, the front door's.
    const client = new PlivoStreamClient({
      url: streamUrl,
      signedUrl: `${publicUrl}/telephony/plivo/stream`,
      authToken: PLIVO_AUTH_TOKEN,
      extraHeaders: /extraHeaders="([^"]*)"/.exec(xml)![1]!,
      callId,
      playback: "immediate",
    });
    await client.connect();
    return {
      callId,
      streamUrl,
      line: {
        get receivedAudioMs() {
          return client.receivedAudioMs;
        },
        get acknowledged() {
          return client.checkpointsPlayed.length;
        },
        refused: [],
        waitFor: (p) => client.waitFor(p),
        async speak() {
          await client.sendAudio(silenceUlaw(300), { pace: "fast" });
          await client.sendAudio(speechUlaw, { pace: "fast" });
          await client.sendAudio(silenceUlaw(1500), { pace: "fast" });
        },
        hangUp: () => client.hangUp(),
        close: () => client.close(),
      },
    };
  },

  async vonage() {
    const callId = randomUUID();
    const query = form({
      to: "447700900000",
      from: "447700900123",
      uuid: callId,
      conversation_uuid: `CON-${randomUUID()}`,
    });
    const path = `/telephony/vonage/answer?${query}`;
    const authorization = vonageWebhookAuthorization(SIGNATURE_SECRET, {
      method: "GET",
      url: `${publicUrl}${path}`,
      rawBody: "",
    });
    const ncco = JSON.parse(await text(await fetch(`${publicUrl}${path}`, { headers: { authorization } })));
    const endpoint = endpointOf(ncco);
    const client = new VonageStreamClient({
      url: endpoint.uri,
      headers: endpoint.headers,
      playback: "immediate",
    });
    await client.connect();
    return {
      callId,
      streamUrl: endpoint.uri,
      line: {
        get receivedAudioMs() {
          return client.receivedAudioMs;
        },
        get acknowledged() {
          return client.notifiesEchoed.length;
        },
        refused: [],
        waitFor: (p) => client.waitFor(p, WAIT),
        async speak() {
          await client.sendAudio(silencePcm(300), { pace: "fast" });
          await client.sendAudio(speechPcm, { pace: "fast" });
          await client.sendAudio(silencePcm(1500), { pace: "fast" });
        },
        hangUp: () => client.hangUp(),
        close: () => client.close(),
      },
    };
  },
};

type SessionEvent = { type: string; payload?: { role?: string; text?: string } };

/** The events a worker logged for the call's session (its session log names the call), [] if it has none. */
function callEvents(worker: WorkerProcess, callId: string): SessionEvent[] {
  const dir = join(worker.dataDir, "sessions");
  if (!existsSync(dir)) return [];
  for (const name of readdirSync(dir)) {
    const text = readFileSync(join(dir, name), "utf8");
    if (text.includes(callId))
      return text
        .split("\n")
        .filter((l) => l.length > 0)
        .map((l) => JSON.parse(l) as SessionEvent);
  }
  return [];
}

/** Waits until the stream worker logged `count` spoken outputs of the call (greeting first, then answers). */
async function spoken(callId: string, count: number, what: string): Promise<SessionEvent[]> {
  return eventually(
    WAIT,
    async () => {
      const events = callEvents(streamWorker, callId);
      if (events.filter((e) => e.type === "output.audio.done").length < count) throw new Error("not yet");
      return events;
    },
    what,
  );
}

beforeAll(async () => {
  door = new FrontDoor({
    http: () => hostPort(webhookWorker.httpUrl),
    upgrade: () => hostPort(streamWorker.httpUrl),
  });
  publicUrl = await door.listen();
  wsUrl = publicUrl.replace(/^http/, "ws");
  const config = {
    server: { publicUrl },
    telephony: {
      twilio: { authToken: AUTH_TOKEN },
      telnyx: { publicKey: telnyxSigner.publicKey },
      plivo: { authToken: PLIVO_AUTH_TOKEN },
      vonage: { signatureSecret: SIGNATURE_SECRET },
      defaultMode: "stt-tts",
      greeting: "Hello, you reached the test line.",
      greetingProtectMs: 0,
    },
  };
  const common = { redisUrl: SHARED_REDIS_URL, keyPrefix: prefix, config };
  [webhookWorker, streamWorker] = (await WorkerProcess.startAll([
    { ...common, workerId: "webhooks" },
    { ...common, workerId: "streams" },
  ])) as [WorkerProcess, WorkerProcess];
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(lines.map((l) => l.close()));
  await door?.close();
  await Promise.all([webhookWorker, streamWorker].filter(Boolean).map((w) => w.stop()));
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

describe("telephony: every carrier's stream may land on any worker", () => {
  it.concurrent.for(Object.keys(CARRIERS))(
    "%s: the signed webhook answered by one worker, the stream served by the other: audio both ways",
    { timeout: 3 * WAIT },
    async (carrier, { expect }) => {
      const { callId, streamUrl, line } = await CARRIERS[carrier]!();
      lines.push(line);
      expect(streamUrl).toBe(`${wsUrl}/telephony/${carrier}/stream`);
      expect(
        webhookWorker.lines.some(
          (l) =>
            l.msg === "voice webhook: connecting call to stream" &&
            l.carrier === carrier &&
            l.callId === callId,
        ),
      ).toBe(true);
      // The greeting is the stream worker's: it created the call's session, and spoke it to the end.
      await within(
        WAIT,
        line.waitFor(() => line.receivedAudioMs >= 500),
        `${carrier}: greeting audio`,
      );
      await spoken(callId, 1, `${carrier}: the greeting spoken`);
      const started = await within(
        WAIT,
        streamWorker.next(
          (l) => l.msg === "media stream: call started" && l.carrier === carrier && l.callId === callId,
        ),
        `${carrier}: the stream worker started the call`,
      );
      expect(started.streamId).toEqual(expect.any(String));
      expect(
        webhookWorker.lines.some((l) => l.msg === "media stream: call started" && l.carrier === carrier),
      ).toBe(false);
      // The caller's speech reached the stream worker's recognizer and was answered: more audio than the greeting.
      const greetingMs = line.receivedAudioMs;
      await line.speak();
      const events = await spoken(callId, 2, `${carrier}: the answer spoken`);
      const heard = events.find((e) => e.type === "transcript.done" && e.payload?.role === "user");
      expect(heard?.payload?.text?.length).toBeGreaterThan(0);
      await within(
        WAIT,
        line.waitFor(() => line.receivedAudioMs > greetingMs + 300),
        `${carrier}: the answer's audio`,
      );
      expect(line.acknowledged).toBeGreaterThan(0);
      expect(line.refused).toEqual([]);
      expect(callEvents(webhookWorker, callId)).toEqual([]);
      await line.hangUp();
    },
  );
});
