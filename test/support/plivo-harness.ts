/**
 * The whole server (createApp) on loopback with Plivo configured against
 * local peers: the fake OpenAI Realtime server for realtime calls, the local
 * engines for stt-tts calls, and a fake Plivo REST API. `dial()` does what
 * Plivo does for an inbound call: the V3-signed answer webhook, then the
 * signed stream WebSocket with the XML's extraHeaders; `answerDialled()` what
 * it does when a call placed through its REST API is answered (it fetches
 * the dial's answer_url, then opens the stream).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type App } from "../../src/app.js";
import { validateConfig } from "../../src/config/load-config.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { computePlivoSignature } from "../../src/telephony/plivo/plivo-signature.js";
import { capturedLogger, realtimeStandIn } from "./harness-parts.js";
import type { FakeOpenAiRealtimeServer } from "./fake-openai-realtime-server.js";
import { type FakeOpenAiRealtimeServerOptions } from "./fake-openai-realtime-server.js";
import { FakePlivoRestServer } from "./fake-plivo-rest-server.js";
import { PlivoStreamClient, type PlivoStreamClientOptions } from "./plivo-stream-client.js";

export const PLIVO_AUTH_ID = "MAPLIVOTESTACCOUNT01";
export const PLIVO_AUTH_TOKEN = "plivo-test-auth-token-0001";
export const PLIVO_ADMIN_TOKEN = "plivo-admin-token-0000000001";

export interface PlivoHarnessSetup {
  mode: "realtime" | "stt-tts";
  telephony?: Record<string, unknown>;
  realtime?: FakeOpenAiRealtimeServerOptions;
  /** More top-level config (e.g. `redis`: two servers on one Redis). */
  config?: Record<string, unknown>;
}

export interface PlivoHarness {
  app: App;
  baseUrl: string;
  publicUrl: string;
  port: number;
  realtime: FakeOpenAiRealtimeServer | undefined;
  rest: FakePlivoRestServer;
  events: TalkEvent[];
  logs: Record<string, unknown>[];
  /** POSTs form `params` to `pathAndQuery`, V3-signed over the public URL (signature null: unsigned; a string: that one). */
  post(pathAndQuery: string, params: Record<string, string>, signature?: string | null): Promise<Response>;
  /** An inbound call: answer webhook, then the stream (connected, session ready). */
  dial(options?: {
    callId?: string;
    from?: string;
    to?: string;
    /** The answer URL's path and query (a number's webhook may pin `?mode=`). Default /telephony/plivo/answer. */
    path?: string;
    playback?: PlivoStreamClientOptions["playback"];
  }): Promise<PlivoStreamClient>;
  /** The stream client for an answer document (not connected). */
  streamFor(xml: string, callId: string, options?: Partial<PlivoStreamClientOptions>): PlivoStreamClient;
  /** Plivo answers a call placed through the REST API: fetches its answer_url and opens the stream. */
  answerDialled(
    requestUuid: string,
    options?: { playback?: PlivoStreamClientOptions["playback"] },
  ): Promise<PlivoStreamClient>;
  eventsOf(sessionId: string, type?: string): TalkEvent[];
  sessionOf(callSid: string): string | undefined;
  close(): Promise<void>;
}

export async function startPlivo(setup: PlivoHarnessSetup): Promise<PlivoHarness> {
  const { realtime, talk } = await realtimeStandIn(setup.mode, setup.realtime);
  const rest = new FakePlivoRestServer(PLIVO_AUTH_ID, PLIVO_AUTH_TOKEN);
  await rest.start();
  const { logger, logs } = capturedLogger();
  // What Plivo signs is the public URL; the server is reached on loopback.
  const publicUrl = "https://talkgate.test";
  const { config, ...loaded } = validateConfig({
    server: { host: "127.0.0.1", port: 0, publicUrl },
    auth: { tokens: [{ name: "admin", token: PLIVO_ADMIN_TOKEN, scopes: ["admin"] }] },
    dataDir: mkdtempSync(join(tmpdir(), "talkgate-plivo-")),
    log: { level: "info" },
    talk,
    telephony: {
      plivo: {
        authId: PLIVO_AUTH_ID,
        authToken: PLIVO_AUTH_TOKEN,
        apiBaseUrl: rest.url,
        defaultFrom: "+15550001111",
      },
      defaultCarrier: "plivo",
      defaultMode: setup.mode,
      ...setup.telephony,
    },
    ...setup.config,
  });
  const app = await createApp({ config, ...loaded }, { logger });
  const { port } = await app.listen({ port: 0 });
  const baseUrl = `http://127.0.0.1:${port}`;
  const events: TalkEvent[] = [];
  app.runtime.subscribeAll((e) => events.push(e));
  const clients: PlivoStreamClient[] = [];

  const post = async (pathAndQuery: string, params: Record<string, string>, signature?: string | null) => {
    const nonce = String(Math.floor(Math.random() * 1e18));
    const sig =
      signature === undefined
        ? computePlivoSignature(PLIVO_AUTH_TOKEN, nonce, "POST", `${publicUrl}${pathAndQuery}`, params)
        : signature;
    return fetch(`${baseUrl}${pathAndQuery}`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        ...(sig !== null ? { "x-plivo-signature-v3": sig, "x-plivo-signature-v3-nonce": nonce } : {}),
      },
      body: new URLSearchParams(params),
    });
  };

  const sessionOf = (callSid: string) =>
    app.runtime.listSessions().find((s) => s.metadata["callSid"] === callSid)?.id;

  const streamFor = (xml: string, callId: string, options: Partial<PlivoStreamClientOptions> = {}) => {
    const stream = /<Stream [^>]*>([^<]+)<\/Stream>/.exec(xml)?.[1];
    if (stream !== `wss://talkgate.test/telephony/plivo/stream`)
      throw new Error(`unexpected stream URL in ${xml}`);
    const client = new PlivoStreamClient({
      url: `ws://127.0.0.1:${port}/telephony/plivo/stream`,
      signedUrl: `${publicUrl}/telephony/plivo/stream`,
      authToken: PLIVO_AUTH_TOKEN,
      extraHeaders: /extraHeaders="([^"]*)"/.exec(xml)?.[1] ?? "",
      callId,
      ...options,
    });
    clients.push(client);
    return client;
  };

  /** Connects and waits until the call's session is ready (realtime: the provider session is configured). */
  const ready = async (client: PlivoStreamClient, callSid: string) => {
    const updates = realtime?.received.filter((e) => e.type === "session.update").length ?? 0;
    await client.connect();
    if (realtime)
      await realtime.waitFor(
        (e) =>
          e.type === "session.update" &&
          realtime.received.filter((x) => x.type === "session.update").length > updates,
      );
    while (!sessionOf(callSid)) await new Promise((r) => setTimeout(r, 5));
  };

  return {
    app,
    baseUrl,
    publicUrl,
    port,
    realtime,
    rest,
    events,
    logs,
    post,
    streamFor,
    sessionOf,
    async dial(options = {}) {
      const callId = options.callId ?? randomUUID();
      const res = await post(options.path ?? "/telephony/plivo/answer", {
        CallUUID: callId,
        From: options.from ?? "15557654321",
        To: options.to ?? "15550001111",
        Direction: "inbound",
        CallStatus: "in-progress",
      });
      if (res.status !== 200) throw new Error(`answer webhook answered ${res.status}`);
      const client = streamFor(await res.text(), callId, { playback: options.playback ?? "immediate" });
      await ready(client, callId);
      return client;
    },
    async answerDialled(requestUuid, options = {}) {
      const dial = rest.requests.find((r) => r.requestUuid === requestUuid);
      if (!dial) throw new Error(`no dial ${requestUuid}`);
      const answerUrl = String(dial.body["answer_url"]);
      if (!answerUrl.startsWith(publicUrl))
        throw new Error(`answer_url ${answerUrl} is not under ${publicUrl}`);
      const callUuid = rest.answer(requestUuid);
      const res = await post(answerUrl.slice(publicUrl.length), {
        CallUUID: callUuid,
        RequestUUID: requestUuid,
        From: String(dial.body["from"]),
        To: String(dial.body["to"]),
        Direction: "outbound",
        CallStatus: "in-progress",
      });
      if (res.status !== 200) throw new Error(`answer_url answered ${res.status}`);
      const client = streamFor(await res.text(), callUuid, { playback: options.playback ?? "immediate" });
      await ready(client, requestUuid);
      return client;
    },
    eventsOf(sessionId, type) {
      return events.filter((e) => e.sessionId === sessionId && (type === undefined || e.type === type));
    },
    async close() {
      await Promise.allSettled(clients.map((c) => c.close()));
      await app.close();
      await realtime?.close();
      await rest.close();
    },
  };
}
