/**
 * The whole server (createApp) on loopback with Telnyx configured against
 * local peers: the fake OpenAI Realtime server for realtime calls, the local
 * engines for stt-tts calls, and the fake Telnyx REST API. `dial()` does
 * what Telnyx does for an inbound TeXML call: the Ed25519-signed voice
 * webhook (form-encoded TeXML call parameters), then the media stream with
 * the TeXML's `<Parameter>`s as `custom_parameters`.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp, type App } from "../../src/app.js";
import { validateConfig } from "../../src/config/load-config.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { capturedLogger, realtimeStandIn } from "./harness-parts.js";
import type { FakeOpenAiRealtimeServer } from "./fake-openai-realtime-server.js";
import { type FakeOpenAiRealtimeServerOptions } from "./fake-openai-realtime-server.js";
import { FakeTelnyxRestServer, type FakeTelnyxRestServerOptions } from "./fake-telnyx-rest-server.js";
import {
  telnyxCallControlId,
  TelnyxStreamClient,
  type TelnyxStreamClientOptions,
} from "./telnyx-stream-client.js";
import { TelnyxWebhookSigner } from "./telnyx-webhook-signer.js";

export const TELNYX_ACCOUNT = "f5586561-8ff0-4291-a51b-c7dfe4139ff9";
export const TELNYX_API_KEY = "KEY0123456789ABCDEF_test";
export const TELNYX_CONNECTION_ID = "2811212257810187875";
export const ADMIN_TOKEN = "telephony-admin-token-000000001";
export { REALTIME_KEY } from "./harness-parts.js";

export interface TelnyxHarnessSetup {
  mode: "realtime" | "stt-tts";
  telephony?: Record<string, unknown>;
  realtime?: FakeOpenAiRealtimeServerOptions;
  config?: Record<string, unknown>;
  /** The fake Telnyx REST API's options (e.g. `answerCallSid`). */
  rest?: Omit<FakeTelnyxRestServerOptions, "deliver" | "accountSid">;
}

export interface TelnyxHarness {
  app: App;
  baseUrl: string;
  publicUrl: string;
  port: number;
  realtime: FakeOpenAiRealtimeServer | undefined;
  rest: FakeTelnyxRestServer;
  signer: TelnyxWebhookSigner;
  events: TalkEvent[];
  logs: Record<string, unknown>[];
  /** Posts a form webhook to `path`, signed by `signer` unless `headers` replaces the signature headers. */
  post(path: string, params: Record<string, string>, headers?: Record<string, string>): Promise<Response>;
  /** An inbound call: signed voice webhook, then its stream (connected + start). */
  dial(options?: {
    playback?: TelnyxStreamClientOptions["playback"];
    /** The call's own codec (the stream's follows the TeXML's `codec` where Telnyx can transcode). */
    callCodec?: string;
  }): Promise<TelnyxStreamClient>;
  /** The `<Parameter>`s of a TeXML document. */
  parametersOf(texml: string): Record<string, string>;
  streamUrl: string;
  sessionOf(callControlId: string): string | undefined;
  eventsOf(sessionId: string, type?: string): TalkEvent[];
  close(): Promise<void>;
}

export async function startTelnyx(setup: TelnyxHarnessSetup): Promise<TelnyxHarness> {
  const { realtime, talk } = await realtimeStandIn(setup.mode, setup.realtime);
  const signer = new TelnyxWebhookSigner();
  const publicUrl = "http://talkgate.test";
  // Telnyx posts a placed call's status callbacks (`initiated` first) to the public URL: here, to the server, signed.
  const server: { post?: (path: string, form: Record<string, string>) => Promise<Response> } = {};
  const rest = new FakeTelnyxRestServer(TELNYX_API_KEY, TELNYX_CONNECTION_ID, {
    accountSid: TELNYX_ACCOUNT,
    ...setup.rest,
    deliver: async (url, form) =>
      url.startsWith(publicUrl) ? server.post?.(url.slice(publicUrl.length), form) : undefined,
  });
  await rest.start();
  const { logger, logs } = capturedLogger();
  const { config, ...rest_ } = validateConfig({
    server: { host: "127.0.0.1", port: 0, publicUrl },
    auth: { tokens: [{ name: "admin", token: ADMIN_TOKEN, scopes: ["admin"] }] },
    dataDir: mkdtempSync(join(tmpdir(), "talkgate-telnyx-")),
    log: { level: "info" },
    talk,
    telephony: {
      telnyx: {
        publicKey: signer.publicKey,
        apiKey: TELNYX_API_KEY,
        connectionId: TELNYX_CONNECTION_ID,
        accountSid: TELNYX_ACCOUNT,
        apiBaseUrl: rest.url,
        defaultFrom: "+15550001111",
      },
      defaultCarrier: "telnyx",
      defaultMode: setup.mode,
      ...setup.telephony,
    },
    ...setup.config,
  });
  const app = await createApp({ config, ...rest_ }, { logger });
  const { port } = await app.listen({ port: 0 });
  const baseUrl = `http://127.0.0.1:${port}`;
  const streamUrl = `ws://127.0.0.1:${port}/telephony/telnyx/stream`;
  const events: TalkEvent[] = [];
  app.runtime.subscribeAll((e) => events.push(e));
  const clients: TelnyxStreamClient[] = [];

  const post = async (
    path: string,
    params: Record<string, string>,
    headers?: Record<string, string>,
  ): Promise<Response> => {
    const body = new URLSearchParams(params).toString();
    return fetch(`${baseUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...(headers ?? signer.headers(body)) },
      body,
    });
  };
  server.post = (path, form) => post(path, form);
  const parametersOf = (texml: string): Record<string, string> =>
    Object.fromEntries(
      [...texml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]),
    );
  const sessionOf = (callControlId: string): string | undefined =>
    app.runtime.listSessions().find((s) => s.metadata["callSid"] === callControlId)?.id;

  return {
    app,
    baseUrl,
    publicUrl,
    port,
    realtime,
    rest,
    signer,
    events,
    logs,
    post,
    streamUrl,
    parametersOf,
    sessionOf,
    async dial(options = {}) {
      const callControlId = telnyxCallControlId();
      const res = await post("/telephony/telnyx/voice", {
        AccountSid: TELNYX_ACCOUNT,
        CallSid: callControlId,
        CallSidLegacy: callControlId,
        CallSessionId: crypto.randomUUID(),
        ConnectionId: TELNYX_CONNECTION_ID,
        From: "+15557654321",
        To: "+15550001111",
        Direction: "inbound",
        CallStatus: "ringing",
      });
      if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
      const texml = await res.text();
      const client = new TelnyxStreamClient({
        url: streamUrl,
        customParameters: parametersOf(texml),
        texml,
        callControlId,
        playback: options.playback ?? "immediate",
        ...(options.callCodec ? { callCodec: options.callCodec } : {}),
      });
      clients.push(client);
      const updates = realtime?.received.filter((e) => e.type === "session.update").length ?? 0;
      await client.connect();
      if (realtime)
        await realtime.waitFor(
          (e) =>
            e.type === "session.update" &&
            realtime.received.filter((x) => x.type === "session.update").length > updates,
        );
      while (!sessionOf(callControlId)) await new Promise((r) => setTimeout(r, 5));
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

export async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}
