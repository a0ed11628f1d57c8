/**
 * The whole server (createApp: config -> runtime, providers, gateway,
 * telephony) on loopback with Twilio configured against local peers: the
 * fake OpenAI Realtime server for realtime calls, the local engines for
 * stt-tts calls, and a fake Twilio REST API. `dial()` does what Twilio does
 * for an inbound call: the signed voice webhook, then the stream WebSocket
 * with the TwiML's parameters.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import { createApp, type App } from "../../src/app.js";
import { validateConfig } from "../../src/config/load-config.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import { computeTwilioSignature } from "../../src/telephony/twilio/twilio-signature.js";
import {
  FakeOpenAiRealtimeServer,
  type FakeOpenAiRealtimeServerOptions,
} from "./fake-openai-realtime-server.js";
import { traceLogMixin } from "../../src/ops/trace-log.js";
import { FakeTwilioRestServer } from "./fake-twilio-rest-server.js";
import { TwilioStreamClient, type TwilioStreamClientOptions } from "./twilio-stream-client.js";

export const ACCOUNT_SID = `AC${"a1".repeat(16)}`;
export const AUTH_TOKEN = "twilio-test-auth-token-0001";
export const ADMIN_TOKEN = "telephony-admin-token-000000001";
export const WRITE_TOKEN = "telephony-write-token-000000001";
export const REALTIME_KEY = "sk-test-realtime";

/** `telephony.twilio` of the test servers: the test account, REST calls to the local fake at `apiBaseUrl`. */
export function twilioConfig(apiBaseUrl: string): Record<string, string> {
  return { accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN, apiBaseUrl, defaultFrom: "+15550001111" };
}

export interface TelephonyHarnessSetup {
  mode: "realtime" | "stt-tts";
  telephony?: Record<string, unknown>;
  realtime?: FakeOpenAiRealtimeServerOptions;
  /** More top-level config (e.g. `redis` for the outbound-call job path). */
  config?: Record<string, unknown>;
  /** More `talk` config, merged with the harness's own (e.g. `faults`). */
  talk?: Record<string, unknown>;
}

export interface TelephonyHarness {
  app: App;
  baseUrl: string;
  publicUrl: string;
  realtime: FakeOpenAiRealtimeServer | undefined;
  rest: FakeTwilioRestServer;
  port: number;
  events: TalkEvent[];
  logs: Record<string, unknown>[];
  webhook(params: Record<string, string>, signature?: string | null): Promise<Response>;
  dial(options?: {
    from?: string;
    to?: string;
    /** The call's CallSid (default a random one). */
    callSid?: string;
    playback?: TwilioStreamClientOptions["playback"];
    /** Wait for the provider session to be configured (realtime). Default true; false when it is refused. */
    waitForProvider?: boolean;
  }): Promise<TwilioStreamClient>;
  eventsOf(sessionId: string, type?: string): TalkEvent[];
  close(): Promise<void>;
}

export async function startTelephony(setup: TelephonyHarnessSetup): Promise<TelephonyHarness> {
  const realtime =
    setup.mode === "realtime"
      ? new FakeOpenAiRealtimeServer({ apiKey: REALTIME_KEY, ...setup.realtime })
      : undefined;
  const realtimeUrl = realtime ? await realtime.start() : undefined;
  const rest = new FakeTwilioRestServer(ACCOUNT_SID, AUTH_TOKEN);
  await rest.start();
  const logs: Record<string, unknown>[] = [];
  const logger = pino(
    // As the app's own logger: lines naming a traced session carry its trace ids.
    { level: "info", mixin: traceLogMixin },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split("\n"))
          if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
  // PUBLIC_URL is what Twilio signs; the port is only known after listen, so a fixed loopback name is used
  // and the signature computed against it (the server checks the public URL, not the Host it was reached on).
  const publicUrl = "http://talkgate.test";
  const { config, ...rest_ } = validateConfig({
    server: { host: "127.0.0.1", port: 0, publicUrl },
    auth: {
      tokens: [
        { name: "admin", token: ADMIN_TOKEN, scopes: ["admin"] },
        { name: "writer", token: WRITE_TOKEN, scopes: ["write"] },
      ],
    },
    dataDir: mkdtempSync(join(tmpdir(), "talkgate-tel-")),
    log: { level: "info" },
    talk: {
      ...(realtimeUrl
        ? {
            realtime: {
              provider: "openai",
              providers: {
                openai: {
                  apiKey: REALTIME_KEY,
                  baseUrl: realtimeUrl.replace(/^ws/, "http").replace(/\/realtime$/, ""),
                },
              },
            },
          }
        : {}),
      ...setup.talk,
    },
    telephony: {
      twilio: twilioConfig(rest.url),
      defaultMode: setup.mode,
      ...setup.telephony,
    },
    ...setup.config,
  });
  const app = await createApp({ config, ...rest_ }, { logger });
  const { port } = await app.listen({ port: 0 });
  const baseUrl = `http://127.0.0.1:${port}`;
  const events: TalkEvent[] = [];
  app.runtime.subscribeAll((e) => events.push(e));
  const clients: TwilioStreamClient[] = [];

  const webhook = async (params: Record<string, string>, signature?: string | null): Promise<Response> => {
    const sig =
      signature === undefined
        ? computeTwilioSignature(AUTH_TOKEN, `${publicUrl}/telephony/twilio/voice`, params)
        : signature;
    return fetch(`${baseUrl}/telephony/twilio/voice`, {
      method: "POST",
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        ...(sig !== null ? { "x-twilio-signature": sig } : {}),
      },
      body: new URLSearchParams(params),
    });
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
    webhook,
    async dial(options = {}) {
      const callSid = options.callSid ?? `CA${crypto.randomUUID().replace(/-/g, "")}`;
      const res = await webhook({
        CallSid: callSid,
        AccountSid: ACCOUNT_SID,
        From: options.from ?? "+15557654321",
        To: options.to ?? "+15550001111",
        Direction: "inbound",
      });
      if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
      const twiml = await res.text();
      const parameters = Object.fromEntries(
        [...twiml.matchAll(/<Parameter name="([^"]+)" value="([^"]*)"\/>/g)].map((m) => [m[1]!, m[2]!]),
      );
      const client = new TwilioStreamClient({
        url: `ws://127.0.0.1:${port}/telephony/twilio/stream`,
        customParameters: parameters,
        callSid,
        accountSid: ACCOUNT_SID,
        playback: options.playback ?? "immediate",
      });
      clients.push(client);
      const updates = realtime?.received.filter((e) => e.type === "session.update").length ?? 0;
      await client.connect();
      // Ready when the provider session is configured (realtime) or the call's session exists (stt-tts).
      if (realtime && options.waitForProvider !== false)
        await realtime.waitFor(
          (e) =>
            e.type === "session.update" &&
            realtime.received.filter((x) => x.type === "session.update").length > updates,
        );
      while (!sessionOfCall(this as unknown as TelephonyHarness, callSid))
        await new Promise((r) => setTimeout(r, 5));
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

/** The session of a call, found by its CallSid metadata. */
export function sessionOfCall(h: TelephonyHarness, callSid: string): string | undefined {
  return h.app.runtime.listSessions().find((s) => s.metadata["callSid"] === callSid)?.id;
}

/** After a failed test: the harness's events (audio deltas left out), for the log; nothing after a pass. */
export function logEventsIfFailed(
  ctx: { task: { result?: { state?: string } | undefined } },
  h: TelephonyHarness | undefined,
): void {
  if (ctx.task.result?.state !== "fail" || !h) return;
  console.log(
    JSON.stringify(
      h.events.filter((e) => e.type !== "output.audio.delta").map((e) => [e.type, e.payload]),
    ).slice(0, 6000),
  );
}
