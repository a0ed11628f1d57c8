/**
 * A local server speaking the Plivo Voice REST calls talkgate makes, with
 * Plivo's shapes: `POST /v1/Account/{auth_id}/Call/` (JSON from, to,
 * answer_url, hangup_url) answered `201 {message: "call fired",
 * request_uuid, api_id}`; `DELETE .../Call/{call_uuid}/` and
 * `DELETE .../Request/{request_uuid}/` answered 204 for calls it knows, 404
 * otherwise; the Transfer API (`POST .../Call/{call_uuid}/` with `legs`
 * and `aleg_url`, answered `202 {message: "call transferred"}`) and the
 * Call DTMF API (`POST .../Call/{call_uuid}/DTMF/` with `digits` and `leg`,
 * answered `202 {message: "digits sent"}`). Basic auth (Auth ID : Auth Token) is checked (401 otherwise).
 * `answer(requestUuid)` marks a placed call live under a new CallUUID, as
 * Plivo does when the callee answers. Test-only.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface PlivoRestRequest {
  method: string;
  path: string;
  body: Record<string, unknown>;
  /** The request_uuid a call creation was given. */
  requestUuid?: string;
}

export class FakePlivoRestServer {
  readonly requests: PlivoRestRequest[] = [];
  /** request_uuid -> CallUUID once answered (undefined while ringing). */
  readonly calls = new Map<string, string | undefined>();
  readonly #server: Server;
  readonly #auth: string;
  #waiters: Array<() => void> = [];
  url = "";
  /** Transfers / DTMF refused: 404, as for a call that is not in progress. */
  readonly refuse = new Set<"transfer" | "dtmf">();
  /** The next this-many transfers / DTMF answer 500, as during an outage. */
  failActions = 0;

  constructor(
    readonly authId: string,
    authToken: string,
  ) {
    this.#auth = `Basic ${Buffer.from(`${authId}:${authToken}`).toString("base64")}`;
    this.#server = createServer((req, res) => {
      let text = "";
      req.on("data", (c: Buffer) => (text += c.toString()));
      req.on("end", () => {
        const json = (status: number, value?: unknown): void => {
          if (value === undefined) res.writeHead(status).end();
          else res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
        };
        if (req.headers.authorization !== this.#auth)
          return json(401, { api_id: randomUUID(), error: "authentication failed" });
        let body: Record<string, unknown> = {};
        try {
          body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        } catch {
          return json(400, { api_id: randomUUID(), error: "invalid json" });
        }
        const path = req.url ?? "";
        const base = `/v1/Account/${authId}/`;
        const create = req.method === "POST" && path === `${base}Call/`;
        const requestUuid = create ? randomUUID() : undefined;
        this.requests.push({ method: req.method ?? "", path, body, ...(requestUuid ? { requestUuid } : {}) });
        for (const w of [...this.#waiters]) w();
        if (requestUuid) {
          for (const field of ["from", "to", "answer_url"])
            if (typeof body[field] !== "string" || !body[field])
              return json(400, { api_id: randomUUID(), error: `${field} is required` });
          this.calls.set(requestUuid, undefined);
          return json(201, { api_id: randomUUID(), message: "call fired", request_uuid: requestUuid });
        }
        const hangup = new RegExp(`^${base}Call/([0-9a-f-]+)/$`).exec(path);
        if (req.method === "DELETE" && hangup) {
          const known = [...this.calls.values()].includes(hangup[1]!);
          return known ? json(204) : json(404, { api_id: randomUUID(), error: "not found" });
        }
        const transfer = req.method === "POST" && new RegExp(`^${base}Call/([0-9a-f-]+)/$`).test(path);
        const dtmf = req.method === "POST" && new RegExp(`^${base}Call/([0-9a-f-]+)/DTMF/$`).test(path);
        if (transfer || dtmf) {
          if (this.failActions > 0) {
            this.failActions--;
            return json(500, { api_id: randomUUID(), error: "internal error" });
          }
          if (this.refuse.has(transfer ? "transfer" : "dtmf"))
            return json(404, { api_id: randomUUID(), error: "not found" });
          if (transfer) {
            const legs = body["legs"] ?? "aleg";
            if (
              legs !== "aleg" ||
              typeof body["aleg_url"] !== "string" ||
              !/^https?:\/\//.test(body["aleg_url"])
            )
              return json(400, { api_id: randomUUID(), error: "aleg_url is required for legs aleg" });
            return json(202, { api_id: randomUUID(), message: "call transferred" });
          }
          if (typeof body["digits"] !== "string" || !/^[0-9*#]+$/.test(body["digits"]))
            return json(400, { api_id: randomUUID(), error: "digits is required" });
          return json(202, { api_id: randomUUID(), message: "digits sent" });
        }
        const cancel = new RegExp(`^${base}Request/([0-9a-f-]+)/$`).exec(path);
        if (req.method === "DELETE" && cancel) {
          const ringing = this.calls.has(cancel[1]!) && this.calls.get(cancel[1]!) === undefined;
          return ringing ? json(204) : json(404, { api_id: randomUUID(), error: "not found" });
        }
        return json(404, { api_id: randomUUID(), error: "not found" });
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this.url;
  }

  /** The callee answered: the call is live under a new CallUUID. */
  answer(requestUuid: string): string {
    const callUuid = randomUUID();
    this.calls.set(requestUuid, callUuid);
    return callUuid;
  }

  waitFor(predicate: (r: PlivoRestRequest) => boolean): Promise<PlivoRestRequest> {
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
}
