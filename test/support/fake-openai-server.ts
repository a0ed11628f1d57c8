import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";

/**
 * A local stand-in for the OpenAI API that speaks its documented wire
 * protocol, so providers are tested over real HTTP rather than against mocks
 * of our own interfaces. It checks the bearer key and validates request
 * bodies the way the API does (error objects `{error:{message,type,param,code}}`).
 *
 * Routes so far: POST /v1/realtime/client_secrets. Extend with `route()` (HTTP)
 * or by attaching a WebSocket server to `httpServer` (the Realtime socket).
 */

export interface FakeOpenAiServerOptions {
  /** The key requests must present as `Authorization: Bearer <key>`. Default "sk-test-fake-key". */
  apiKey?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: unknown;
}

export type FakeRouteHandler = (req: RecordedRequest, res: ServerResponse) => void | Promise<void>;

export interface OpenAiErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

const REALTIME_VOICES = new Set([
  "alloy",
  "ash",
  "ballad",
  "coral",
  "echo",
  "sage",
  "shimmer",
  "verse",
  "marin",
  "cedar",
]);

export class FakeOpenAiServer {
  readonly apiKey: string;
  /** Every request that reached a route, in order (bodies parsed as JSON when they are JSON). */
  readonly requests: RecordedRequest[] = [];
  readonly #routes = new Map<string, FakeRouteHandler>();
  readonly #server: Server;
  #forced: { status: number; body: unknown } | undefined;
  #baseUrl: string | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: FakeOpenAiServerOptions = {}) {
    this.apiKey = options.apiKey ?? "sk-test-fake-key";
    this.#server = createServer((req, res) => void this.#handle(req, res));
    this.route("POST", "/v1/realtime/client_secrets", (req, res) => this.#clientSecrets(req, res));
  }

  /** The underlying server, for attaching a WebSocket upgrade handler. */
  get httpServer(): Server {
    return this.#server;
  }

  /** Base URL including "/v1", as providers expect it. Only valid after start(). */
  get baseUrl(): string {
    if (!this.#baseUrl) throw new Error("FakeOpenAiServer is not started");
    return this.#baseUrl;
  }

  /** Listens on an ephemeral loopback port; resolves with the base URL (".../v1"). */
  async start(): Promise<string> {
    if (this.#baseUrl) return this.#baseUrl;
    await new Promise<void>((resolve, reject) => {
      this.#server.once("error", reject);
      this.#server.listen(0, "127.0.0.1", () => {
        this.#server.off("error", reject);
        resolve();
      });
    });
    const { port } = this.#server.address() as AddressInfo;
    this.#baseUrl = `http://127.0.0.1:${port}/v1`;
    return this.#baseUrl;
  }

  /** Adds or replaces a route. */
  route(method: string, path: string, handler: FakeRouteHandler): void {
    this.#routes.set(`${method.toUpperCase()} ${path}`, handler);
  }

  /** The next authenticated request gets this status and body instead of its normal answer. */
  failNext(status: number, body: unknown): void {
    this.#forced = { status, body };
  }

  /** Idempotent. */
  close(): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      this.#server.closeAllConnections();
      this.#server.close(() => resolve());
    });
    return this.#closing;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      const path = new URL(req.url ?? "/", "http://localhost").pathname;
      const handler = this.#routes.get(`${req.method ?? "GET"} ${path}`);
      const raw = await readBody(req);
      let body: unknown = raw;
      if ((req.headers["content-type"] ?? "").startsWith("application/json")) {
        try {
          body = JSON.parse(raw);
        } catch {
          return sendError(
            res,
            400,
            "We could not parse the JSON body of your request.",
            "invalid_request_error",
            null,
            null,
          );
        }
      }
      const recorded: RecordedRequest = { method: req.method ?? "GET", path, headers: req.headers, body };
      if (!handler)
        return sendError(
          res,
          404,
          `Invalid URL (${req.method} ${path})`,
          "invalid_request_error",
          null,
          null,
        );
      this.requests.push(recorded);
      const auth = req.headers.authorization ?? "";
      if (auth !== `Bearer ${this.apiKey}`) {
        // Like the real API, the message quotes a masked form of the presented key.
        const presented = auth.replace(/^Bearer\s+/i, "");
        const masked =
          presented.length > 8 ? `${presented.slice(0, 6)}****${presented.slice(-4)}` : presented;
        return sendError(
          res,
          401,
          `Incorrect API key provided: ${masked}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          "invalid_request_error",
          null,
          "invalid_api_key",
        );
      }
      if (this.#forced) {
        const forced = this.#forced;
        this.#forced = undefined;
        return sendJson(res, forced.status, forced.body);
      }
      await handler(recorded, res);
    } catch (err) {
      if (!res.headersSent)
        sendError(res, 500, `fake server failure: ${(err as Error).message}`, "server_error", null, null);
    }
  }

  #clientSecrets(req: RecordedRequest, res: ServerResponse): void {
    const problem = validateClientSecretBody(req.body);
    if (problem)
      return sendError(res, 400, problem.message, "invalid_request_error", problem.param, "invalid_value");
    const body = req.body as { expires_after?: { seconds?: number }; session: Record<string, unknown> };
    const seconds = body.expires_after?.seconds ?? 600;
    const now = Math.floor(Date.now() / 1000);
    sendJson(res, 200, {
      value: `ek_${randomBytes(12).toString("hex")}`,
      expires_at: now + seconds,
      session: { ...body.session, id: `sess_${randomBytes(8).toString("hex")}`, object: "realtime.session" },
    });
  }
}

/** Checks the documented GA body of POST /realtime/client_secrets; returns the first problem. */
export function validateClientSecretBody(body: unknown): { message: string; param: string } | undefined {
  if (typeof body !== "object" || body === null)
    return { message: "The body must be a JSON object.", param: "" };
  const b = body as Record<string, unknown>;
  const allowed = new Set(["expires_after", "session"]);
  for (const key of Object.keys(b)) {
    if (!allowed.has(key)) return { message: `Unknown parameter: '${key}'.`, param: key };
  }
  if (b.expires_after !== undefined) {
    const e = b.expires_after as Record<string, unknown>;
    if (typeof e !== "object" || e === null)
      return { message: "expires_after must be an object.", param: "expires_after" };
    if (e.anchor !== undefined && e.anchor !== "created_at")
      return { message: "anchor must be 'created_at'.", param: "expires_after.anchor" };
    if (
      e.seconds !== undefined &&
      (!Number.isInteger(e.seconds) || (e.seconds as number) < 10 || (e.seconds as number) > 7200)
    ) {
      return { message: "seconds must be an integer between 10 and 7200.", param: "expires_after.seconds" };
    }
  }
  const s = b.session as Record<string, unknown> | undefined;
  if (typeof s !== "object" || s === null)
    return { message: "Missing required parameter: 'session'.", param: "session" };
  if (s.type !== "realtime") return { message: "session.type must be 'realtime'.", param: "session.type" };
  if (s.model !== undefined && typeof s.model !== "string")
    return { message: "session.model must be a string.", param: "session.model" };
  if (s.instructions !== undefined && typeof s.instructions !== "string") {
    return { message: "session.instructions must be a string.", param: "session.instructions" };
  }
  if ("voice" in s)
    return {
      message: "Unknown parameter: 'session.voice'. Use session.audio.output.voice.",
      param: "session.voice",
    };
  const voice = (
    (s.audio as Record<string, unknown> | undefined)?.output as Record<string, unknown> | undefined
  )?.voice;
  if (voice !== undefined && (typeof voice !== "string" || !REALTIME_VOICES.has(voice))) {
    return {
      message: `Invalid value for session.audio.output.voice: '${String(voice)}'.`,
      param: "session.audio.output.voice",
    };
  }
  if (s.tools !== undefined) {
    if (!Array.isArray(s.tools))
      return { message: "session.tools must be an array.", param: "session.tools" };
    for (const [i, t] of (s.tools as Record<string, unknown>[]).entries()) {
      if (t?.type !== "function" || typeof t.name !== "string" || typeof t.parameters !== "object") {
        return {
          message: `session.tools[${i}] must be {type:"function", name, description, parameters}.`,
          param: `session.tools[${i}]`,
        };
      }
    }
  }
  return undefined;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  type: string,
  param: string | null,
  code: string | null,
): void {
  const body: OpenAiErrorBody = { error: { message, type, param, code } };
  sendJson(res, status, body);
}
