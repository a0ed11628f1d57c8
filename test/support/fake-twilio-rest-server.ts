/**
 * A local server speaking the two Twilio REST calls talkgate makes: update a
 * call (`POST /2010-04-01/Accounts/{Sid}/Calls/{CallSid}.json`, Status=completed)
 * and create one (`POST .../Calls.json` with To, From, Twiml, StatusCallback).
 * Basic auth is checked like the real API (401 otherwise). Test-only.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface RestRequest {
  path: string;
  params: URLSearchParams;
  at: number;
  /** The CallSid a create (Calls.json) request is given, known as soon as it arrives. */
  sid?: string;
}

export class FakeTwilioRestServer {
  readonly requests: RestRequest[] = [];
  readonly #server: Server;
  readonly #auth: string;
  #seq = 0;
  #waiters: Array<() => void> = [];
  #held: Array<() => void> = [];
  url = "";
  /**
   * While true, answers to create requests wait for `releaseCreates()`: the
   * call exists at Twilio (its status callbacks may already come) before the
   * dialler has its answer.
   */
  holdCreates = false;
  /** Answers call creation with a 500 (Twilio's error shape), as during an outage. */
  failCreates = false;
  /** Answers the next this-many call updates (hang-up, transfer) with a 503, as during an outage. */
  failUpdates = 0;
  /** Answers call updates with Twilio's 400 for a refused update (e.g. the call is not in progress). */
  refuseUpdates = false;

  constructor(
    readonly accountSid: string,
    authToken: string,
  ) {
    this.#auth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString("base64")}`;
    this.#server = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        const json = (status: number, value: unknown): void => {
          res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
        };
        if (req.headers.authorization !== this.#auth)
          return json(401, { code: 20003, message: "Authenticate", status: 401 });
        const path = req.url ?? "";
        const base = `/2010-04-01/Accounts/${accountSid}/Calls`;
        const create = req.method === "POST" && path === `${base}.json`;
        const sid = create ? `CA${(++this.#seq).toString(16).padStart(32, "0")}` : undefined;
        this.requests.push({
          path,
          params: new URLSearchParams(body),
          at: performance.now(),
          ...(sid ? { sid } : {}),
        });
        for (const w of [...this.#waiters]) w();
        if (sid && this.failCreates)
          return json(500, { code: 20500, message: "Internal Server Error", status: 500 });
        if (sid) {
          const answer = (): void => json(201, { sid, status: "queued", account_sid: accountSid });
          if (this.holdCreates) this.#held.push(answer);
          else answer();
          return;
        }
        const m = new RegExp(`^${base}/(CA[0-9a-zA-Z]+)\\.json$`).exec(path);
        if (req.method === "POST" && m && this.failUpdates > 0) {
          this.failUpdates--;
          return json(503, { code: 20503, message: "Service Unavailable", status: 503 });
        }
        if (req.method === "POST" && m && this.refuseUpdates)
          return json(400, {
            code: 21220,
            message: "Call is not in-progress. Cannot redirect.",
            status: 400,
          });
        if (req.method === "POST" && m)
          return json(200, { sid: m[1], status: new URLSearchParams(body).get("Status") ?? "in-progress" });
        return json(404, { code: 20404, message: "The requested resource was not found", status: 404 });
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this.url;
  }

  waitFor(predicate: (r: RestRequest) => boolean): Promise<RestRequest> {
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

  /** Answers the create requests held so far (and stops holding new ones). */
  releaseCreates(): void {
    this.holdCreates = false;
    for (const answer of this.#held.splice(0)) answer();
  }

  async close(): Promise<void> {
    this.releaseCreates();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
