/**
 * One local HTTP server both talkgate's REST clients and the carriers' own
 * SDKs send their requests to, for comparing them field by field: it records
 * each request (method, path, query, the auth header, the body parsed by its
 * content type) and answers with what the test's responder returns (the
 * carrier's documented answer, so both clients go on as in production).
 *
 * SDKs whose base URL cannot be set (twilio's and plivo's: axios instances
 * aimed at the vendor's host) are pointed here by `redirectAxios`, which
 * rewrites their request URLs to this server.
 *
 * Test-only; not part of the product.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";

export interface CapturedRequest {
  method: string;
  path: string;
  query: Record<string, string | string[]>;
  /** The Authorization header as sent. */
  authorization: string | undefined;
  /** The media type of the body (without parameters), or "" for a body without fields. */
  contentType: string;
  /** The body as fields: JSON as parsed, a form as name -> value (or values, repeated). */
  body: Record<string, unknown>;
}

export type Responder = (request: CapturedRequest) => { status?: number; json: unknown };

export class RestCaptureServer {
  readonly requests: CapturedRequest[] = [];
  readonly #server: Server;
  url = "";

  constructor(respond: Responder) {
    this.#server = createServer((req, res) => {
      void readBody(req).then((raw) => {
        const url = new URL(req.url ?? "/", "http://x");
        const contentType = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
        const body = parseBody(raw, contentType);
        const captured: CapturedRequest = {
          method: req.method ?? "",
          path: url.pathname,
          query: fields(url.searchParams),
          authorization: req.headers.authorization,
          // A body without fields ("", "{}") says nothing whatever its media type.
          contentType: Object.keys(body).length === 0 ? "" : contentType,
          body,
        };
        this.requests.push(captured);
        const answer = respond(captured);
        res
          .writeHead(answer.status ?? 200, { "content-type": "application/json" })
          .end(JSON.stringify(answer.json));
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this.url;
  }

  /** The requests since `from` (an index into `requests`). */
  since(from: number): CapturedRequest[] {
    return this.requests.slice(from);
  }

  /** The one request each of two clients makes for the same operation: talkgate's, then the SDK's. */
  async pair(
    talkgate: () => Promise<unknown>,
    sdk: () => Promise<unknown>,
  ): Promise<[CapturedRequest, CapturedRequest]> {
    const at = this.requests.length;
    await talkgate();
    const mid = this.requests.length;
    await sdk();
    const sent = [this.requests.length - mid, mid - at];
    if (sent[0] !== 1 || sent[1] !== 1)
      throw new Error(`expected one request from each client, got ${sent[1]} and ${sent[0]}`);
    return [this.requests[at]!, this.requests[mid]!];
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/**
 * Points every axios instance created from now on (and axios's default one)
 * at `target` for URLs under `origin`; returns the undo. axios is the CommonJS
 * module the SDKs require, not an ESM copy.
 */
export function redirectAxios(origin: string, target: string): () => void {
  type Config = { url?: string; baseURL?: string };
  type Instance = {
    interceptors: { request: { use(f: (c: Config) => Config): number; eject(id: number): void } };
  };
  const axios = createRequire(import.meta.url)("axios") as Instance & { create(...a: unknown[]): Instance };
  const rewrite = (config: Config): Config => {
    for (const key of ["url", "baseURL"] as const)
      if (config[key]?.startsWith(origin)) config[key] = target + config[key]!.slice(origin.length);
    return config;
  };
  const create = axios.create;
  axios.create = (...args: unknown[]) => {
    const instance = create.apply(axios, args);
    instance.interceptors.request.use(rewrite);
    return instance;
  };
  const id = axios.interceptors.request.use(rewrite);
  return () => {
    axios.create = create;
    axios.interceptors.request.eject(id);
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", () => resolve(raw));
  });
}

function parseBody(raw: string, contentType: string): Record<string, unknown> {
  if (raw === "") return {};
  if (contentType === "application/json") {
    const value = JSON.parse(raw) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : { value };
  }
  return fields(new URLSearchParams(raw));
}

function fields(params: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name of new Set(params.keys())) {
    const all = params.getAll(name);
    out[name] = all.length === 1 ? all[0]! : all;
  }
  return out;
}
