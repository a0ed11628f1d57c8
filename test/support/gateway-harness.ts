import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { pino } from "pino";
import WebSocket from "ws";
import { createApp, type CreateAppOptions } from "../../src/app.js";
import { TalkClient } from "../../src/client/talk-client.js";
import type { TalkClientOptions } from "../../src/client/talk-client.js";
import { validateConfig } from "../../src/config/load-config.js";
import { audioBytes } from "../../src/core/audio-chunk.js";
import type { AgentProvider, SttProvider, TtsProvider } from "../../src/core/provider-types.js";
import type { TalkRuntime } from "../../src/core/session-types.js";
import { TalkError } from "../../src/core/errors.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import type { TalkAudioPayload } from "../../src/gateway/protocol/talk-methods.js";
import type { GatewayOptionsInput, GatewayServer } from "../../src/gateway/index.js";
import { EspeakTtsProvider } from "../../src/providers/espeak-ng/espeak-tts.js";
import { createLocalAgent } from "../../src/providers/local-agent/local-agent.js";
import { createOpenAiRealtimeProvider } from "../../src/providers/openai-realtime/openai-realtime-provider.js";
import { FakeOpenAiServer } from "./fake-openai-server.js";
import { createTestTools } from "./gateway-test-tools.js";
import { createPocketsphinxStt } from "../../src/providers/pocketsphinx/pocketsphinx-stt.js";

export const TOKENS = Object.freeze({
  admin: "admin-token-0123456789abcdef",
  writer: "writer-token-0123456789abcdef",
  reader: "reader-token-0123456789abcdef",
  /** A trusted first-party surface: the direct-tools scope (write and direct-tools sessions), not admin. */
  surface: "surface-token-0123456789abcdef",
});

export const OPENAI_KEY = "sk-test-gateway-harness-secret-0001";
export const PERSONA = "You are the talkgate test assistant. Keep answers short.";

export interface HarnessSetup {
  options?: GatewayOptionsInput;
  /** Auth on (three tokens) unless false. */
  auth?: boolean;
  tts?: TtsProvider;
  agent?: AgentProvider;
  stt?: SttProvider;
  /** Gateway dependencies instead of createApp's (readiness, catalog, cluster). */
  deps?: CreateAppOptions["deps"];
  /** The Realtime WebSocket URL (a FakeOpenAiRealtimeServer keyed with OPENAI_KEY) for gateway-relay sessions. */
  realtimeUrl?: string;
  /** agent.tools.clientResultTimeoutMs. */
  clientResultTimeoutMs?: number;
  /** More names agent.tools.allow lets through (client-completed tools). */
  allowTools?: string[];
  /** agent.tools.direct: the tools a direct-tools session's surface may call. Default none. */
  directTools?: { allow?: string[]; deny?: string[] };
  /** agent.realtime.replyPath: the reply path of realtime sessions that name none. */
  replyPath?: "native" | "bridge" | "brain";
  /** More `talk.realtime` keys (mode, transport, brain, more providers entries). */
  realtime?: { mode?: string; transport?: string; brain?: string; providers?: Record<string, unknown> };
  /** `talk.input` keys (interruptOnSpeech, turnEnd, ...). */
  input?: Record<string, unknown>;
  /** The Realtime stand-in transcribes the caller's turns (input transcription configured). Default false. */
  realtimeTranscription?: boolean;
}

export interface GatewayHarness {
  server: GatewayServer;
  runtime: TalkRuntime;
  tools: ReturnType<typeof createTestTools>;
  openai: FakeOpenAiServer;
  wsUrl: string;
  httpUrl: string;
  logLines: Record<string, unknown>[];
  connect(options?: TalkClientOptions & { as?: keyof typeof TOKENS }): Promise<TalkClient>;
  raw(as?: keyof typeof TOKENS): Promise<RawSocket>;
  close(): Promise<void>;
}

/**
 * The whole server, built by the composition root (createApp) on
 * 127.0.0.1:0 with real parts: espeak-ng, pocketsphinx and the local agent,
 * OpenAI Realtime minting against a local server speaking its API, and the
 * test tool table under the app's tool policy. Readiness is a fixed "ready"
 * unless `deps` replaces it.
 */
export async function startGateway(setup: HarnessSetup = {}): Promise<GatewayHarness> {
  const openai = new FakeOpenAiServer({ apiKey: OPENAI_KEY });
  const baseUrl = await openai.start();
  const tools = createTestTools();
  const dataDir = mkdtempSync(join(tmpdir(), "talkgate-gw-"));
  const loaded = validateConfig({
    server: { host: "127.0.0.1", port: 0 },
    auth: {
      tokens:
        setup.auth === false
          ? []
          : [
              { name: "admin", token: TOKENS.admin, scopes: ["admin"] },
              { name: "writer", token: TOKENS.writer, scopes: ["write"] },
              { name: "reader", token: TOKENS.reader, scopes: ["read"] },
              { name: "surface", token: TOKENS.surface, scopes: ["direct-tools"] },
            ],
    },
    dataDir,
    talk: {
      ...(setup.input !== undefined ? { input: setup.input } : {}),
      realtime: {
        provider: "openai",
        ...setup.realtime,
        providers: { openai: { apiKey: OPENAI_KEY, baseUrl }, ...setup.realtime?.providers },
      },
    },
    agent: {
      persona: PERSONA,
      ...(setup.replyPath !== undefined ? { realtime: { replyPath: setup.replyPath } } : {}),
      tools: {
        ...tools.policy,
        allow: [...tools.policy.allow, ...(setup.allowTools ?? [])],
        ...(setup.directTools !== undefined ? { direct: setup.directTools } : {}),
        ...(setup.clientResultTimeoutMs !== undefined
          ? { clientResultTimeoutMs: setup.clientResultTimeoutMs }
          : {}),
      },
    },
  });
  const tts = setup.tts ?? new EspeakTtsProvider();
  const agent = setup.agent ?? createLocalAgent();
  const stt = setup.stt ?? createPocketsphinxStt();
  const realtime = createOpenAiRealtimeProvider({
    id: "openai",
    baseUrl,
    apiKey: OPENAI_KEY,
    ...(setup.realtimeUrl !== undefined
      ? {
          realtimeUrl: setup.realtimeUrl,
          ...(setup.realtimeTranscription === true ? {} : { inputTranscriptionModel: null }),
        }
      : {}),
  });
  const logLines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split("\n"))
          if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );

  const app = await createApp(loaded, {
    providers: [realtime, stt, tts, agent],
    logger,
    tools: tools.definitions,
    runtime: { closeGraceMs: 500 },
    ...(setup.options !== undefined ? { gateway: setup.options } : {}),
    deps: {
      readiness: async () => ({
        ok: true,
        checks: { providers: { ok: true }, coordinator: { ok: true, detail: "embedded" } },
      }),
      ...setup.deps,
    },
  });
  const server = app.gateway;
  const runtime = app.runtime;
  const { urls } = await server.listen({ port: 0 });
  const httpUrl = urls[0] as string;
  const wsUrl = `${httpUrl.replace(/^http/, "ws")}/talk`;
  const clients: TalkClient[] = [];
  const raws: RawSocket[] = [];

  return {
    server,
    runtime,
    tools,
    openai,
    wsUrl,
    httpUrl,
    logLines,
    async connect(options = {}) {
      const token = setup.auth === false ? undefined : TOKENS[options.as ?? "admin"];
      const client = await TalkClient.connect(wsUrl, {
        ...(token !== undefined ? { token } : {}),
        ...options,
      });
      clients.push(client);
      return client;
    },
    async raw(as = "admin") {
      const socket = await RawSocket.open(wsUrl, setup.auth === false ? undefined : TOKENS[as]);
      raws.push(socket);
      return socket;
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      for (const r of raws) r.ws.terminate();
      await app.close();
      await openai.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A bare WebSocket for frames the typed client would never send. */
export class RawSocket {
  readonly ws: WebSocket;
  readonly frames: Record<string, unknown>[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  #waiters: {
    match: (f: Record<string, unknown>) => boolean;
    resolve: (f: Record<string, unknown>) => void;
  }[] = [];

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (data) => {
      const frame = JSON.parse(data.toString()) as Record<string, unknown>;
      this.frames.push(frame);
      this.#waiters = this.#waiters.filter((w) => {
        if (!w.match(frame)) return true;
        w.resolve(frame);
        return false;
      });
    });
    this.closed = new Promise((resolve) =>
      ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
  }

  static open(url: string, token: string | undefined): Promise<RawSocket> {
    const ws = new WebSocket(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new RawSocket(ws)));
      ws.once("error", reject);
    });
  }

  send(data: string | Buffer): void {
    this.ws.send(data);
  }

  /** The first frame (already received or future) that matches. */
  next(match: (f: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    const found = this.frames.find(match);
    if (found) return Promise.resolve(found);
    return new Promise((resolve) => this.#waiters.push({ match, resolve }));
  }

  response(id: string | null): Promise<Record<string, unknown>> {
    return this.next((f) => f.type === "res" && f.id === id);
  }
}

/** Records a client's talk.event frames from now on; `next` awaits one (already seen or future). */
export function recordEvents(client: TalkClient): {
  events: TalkEvent[];
  audio: TalkAudioPayload[];
  next(match: (e: TalkEvent) => boolean): Promise<TalkEvent>;
} {
  const events: TalkEvent[] = [];
  const audio: TalkAudioPayload[] = [];
  let waiters: { match: (e: TalkEvent) => boolean; resolve: (e: TalkEvent) => void }[] = [];
  client.on("talk.event", (event) => {
    events.push(event);
    waiters = waiters.filter((w) => {
      if (!w.match(event)) return true;
      w.resolve(event);
      return false;
    });
  });
  client.on("talk.audio", (a) => audio.push(a));
  return {
    events,
    audio,
    next(match) {
      const found = events.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve) => waiters.push({ match, resolve }));
    },
  };
}

/** The TalkError a promise rejects with (fails the test if it resolves). */
export async function rejectionOf(promise: Promise<unknown>): Promise<TalkError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof TalkError) return err;
    throw err;
  }
  throw new Error("expected the request to fail");
}

/** Real speech from espeak-ng (22 050 Hz PCM16 mono), to drive STT with audio a person could hear. */
export async function speechPcm(text: string): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const chunk of new EspeakTtsProvider().synthesize({
    text,
    signal: new AbortController().signal,
  })) {
    parts.push(audioBytes(chunk));
  }
  return Buffer.concat(parts);
}

export const SPEECH_FORMAT = Object.freeze({ encoding: "pcm16" as const, sampleRate: 22_050, channels: 1 });

/** Sends PCM through talk.session.appendAudio in frames the pipeline accepts. */
export async function appendPcm(
  client: TalkClient,
  sessionId: string,
  pcm: Buffer,
  frameBytes = 8820,
): Promise<void> {
  for (let offset = 0; offset < pcm.byteLength; offset += frameBytes) {
    const frame = pcm.subarray(offset, Math.min(pcm.byteLength, offset + frameBytes));
    await client.request("talk.session.appendAudio", { sessionId, audioBase64: frame.toString("base64") });
  }
}
