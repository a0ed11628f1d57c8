/**
 * A local server speaking the Vonage Voice API calls talkgate makes, from
 * Vonage's API reference: create a call (`POST /v1/calls` with `to`, `from`,
 * an inline `ncco` and `event_url`; 201 `{uuid, status: "started",
 * direction: "outbound", conversation_uuid}`) and modify one (`PUT
 * /v1/calls/{uuid}` with `{action: "hangup"}` or `{action: "transfer",
 * destination: {type: "ncco", ncco}}`; 204) and play DTMF into one (`PUT
 * /v1/calls/{uuid}/dtmf` with `{digits}`; 200 `{message: "DTMF sent", uuid}`). Requests must carry
 * `Authorization: Bearer <JWT>` signed RS256 with the application's key and
 * naming the application (401 otherwise, like the real API). Errors use
 * Vonage's `{type, title, detail}` shape. Test-only.
 */
import { generateKeyPairSync, verify, type KeyObject } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface VonageRestRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
  /** The uuid a create request is given. */
  uuid?: string;
}

/** A fresh RSA key pair, as a Vonage application has (the private key in PEM for the config). */
export function vonageApplicationKeys(): { privateKeyPem: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(), publicKey };
}

export class FakeVonageRestServer {
  readonly requests: VonageRestRequest[] = [];
  readonly #server: Server;
  readonly #calls = new Set<string>();
  #waiters: Array<() => void> = [];
  url = "";
  /** Answers call creation with a 500, as during an outage. */
  failCreates = false;
  /** Refuses a call create that asks for Advanced Machine Detection (an account without the feature). */
  refuseAmd = false;
  /** Requests refused for their token. */
  unauthorized = 0;
  /** Transfers / DTMF refused with 400, as for a call in no state to take them. */
  readonly refuse = new Set<"transfer" | "dtmf">();

  constructor(
    readonly applicationId: string,
    publicKey: KeyObject,
  ) {
    this.#server = createServer((req, res) => {
      let raw = "";
      req.on("data", (c: Buffer) => (raw += c.toString()));
      req.on("end", () => {
        const json = (status: number, value?: unknown): void => {
          if (value === undefined) res.writeHead(status).end();
          else res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
        };
        const error = (status: number, title: string, detail: string): void =>
          json(status, { type: `https://developer.nexmo.com/api-errors#${status}`, title, detail });
        if (!this.#authorized(req.headers.authorization, publicKey)) {
          this.unauthorized++;
          return error(401, "Unauthorized", "Invalid token");
        }
        let body: Record<string, unknown>;
        try {
          body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
        } catch {
          return error(400, "Bad Request", "The body is not JSON");
        }
        const path = req.url ?? "";
        const method = req.method ?? "";
        if (method === "POST" && path === "/v1/calls") {
          const uuid = crypto.randomUUID();
          this.#record({ method, path, body, uuid });
          if (this.failCreates) return error(500, "Internal Error", "Try again later");
          if (this.refuseAmd && body["advanced_machine_detection"] !== undefined)
            return error(403, "Forbidden", "Advanced Machine Detection is not enabled for this account");
          const to = (body["to"] as Array<Record<string, unknown>> | undefined)?.[0];
          const ncco = body["ncco"];
          if (to?.["type"] !== "phone" || typeof to["number"] !== "string" || !Array.isArray(ncco))
            return error(400, "Bad Request", "to and ncco are required");
          this.#calls.add(uuid);
          return json(201, {
            uuid,
            status: "started",
            direction: "outbound",
            conversation_uuid: `CON-${crypto.randomUUID()}`,
          });
        }
        const m = /^\/v1\/calls\/([0-9a-f-]{36})$/.exec(path);
        const dtmf = /^\/v1\/calls\/([0-9a-f-]{36})\/dtmf$/.exec(path);
        this.#record({ method, path, body });
        if (method === "PUT" && dtmf) {
          if (!this.#calls.has(dtmf[1]!)) return error(404, "Not Found", "Call not found");
          if (this.refuse.has("dtmf")) return error(400, "Bad Request", "DTMF refused");
          if (typeof body["digits"] !== "string" || !/^[0-9*#]+$/.test(body["digits"]))
            return error(400, "Bad Request", "digits is required");
          return json(200, { message: "DTMF sent", uuid: dtmf[1] });
        }
        if (method === "PUT" && m) {
          if (!this.#calls.has(m[1]!)) return error(404, "Not Found", "Call not found");
          const action = body["action"];
          if (action === "hangup") {
            this.#calls.delete(m[1]!);
            return json(204);
          }
          if (
            action === "transfer" &&
            (body["destination"] as { type?: unknown } | undefined)?.type === "ncco"
          )
            return this.refuse.has("transfer") ? error(400, "Bad Request", "Transfer refused") : json(204);
          return error(400, "Bad Request", "Unknown action");
        }
        return error(404, "Not Found", "No such resource");
      });
    });
  }

  /** A call Vonage knows (an inbound call's uuid, so hang-up and transfer find it). */
  knowCall(uuid: string): void {
    this.#calls.add(uuid);
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this.url;
  }

  waitFor(predicate: (r: VonageRestRequest) => boolean): Promise<VonageRestRequest> {
    return new Promise((resolve) => {
      const check = (): boolean => {
        const hit = this.requests.find(predicate);
        if (hit) {
          this.#waiters = this.#waiters.filter((w) => w !== check);
          resolve(hit);
        }
        return hit !== undefined;
      };
      if (!check()) this.#waiters.push(check);
    });
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  #record(request: VonageRestRequest): void {
    this.requests.push(request);
    for (const w of [...this.#waiters]) w();
  }

  /** RS256 over the token's first two parts with the application's public key; the token names the application and has not expired. */
  #authorized(header: string | undefined, publicKey: KeyObject): boolean {
    const m = /^Bearer ([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/.exec(header ?? "");
    if (!m) return false;
    try {
      const head = JSON.parse(Buffer.from(m[1]!, "base64url").toString()) as Record<string, unknown>;
      const claims = JSON.parse(Buffer.from(m[2]!, "base64url").toString()) as Record<string, unknown>;
      if (head["alg"] !== "RS256") return false;
      if (!verify("sha256", Buffer.from(`${m[1]}.${m[2]}`), publicKey, Buffer.from(m[3]!, "base64url")))
        return false;
      const now = Date.now() / 1000;
      return (
        claims["application_id"] === this.applicationId &&
        typeof claims["jti"] === "string" &&
        typeof claims["iat"] === "number" &&
        typeof claims["exp"] === "number" &&
        claims["exp"] > now
      );
    } catch {
      return false;
    }
  }
}
