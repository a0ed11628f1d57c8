/**
 * The whole server (createApp) on loopback with Vonage configured against
 * local peers: the fake OpenAI Realtime server for realtime calls, the local
 * engines for stt-tts calls, and a fake Vonage Voice API. `dial()` does what
 * Vonage does for an inbound call: the signed answer webhook (GET with the
 * call in the query), then the WebSocket the NCCO names, with its headers.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type App } from "../../src/app.js";
import { validateConfig } from "../../src/config/load-config.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { vonageWebhookAuthorization } from "../../src/telephony/vonage/vonage-signature.js";
import { capturedLogger, realtimeStandIn } from "./harness-parts.js";
import type { FakeOpenAiRealtimeServer } from "./fake-openai-realtime-server.js";
import { type FakeOpenAiRealtimeServerOptions } from "./fake-openai-realtime-server.js";
import { FakeVonageRestServer, vonageApplicationKeys } from "./fake-vonage-rest-server.js";
import { VonageStreamClient, type VonageStreamClientOptions } from "./vonage-stream-client.js";

export const APPLICATION_ID = "aaaaaaaa-bbbb-cccc-dddd-0123456789ab";
export const SIGNATURE_SECRET = "vonage-test-signature-secret-0001";
export const ADMIN_TOKEN = "vonage-admin-token-0000000000001";
export { REALTIME_KEY } from "./harness-parts.js";
const KEYS = vonageApplicationKeys();

export interface VonageHarnessSetup {
  mode: "realtime" | "stt-tts";
  telephony?: Record<string, unknown>;
  realtime?: FakeOpenAiRealtimeServerOptions;
  /** More top-level config (e.g. `redis` for a cluster of workers). */
  config?: Record<string, unknown>;
}

export interface NccoEndpoint {
  type: string;
  uri: string;
  "content-type": string;
  headers: Record<string, string>;
}

export interface VonageCall {
  uuid: string;
  client: VonageStreamClient;
}

export interface VonageHarness {
  app: App;
  baseUrl: string;
  publicUrl: string;
  realtime: FakeOpenAiRealtimeServer | undefined;
  rest: FakeVonageRestServer;
  port: number;
  events: TalkEvent[];
  logs: Record<string, unknown>[];
  streamUrl: string;
  /** The answer webhook as Vonage calls it; `authorization: null` sends none, a string sends that one. */
  answer(
    query: Record<string, string>,
    options?: { method?: "GET" | "POST"; authorization?: string | null },
  ): Promise<Response>;
  /** A signed event webhook (POST JSON) to `path` (default the events route). */
  event(
    body: Record<string, unknown>,
    options?: { path?: string; authorization?: string | null },
  ): Promise<Response>;
  /** An inbound call: webhook, then the stream socket with the NCCO's headers. */
  dial(options?: {
    from?: string;
    to?: string;
    playback?: VonageStreamClientOptions["playback"];
  }): Promise<VonageCall>;
  /** A stream socket of our own (tests that forge or replay headers). */
  connect(
    headers: Record<string, unknown>,
    playback?: VonageStreamClientOptions["playback"],
  ): Promise<VonageStreamClient>;
  sessionOf(uuid: string): string | undefined;
  eventsOf(sessionId: string, type?: string): TalkEvent[];
  close(): Promise<void>;
}

/** The websocket endpoint of an NCCO answer. */
export function endpointOf(ncco: unknown): NccoEndpoint {
  const action = (ncco as Array<{ action: string; endpoint: NccoEndpoint[] }>)[0]!;
  if (action.action !== "connect") throw new Error(`NCCO action ${action.action}`);
  return action.endpoint[0]!;
}

export async function startVonage(setup: VonageHarnessSetup): Promise<VonageHarness> {
  const { realtime, talk } = await realtimeStandIn(setup.mode, setup.realtime);
  const rest = new FakeVonageRestServer(APPLICATION_ID, KEYS.publicKey);
  await rest.start();
  const { logger, logs } = capturedLogger();
  // The public URL is what Vonage's payload hash of a GET covers (its query); a fixed name, as in the Twilio harness.
  const publicUrl = "http://talkgate.test";
  const { config, ...loaded } = validateConfig({
    server: { host: "127.0.0.1", port: 0, publicUrl },
    auth: { tokens: [{ name: "admin", token: ADMIN_TOKEN, scopes: ["admin"] }] },
    dataDir: mkdtempSync(join(tmpdir(), "talkgate-vonage-")),
    log: { level: "info" },
    talk,
    telephony: {
      vonage: {
        applicationId: APPLICATION_ID,
        privateKey: KEYS.privateKeyPem,
        signatureSecret: SIGNATURE_SECRET,
        apiBaseUrl: rest.url,
        defaultFrom: "+447700900000",
      },
      defaultCarrier: "vonage",
      defaultMode: setup.mode,
      ...setup.telephony,
    },
    ...setup.config,
  });
  const app = await createApp({ config, ...loaded }, { logger });
  const { port } = await app.listen({ port: 0 });
  const baseUrl = `http://127.0.0.1:${port}`;
  const streamUrl = `ws://127.0.0.1:${port}/telephony/vonage/stream`;
  const events: TalkEvent[] = [];
  app.runtime.subscribeAll((e) => events.push(e));
  const clients: VonageStreamClient[] = [];

  const sessionOf = (uuid: string): string | undefined =>
    app.runtime.listSessions().find((s) => s.metadata["callSid"] === uuid)?.id;

  const answer: VonageHarness["answer"] = async (query, options = {}) => {
    const method = options.method ?? "GET";
    const search = new URLSearchParams(query).toString();
    const path = method === "GET" ? `/telephony/vonage/answer?${search}` : "/telephony/vonage/answer";
    const body = method === "POST" ? JSON.stringify(query) : "";
    const authorization =
      options.authorization === undefined
        ? vonageWebhookAuthorization(SIGNATURE_SECRET, { method, url: `${publicUrl}${path}`, rawBody: body })
        : options.authorization;
    return fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(method === "POST" ? { "content-type": "application/json" } : {}),
        ...(authorization !== null ? { authorization } : {}),
      },
      ...(method === "POST" ? { body } : {}),
    });
  };

  const event: VonageHarness["event"] = async (body, options = {}) => {
    const path = options.path ?? "/telephony/vonage/events";
    const raw = JSON.stringify(body);
    const authorization =
      options.authorization === undefined
        ? vonageWebhookAuthorization(SIGNATURE_SECRET, {
            method: "POST",
            url: `${publicUrl}${path}`,
            rawBody: raw,
          })
        : options.authorization;
    return fetch(`${baseUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...(authorization !== null ? { authorization } : {}) },
      body: raw,
    });
  };

  const connect: VonageHarness["connect"] = async (headers, playback = "immediate") => {
    const client = new VonageStreamClient({ url: streamUrl, headers, playback });
    clients.push(client);
    await client.connect();
    return client;
  };

  return {
    app,
    baseUrl,
    publicUrl,
    realtime,
    rest,
    port,
    events,
    logs,
    streamUrl,
    answer,
    event,
    connect,
    sessionOf,
    async dial(options = {}) {
      const uuid = crypto.randomUUID();
      rest.knowCall(uuid);
      const res = await answer({
        to: options.to ?? "447700900000",
        from: options.from ?? "447700900123",
        uuid,
        conversation_uuid: `CON-${crypto.randomUUID()}`,
      });
      if (res.status !== 200) throw new Error(`answer webhook answered ${res.status}`);
      const endpoint = endpointOf(await res.json());
      const updates = realtime?.received.filter((e) => e.type === "session.update").length ?? 0;
      const client = await connect(endpoint.headers, options.playback ?? "immediate");
      if (realtime)
        await realtime.waitFor(
          (e) =>
            e.type === "session.update" &&
            realtime.received.filter((x) => x.type === "session.update").length > updates,
        );
      while (!sessionOf(uuid)) await new Promise((r) => setTimeout(r, 5));
      return { uuid, client };
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

export async function waitUntil(predicate: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error("waitUntil timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}
