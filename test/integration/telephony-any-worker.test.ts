/**
 * A call's stream may reach another worker than its webhook: two real worker
 * processes on the shared Redis behind a front door that sends plain HTTP
 * (the carrier's voice webhook) to one and WebSocket upgrades (the media
 * stream) to the other. The stream token the first worker signed is verified
 * and spent by the second, which creates and serves the call: audio both
 * ways on the local engines. A token is single-use across the cluster, and a
 * reconnect that lands on a worker other than the call's is refused cleanly
 * while the call ends on its own worker when its grace runs out.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { computeTwilioSignature } from "../../src/telephony/twilio/twilio-signature.js";
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from "../support/cluster-redis.js";
import { WorkerProcess } from "../support/cluster-workers.js";
import { eventually, within } from "../support/bounded-waits.js";
import { FakeTwilioRestServer } from "../support/fake-twilio-rest-server.js";
import { FrontDoor, hostPort } from "../support/front-door.js";
import { ACCOUNT_SID, AUTH_TOKEN, twilioConfig } from "../support/telephony-harness.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS, TwilioStreamClient } from "../support/twilio-stream-client.js";

const WAIT = 30_000;
const prefix = uniquePrefix("any-worker");
const rest = new FakeTwilioRestServer(ACCOUNT_SID, AUTH_TOKEN);
const clients: TwilioStreamClient[] = [];
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
      twilio: twilioConfig(rest.url),
      defaultMode: "stt-tts",
      greeting: "Hello, you reached the test line.",
      greetingProtectMs: 0,
      reconnectGraceMs: 1500,
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

/** The close reason in the worker's session log of the call, or undefined (no such session, or not closed yet). */
function closedReason(worker: WorkerProcess, callSid: string): string | undefined {
  const dir = join(worker.dataDir, "sessions");
  if (!existsSync(dir)) return undefined;
  for (const name of readdirSync(dir)) {
    const text = readFileSync(join(dir, name), "utf8");
    if (!text.includes(callSid)) continue;
    for (const line of text.split("\n")) {
      if (!line.includes('"session.closed"')) continue;
      const event = JSON.parse(line) as { payload?: { reason?: string } };
      return event.payload?.reason;
    }
  }
  return undefined;
}

let calls = 0;
/** What Twilio does for an inbound call, through the front door: the signed webhook, then the stream. */
async function answer(): Promise<{ callSid: string; streamUrl: string; parameters: Record<string, string> }> {
  const callSid = `CA${(++calls).toString(16).padStart(32, "0")}`;
  const params = { CallSid: callSid, AccountSid: ACCOUNT_SID, From: "+15550002222", To: "+15550001111" };
  const url = `${publicUrl}/telephony/twilio/voice`;
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "x-twilio-signature": computeTwilioSignature(AUTH_TOKEN, url, params),
    },
    body: new URLSearchParams(params).toString(),
  });
  expect(res.status).toBe(200);
  const twiml = await res.text();
  const streamUrl = /<Stream url="([^"]+)"/.exec(twiml)![1]!;
  const parameters = Object.fromEntries(
    [...twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]),
  );
  return { callSid, streamUrl, parameters };
}

async function stream(
  url: string,
  callSid: string,
  parameters: Record<string, string>,
): Promise<TwilioStreamClient> {
  const client = new TwilioStreamClient({ url, callSid, customParameters: parameters });
  clients.push(client);
  await client.connect();
  return client;
}

describe("telephony: a stream may land on any worker", () => {
  it("the webhook answered by one worker, the stream served by the other: audio both ways", async () => {
    const { callSid, streamUrl, parameters } = await answer();
    expect(streamUrl).toBe(`${publicUrl.replace(/^http/, "ws")}/telephony/twilio/stream`);
    const client = await stream(streamUrl, callSid, parameters);
    // The greeting is the stream worker's: it created the call's session.
    await within(
      WAIT,
      client.waitFor(() => client.receivedAudioMs >= 500),
      "greeting audio",
    );
    await client.sendAudio(silence(300), { pace: "fast" });
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(silence(1500), { pace: "fast" });
    const heard = await within(
      WAIT,
      streamWorker.next((l) => l.msg === "media stream: call started" && l.callId === callSid),
      "the stream worker started the call",
    );
    expect(heard.carrier).toBe("twilio");
    expect(
      webhookWorker.lines.some(
        (l) => l.msg === "voice webhook: connecting call to stream" && l.callId === callSid,
      ),
    ).toBe(true);
    expect(webhookWorker.lines.some((l) => l.msg === "media stream: call started")).toBe(false);
    // The caller's speech reached the stream worker's recognizer and was answered: more audio than the greeting.
    const greetingMs = client.receivedAudioMs;
    await within(
      WAIT,
      client.waitFor(() => client.receivedAudioMs > greetingMs + 300),
      "the answer's audio",
    );
    expect(door.relayed.upgrade).toBeGreaterThanOrEqual(1);
    await client.stop();
  });

  it("a token is spent once across the cluster: its replay is refused on either worker", async () => {
    const { callSid, streamUrl, parameters } = await answer();
    const first = await stream(streamUrl, callSid, parameters);
    await within(
      WAIT,
      first.waitFor(() => first.receivedAudioMs > 0),
      "first stream's audio",
    );
    const direct = `${webhookWorker.httpUrl.replace(/^http/, "ws")}/telephony/twilio/stream`;
    const replayHere = await stream(direct, callSid, parameters);
    await within(
      WAIT,
      replayHere.waitFor(() => replayHere.closeCode !== undefined),
      "replay refused",
    );
    expect(replayHere.closeCode).toBe(1008);
    expect(replayHere.closeReason).toBe("stream token reused");
    // Change the token's last hex digit to another one: a fixed "00" ending equals the real token 1 time in 256.
    const token = parameters.token!;
    const lastDigit = token.slice(-1);
    const forged = await stream(streamUrl, callSid, {
      ...parameters,
      token: `${token.slice(0, -1)}${lastDigit === "0" ? "1" : "0"}`,
    });
    await within(
      WAIT,
      forged.waitFor(() => forged.closeCode !== undefined),
      "forged refused",
    );
    expect(forged.closeCode).toBe(1008);
    expect(forged.closeReason).toBe("stream token unknown");
    expect(first.closeCode).toBeUndefined();
    await first.stop();
  });

  it("a reconnect that reaches another worker is refused, and the call ends on its own worker after the grace", async () => {
    const { callSid, streamUrl, parameters } = await answer();
    const first = await stream(streamUrl, callSid, parameters);
    await within(
      WAIT,
      first.waitFor(() => first.receivedAudioMs > 0),
      "first stream's audio",
    );
    await first.close(); // dropped without `stop`: the call waits for the carrier's reconnect
    const elsewhere = `${webhookWorker.httpUrl.replace(/^http/, "ws")}/telephony/twilio/stream`;
    const reconnect = await stream(elsewhere, callSid, parameters);
    await within(
      WAIT,
      reconnect.waitFor(() => reconnect.closeCode !== undefined),
      "reconnect refused",
    );
    expect(reconnect.closeCode).toBe(1008);
    expect(reconnect.closeReason).toBe("stream token reused");
    // The call's own worker logs the drop, holds the session for the grace, then closes it: connection_lost.
    await eventually(
      WAIT,
      async () => closedReason(streamWorker, callSid) ?? Promise.reject(new Error("not closed yet")),
      "the call closed on its worker",
    );
    expect(closedReason(streamWorker, callSid)).toBe("connection_lost");
    expect(closedReason(webhookWorker, callSid)).toBeUndefined();
  });
});
