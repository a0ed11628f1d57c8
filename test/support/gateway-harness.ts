import { Writable } from "node:stream";
import { pino } from "pino";
import WebSocket from "ws";
import { TalkClient } from "../../src/client/talk-client.js";
import type { TalkClientOptions } from "../../src/client/talk-client.js";
import { validateConfig } from "../../src/config/load-config.js";
import { redactSecrets } from "../../src/config/redact.js";
import { createTalkRuntime } from "../../src/core/session-runtime.js";
import { buildTalkCatalog } from "../../src/core/talk-catalog.js";
import type { AgentProvider, TtsProvider } from "../../src/core/provider-types.js";
import type { TalkRuntime } from "../../src/core/session-types.js";
import { TalkError } from "../../src/core/errors.js";
import type { TalkEvent } from "../../src/core/talk-events.js";
import type { TalkAudioPayload } from "../../src/gateway/protocol/talk-methods.js";
import { createGatewayServer } from "../../src/gateway/index.js";
import type { GatewayDeps, GatewayOptionsInput, GatewayServer } from "../../src/gateway/index.js";
import { EspeakTtsProvider } from "../../src/providers/espeak-ng/espeak-tts.js";
import { createLocalAgent } from "../../src/providers/local-agent/local-agent.js";
import { createOpenAiRealtimeProvider } from "../../src/providers/openai-realtime/openai-realtime-provider.js";
import { FakeOpenAiServer } from "./fake-openai-server.js";
import { TestSessionController } from "./gateway-test-controller.js";
import { TestToolDispatcher } from "./gateway-test-tools.js";

export const TOKENS = Object.freeze({
  admin: "admin-token-0123456789abcdef",
  writer: "writer-token-0123456789abcdef",
  reader: "reader-token-0123456789abcdef",
});

export const OPENAI_KEY = "sk-test-gateway-harness-secret-0001";
export const PERSONA = "You are the talkgate test assistant. Keep answers short.";

export interface HarnessSetup {
  options?: GatewayOptionsInput;
  /** Auth on (three tokens) unless false. */
  auth?: boolean;
  tts?: TtsProvider;
  agent?: AgentProvider;
  deps?: Partial<GatewayDeps>;
}

export interface GatewayHarness {
  server: GatewayServer;
  runtime: TalkRuntime;
  tools: TestToolDispatcher;
  openai: FakeOpenAiServer;
  wsUrl: string;
  httpUrl: string;
  logLines: Record<string, unknown>[];
  connect(options?: TalkClientOptions & { as?: keyof typeof TOKENS }): Promise<TalkClient>;
  raw(as?: keyof typeof TOKENS): Promise<RawSocket>;
  close(): Promise<void>;
}

/**
 * A real Gateway on 127.0.0.1:0 with real parts: the core runtime, core's
 * catalog builder, the config module's redaction, espeak-ng and the local
 * agent, OpenAI Realtime minting against a local server speaking its API.
 */
export async function startGateway(setup: HarnessSetup = {}): Promise<GatewayHarness> {
  const openai = new FakeOpenAiServer({ apiKey: OPENAI_KEY });
  const baseUrl = await openai.start();
  const { config } = validateConfig({
    auth: {
      tokens:
        setup.auth === false
          ? []
          : [
              { name: "admin", token: TOKENS.admin, scopes: ["admin"] },
              { name: "writer", token: TOKENS.writer, scopes: ["write"] },
              { name: "reader", token: TOKENS.reader, scopes: ["read"] },
            ],
    },
    talk: { realtime: { provider: "openai", providers: { openai: { apiKey: OPENAI_KEY, baseUrl } } } },
    agent: { persona: PERSONA },
  });
  const tts = setup.tts ?? new EspeakTtsProvider();
  const agent = setup.agent ?? createLocalAgent();
  const realtime = createOpenAiRealtimeProvider({ id: "openai", baseUrl, apiKey: OPENAI_KEY });
  const runtime = createTalkRuntime({ closeGraceMs: 500 });
  const tools = new TestToolDispatcher();
  const logLines: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "info" },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split("\n")) if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );

  const deps: GatewayDeps = {
    runtime,
    catalog: () => buildTalkCatalog({ providers: [realtime, tts, agent] }),
    effectiveConfig: ({ admin }) => (admin ? config.talk : redactSecrets(config.talk)),
    speak: (request, signal) => tts.synthesize({ ...request, signal }),
    createController: async (session) => new TestSessionController(session, { agent, tts }),
    createClientSession: async (request) => {
      if (request.provider !== undefined && request.provider !== realtime.id) {
        throw new TalkError("provider_not_found", `No realtime provider "${request.provider}".`);
      }
      const declared = tools.allowedDefinitions();
      const grant = await realtime.createClientSession({
        instructions: config.agent.persona,
        tools: declared,
        transport: request.transport,
        signal: request.signal,
        ...(request.model !== undefined ? { model: request.model } : {}),
        ...(request.voice !== undefined ? { voice: request.voice } : {}),
      });
      return { provider: realtime.id, grant, tools: declared.map((t) => t.name) };
    },
    tools,
    readiness: async () => ({ ok: true, checks: { providers: { ok: true }, coordinator: { ok: true, detail: "embedded" } } }),
    logger,
    ...setup.deps,
  };
  const server = createGatewayServer(deps, {
    ...setup.options,
    host: "127.0.0.1",
    auth: { ...setup.options?.auth, tokens: config.auth.tokens },
  });
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
      const client = await TalkClient.connect(wsUrl, { ...(token !== undefined ? { token } : {}), ...options });
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
      await server.close();
      await runtime.close();
      await openai.close();
    },
  };
}

/** A bare WebSocket for frames the typed client would never send. */
export class RawSocket {
  readonly ws: WebSocket;
  readonly frames: Record<string, unknown>[] = [];
  readonly closed: Promise<{ code: number; reason: string }>;
  #waiters: { match: (f: Record<string, unknown>) => boolean; resolve: (f: Record<string, unknown>) => void }[] = [];

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
    this.closed = new Promise((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
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
