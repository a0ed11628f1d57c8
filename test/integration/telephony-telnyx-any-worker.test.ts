/**
 * A Telnyx call whose media stream reaches another worker than its webhook:
 * two real worker processes on the shared Redis behind a front door that
 * sends the signed TeXML webhook to one and the stream's WebSocket upgrade
 * to the other. The second verifies and spends the token the first signed,
 * creates the call and serves it: audio both ways on the local engines.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { within, WorkerProcess } from "../support/cluster-workers.js";
import { FakeTelnyxRestServer } from "../support/fake-telnyx-rest-server.js";
import { FrontDoor, hostPort } from "../support/front-door.js";
import { TELNYX_ACCOUNT, TELNYX_API_KEY, TELNYX_CONNECTION_ID } from "../support/telnyx-harness.js";
import { telnyxCallControlId, TelnyxStreamClient } from "../support/telnyx-stream-client.js";
import { TelnyxWebhookSigner } from "../support/telnyx-webhook-signer.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";

const WAIT = 30_000;
const prefix = uniquePrefix("telnyx-any-worker");
const rest = new FakeTelnyxRestServer(TELNYX_API_KEY, TELNYX_CONNECTION_ID);
const signer = new TelnyxWebhookSigner();
const clients: TelnyxStreamClient[] = [];
let webhookWorker: WorkerProcess;
let streamWorker: WorkerProcess;
let door: FrontDoor;
let publicUrl: string;

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number): Uint8Array => new Uint8Array(ms * 8).fill(0xff);

beforeAll(async () => {
  await rest.start();
  door = new FrontDoor({
    http: () => hostPort(webhookWorker.httpUrl),
    upgrade: () => hostPort(streamWorker.httpUrl),
  });
  publicUrl = await door.listen();
  const config = {
    server: { publicUrl },
    telephony: {
      telnyx: {
        publicKey: signer.publicKey,
        apiKey: TELNYX_API_KEY,
        connectionId: TELNYX_CONNECTION_ID,
        apiBaseUrl: rest.url,
      },
      defaultMode: "stt-tts",
      greeting: "Hello, you reached the test line.",
      greetingProtectMs: 0,
    },
  };
  const common = {
    redisUrl: SHARED_REDIS_URL,
    keyPrefix: prefix,
    outboundCalls: "telephony" as const,
    config,
  };
  [webhookWorker, streamWorker] = (await WorkerProcess.startAll([
    { ...common, workerId: "webhooks" },
    { ...common, workerId: "streams" },
  ])) as [WorkerProcess, WorkerProcess];
}, 60_000);

afterAll(async () => {
  await Promise.allSettled(clients.map((c) => c.close()));
  await door?.close();
  await Promise.all([webhookWorker, streamWorker].filter(Boolean).map((w) => w.stop()));
  await rest.close();
  await deleteKeys(SHARED_REDIS_URL, prefix);
});

describe("telnyx: a stream may land on any worker", () => {
  it("the TeXML webhook answered by one worker, the stream served by the other: audio both ways", async () => {
    const callControlId = telnyxCallControlId();
    const body = new URLSearchParams({
      AccountSid: TELNYX_ACCOUNT,
      CallSid: callControlId,
      From: "+15550002222",
      To: "+15550001111",
      Direction: "inbound",
      CallStatus: "ringing",
    }).toString();
    const res = await fetch(`${publicUrl}/telephony/telnyx/voice`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...signer.headers(body) },
      body,
    });
    expect(res.status).toBe(200);
    const texml = await res.text();
    const url = /<Stream url="([^"]+)"/.exec(texml)![1]!;
    expect(url).toBe(`${publicUrl.replace(/^http/, "ws")}/telephony/telnyx/stream`);
    const parameters = Object.fromEntries(
      [...texml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]),
    );
    const client = new TelnyxStreamClient({ url, callControlId, customParameters: parameters });
    clients.push(client);
    await client.connect();
    await within(
      WAIT,
      client.waitFor(() => client.receivedAudioMs >= 500),
      "greeting audio",
    );
    await client.sendAudio(silence(300), { pace: "fast", order: "swapped" });
    await client.sendAudio(speech, { pace: "fast", order: "swapped" });
    await client.sendAudio(silence(1500), { pace: "fast", order: "swapped" });
    const started = await within(
      WAIT,
      streamWorker.next((l) => l.msg === "media stream: call started" && l.callId === callControlId),
      "the stream worker started the call",
    );
    expect(started.carrier).toBe("telnyx");
    expect(webhookWorker.lines.some((l) => l.msg === "media stream: call started")).toBe(false);
    const greetingMs = client.receivedAudioMs;
    await within(
      WAIT,
      client.waitFor(() => client.receivedAudioMs > greetingMs + 300),
      "the answer's audio",
    );
    expect(client.marksEchoed.length).toBeGreaterThan(0);
    expect(client.refused).toEqual([]);
    await client.stop();
  });
});
