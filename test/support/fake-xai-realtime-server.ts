/**
 * A local stand-in for xAI's Voice Agent API, written from its documentation
 * (https://docs.x.ai/docs/guides/voice/agent and
 * https://docs.x.ai/developers/model-capabilities/audio/ephemeral-tokens):
 *
 * - the WebSocket protocol is OpenAI Realtime's event set (the event flow is
 *   the OpenAI stand-in's), with xAI's session object: `voice`,
 *   `instructions`, `turn_detection` at the top of `session`; audio formats
 *   `audio/pcm` with a `rate` of 8000-48000, `audio/pcmu`, `audio/pcma`;
 *   voices Ara, Rex, Sal, Eve, Leo (either case); function tools plus `web_search` /
 *   `x_search`; the caller's speech always transcribed. An update outside
 *   that (an OpenAI-shaped `audio.output.voice`, `type: "realtime"`, an
 *   unknown voice or format) gets an `error` event, as an API refusing a
 *   field would;
 * - `POST /v1/realtime/client_secrets` with the server key takes
 *   `{expires_after: {seconds}}` only ("Does not support session or
 *   expires_after.anchor fields": both are refused with 400) and answers
 *   `{value, expires_at}`. An unexpired token opens the WebSocket "in the
 *   same fashion as an API key" (`Authorization: Bearer`) or, from a
 *   browser, as the subprotocol `xai-client-secret.<token>`; it is not bound
 *   to a session configuration.
 *
 * Test-only; not part of the product.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  FakeOpenAiRealtimeServer,
  type FakeOpenAiRealtimeServerOptions,
  type FakeRealtimeJson as Json,
} from "./fake-openai-realtime-server.js";
import { recordClientMessage } from "./wire-capture.js";

export const XAI_TEST_KEY = "xai-test-key-0123456789abcdef";
const VOICES = new Set(["Ara", "Rex", "Sal", "Eve", "Leo"]);
const SERVER_TOOLS = new Set(["web_search", "x_search", "file_search"]);
const SUBPROTOCOL_PREFIX = "xai-client-secret.";

const capitalized = (v: string): string => v.charAt(0).toUpperCase() + v.slice(1).toLowerCase();

/** xAI's session.update rules, merged into the stand-in's session (audio.input / audio.output). */
function xaiSession(current: Json, update: Json): Json | string {
  for (const key of Object.keys(update)) {
    if (!["instructions", "voice", "turn_detection", "audio", "tools", "tool_choice"].includes(key))
      return `Unknown session parameter '${key}'`;
  }
  // The docs spell voices "Eve" (session parameters) and "eve" (newer examples): either is taken.
  if (update.voice !== undefined && !VOICES.has(capitalized(String(update.voice))))
    return `Invalid voice '${String(update.voice)}'`;
  const audio = (update.audio ?? {}) as Json;
  const formats: Json = {};
  for (const side of ["input", "output"] as const) {
    const s = (audio[side] ?? {}) as Json;
    for (const key of Object.keys(s)) if (key !== "format") return `Unknown audio.${side} parameter '${key}'`;
    if (s.format === undefined) continue;
    const f = s.format as Json;
    const ok =
      f.type === "audio/pcmu" ||
      f.type === "audio/pcma" ||
      (f.type === "audio/pcm" && typeof f.rate === "number" && f.rate >= 8000 && f.rate <= 48000);
    if (!ok) return `Invalid audio.${side}.format ${JSON.stringify(f)}`;
    formats[side] = f;
  }
  for (const tool of (update.tools ?? []) as Json[]) {
    if (tool.type === "function" && typeof tool.name === "string") continue;
    if (!SERVER_TOOLS.has(String(tool.type))) return `Invalid tool type '${String(tool.type)}'`;
  }
  const prev = current.audio as { input: Json; output: Json };
  const td = update.turn_detection === undefined ? prev.input.turn_detection : update.turn_detection;
  return {
    ...current,
    ...update,
    audio: {
      // The service transcribes the caller itself (no transcription model is configured).
      input: {
        ...prev.input,
        ...(formats.input ? { format: formats.input } : {}),
        turn_detection: td,
        transcription: {},
      },
      output: {
        ...prev.output,
        ...(formats.output ? { format: formats.output } : {}),
        voice: update.voice ?? prev.output.voice,
      },
    },
  };
}

export interface MintedXaiSecret {
  value: string;
  expiresAt: number;
}

export class FakeXaiRealtimeServer extends FakeOpenAiRealtimeServer {
  /** Ephemeral tokens minted, in order. */
  readonly secrets: MintedXaiSecret[] = [];
  /** Bodies of the token requests, in order. */
  readonly secretRequests: unknown[] = [];

  constructor(
    options: Omit<FakeOpenAiRealtimeServerOptions, "sessionDialect" | "onRequest" | "authorize"> = {},
  ) {
    const key = options.apiKey ?? XAI_TEST_KEY;
    const self: { server?: FakeXaiRealtimeServer } = {};
    super({
      ...options,
      apiKey: key,
      sessionDialect: xaiSession,
      wireVendor: "xai",
      onRequest: (req, res) => void self.server?.handleRequest(key, req, res),
      authorize: (req) => self.server?.acceptsToken(req) === true,
    });
    self.server = this;
  }

  /** A handshake presenting an unexpired minted token, as a Bearer header or the browser subprotocol. */
  acceptsToken(req: IncomingMessage): boolean {
    const offered = String(req.headers["sec-websocket-protocol"] ?? "")
      .split(",")
      .map((p) => p.trim())
      .filter((p) => p.startsWith(SUBPROTOCOL_PREFIX))
      .map((p) => p.slice(SUBPROTOCOL_PREFIX.length));
    const bearer = /^Bearer (.+)$/.exec(String(req.headers.authorization ?? ""))?.[1];
    if (bearer !== undefined) offered.push(bearer);
    const now = Date.now() / 1000;
    return this.secrets.some((s) => offered.includes(s.value) && s.expiresAt > now);
  }

  /** The HTTP side: the token endpoint. */
  async handleRequest(key: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    };
    if (req.method !== "POST" || req.url !== "/v1/realtime/client_secrets")
      return json(404, { error: { message: "Not found" } });
    if (req.headers.authorization !== `Bearer ${key}`)
      return json(401, {
        error: { message: "Incorrect API key provided: xai-****", code: "invalid_api_key" },
      });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    let body: Json;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Json;
    } catch {
      return json(400, { error: { message: "Invalid JSON body" } });
    }
    this.secretRequests.push(body);
    const expires = (body.expires_after ?? {}) as Json;
    if (body.session !== undefined) return json(400, { error: { message: "Unsupported field: session" } });
    if (expires.anchor !== undefined)
      return json(400, { error: { message: "Unsupported field: expires_after.anchor" } });
    if (typeof expires.seconds !== "number" || expires.seconds <= 0)
      return json(400, { error: { message: "expires_after.seconds must be a positive number" } });
    // What the stand-in accepted is type-checked against xAI's documented request (test/wire).
    recordClientMessage("xai-client-secret", body);
    const secret = {
      value: `xai-eph-${this.secrets.length + 1}-${Math.random().toString(36).slice(2)}`,
      expiresAt: Math.floor(Date.now() / 1000) + expires.seconds,
    };
    this.secrets.push(secret);
    json(200, { value: secret.value, expires_at: secret.expiresAt });
  }
}
