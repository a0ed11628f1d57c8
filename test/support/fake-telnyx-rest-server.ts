/**
 * A local server speaking the Telnyx REST calls talkgate makes, in their
 * documented shapes: an account-scoped TeXML call ("Initiate an outbound
 * call", `POST /v2/texml/Accounts/{account_sid}/Calls`, JSON
 * `{ApplicationSid, From, To, Texml, StatusCallback..., MachineDetection,
 * AsyncAmd...}`, answered `{from, to, status}` as the API reference shows,
 * or with `call_sid` too when `answerCallSid`), after which Telnyx posts the
 * `initiated` status callback (CallSid) when `StatusCallbackEvent` asks for it
 * (`deliver`); the connection-scoped `POST /v2/texml/calls/{connection_id}`
 * (answered `{call_sid, from, to, status}`), which takes only From, To,
 * Method, Texml and Url: anything else is recorded as `ignored`;
 * and the Call Control `hangup`, `transfer` (`to`, optional `audio_url`,
 * `command_id`) and `send_dtmf` (`digits` of 0-9, A-D, *, #, w, W) actions
 * (`POST /v2/calls/{call_control_id}/actions/...`, answered
 * `{data: {result: "ok"}}`; a call already over answers 422 with error
 * 90018; a command whose `command_id` was already seen for the call is
 * ignored and answered ok, as Telnyx documents). The API key is checked as a Bearer token (401 otherwise); errors
 * use Telnyx's `{errors: [{code, title, detail}]}`. Test-only.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { telnyxCallControlId } from "./telnyx-stream-client.js";

export interface TelnyxRestRequest {
  method: string;
  path: string;
  /** The path's call or connection id, decoded. */
  id: string | undefined;
  body: Record<string, unknown>;
  /** The call_sid a TeXML call request is given, known as soon as it arrives. */
  callSid?: string;
  /** Fields of a connection-scoped TeXML call that endpoint does not take (dropped by Telnyx). */
  ignored?: string[];
}

export interface FakeTelnyxRestServerOptions {
  /** The account's id (`account_sid` of account-scoped TeXML calls). Default "telnyx-account-1". */
  accountSid?: string;
  /** Answer account-scoped calls with `call_sid` too (the reference shows only from, to, status). Default false. */
  answerCallSid?: boolean;
  /** Posts a status callback as Telnyx does (signed form to the StatusCallback URL). */
  deliver?: (url: string, form: Record<string, string>) => Promise<unknown>;
}

/** What the connection-scoped TeXML call takes (the telnyx SDK's CallCreateParams; the API reference). */
const CONNECTION_SCOPED_FIELDS = new Set(["From", "To", "Method", "Texml", "Url"]);

export class FakeTelnyxRestServer {
  readonly requests: TelnyxRestRequest[] = [];
  /** Calls that are over: a hang-up answers 90018. */
  readonly ended = new Set<string>();
  readonly #server: Server;
  #waiters: Array<() => void> = [];
  #held: Array<() => void> = [];
  url = "";
  /** While true, answers to TeXML call requests wait for `releaseCreates()`. */
  holdCreates = false;
  /** Answers TeXML call requests with a 500. */
  failCreates = false;
  /** Actions refused with 422 (invalid parameters). */
  readonly refuseActions = new Set<string>();
  /** The next this-many actions answer 500, as during an outage. */
  failActions = 0;
  /** Commands carried out (not ignored as repeats), by action. */
  readonly performed: TelnyxRestRequest[] = [];
  readonly #commandIds = new Set<string>();

  readonly accountSid: string;
  readonly #options: FakeTelnyxRestServerOptions;

  constructor(
    readonly apiKey: string,
    readonly connectionId: string,
    options: FakeTelnyxRestServerOptions = {},
  ) {
    this.#options = options;
    this.accountSid = options.accountSid ?? "telnyx-account-1";
    this.#server = createServer((req, res) => {
      let raw = "";
      req.on("data", (c: Buffer) => (raw += c.toString()));
      req.on("end", () => {
        const json = (status: number, value: unknown): void => {
          res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(value));
        };
        const error = (status: number, code: string, title: string, detail = title): void =>
          json(status, { errors: [{ code, title, detail }] });
        if (req.headers.authorization !== `Bearer ${apiKey}`)
          return error(401, "10009", "Authentication failed", "The API key is missing or invalid.");
        let body: Record<string, unknown> = {};
        try {
          const parsed = raw ? (JSON.parse(raw) as unknown) : {};
          if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error();
          body = parsed as Record<string, unknown>;
        } catch {
          return error(400, "10015", "Bad Request", "The request body is not JSON.");
        }
        const path = req.url ?? "";
        const accountCalls = /^\/v2\/texml\/Accounts\/([^/]+)\/Calls$/.exec(path);
        if (req.method === "POST" && accountCalls)
          return this.#accountCall(accountCalls[1]!, path, body, json, error);
        const texml = /^\/v2\/texml\/calls\/([^/]+)$/.exec(path);
        const action = /^\/v2\/calls\/([^/]+)\/actions\/(hangup|transfer|send_dtmf)$/.exec(path);
        const id = decodeURIComponent((texml ?? action)?.[1] ?? "") || undefined;
        const record: TelnyxRestRequest = { method: req.method ?? "", path, id, body };
        if (req.method === "POST" && texml) {
          if (id !== connectionId) {
            this.#record(record);
            return error(404, "10005", "Resource not found", "No such connection.");
          }
          record.callSid = telnyxCallControlId();
          record.ignored = Object.keys(body).filter((k) => !CONNECTION_SCOPED_FIELDS.has(k));
          this.#record(record);
          if (typeof body["From"] !== "string" || typeof body["To"] !== "string")
            return error(422, "10032", "Invalid parameters", "From and To are required.");
          if (this.failCreates) return error(500, "10007", "Unexpected error");
          const answer = (): void =>
            json(200, { call_sid: record.callSid, from: body["From"], to: body["To"], status: "queued" });
          if (this.holdCreates) this.#held.push(answer);
          else answer();
          return;
        }
        this.#record(record);
        if (req.method === "POST" && action) {
          if (this.ended.has(id!)) return error(422, "90018", "Call has already ended");
          if (this.failActions > 0) {
            this.failActions--;
            return error(500, "10007", "Unexpected error");
          }
          if (this.refuseActions.has(action[2]!))
            return error(422, "10032", "Invalid parameters", `${action[2]} refused.`);
          if (action[2] === "transfer" && typeof body["to"] !== "string")
            return error(422, "10032", "Invalid parameters", "to is required.");
          if (
            action[2] === "transfer" &&
            body["audio_url"] !== undefined &&
            !/^https?:\/\//.test(String(body["audio_url"]))
          )
            return error(422, "10032", "Invalid parameters", "audio_url must be a URL.");
          if (action[2] === "send_dtmf" && !/^[0-9A-D*#wW]+$/.test(String(body["digits"] ?? "")))
            return error(422, "10032", "Invalid parameters", "digits: 0-9, A-D, *, #, w, W.");
          const commandId =
            typeof body["command_id"] === "string" ? `${id}/${body["command_id"]}` : undefined;
          if (commandId !== undefined && this.#commandIds.has(commandId))
            return json(200, { data: { result: "ok" } });
          if (commandId !== undefined) this.#commandIds.add(commandId);
          this.performed.push(record);
          if (action[2] === "hangup") this.ended.add(id!);
          return json(200, { data: { result: "ok" } });
        }
        return error(404, "10005", "Resource not found");
      });
    });
  }

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this.url;
  }

  waitFor(predicate: (r: TelnyxRestRequest) => boolean): Promise<TelnyxRestRequest> {
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

  releaseCreates(): void {
    this.holdCreates = false;
    for (const answer of this.#held.splice(0)) answer();
  }

  async close(): Promise<void> {
    this.releaseCreates();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** "Initiate an outbound call": answered as documented, then the `initiated` status callback. */
  #accountCall(
    account: string,
    path: string,
    body: Record<string, unknown>,
    json: (status: number, value: unknown) => void,
    error: (status: number, code: string, title: string, detail?: string) => void,
  ): void {
    const record: TelnyxRestRequest = { method: "POST", path, id: decodeURIComponent(account), body };
    if (record.id !== this.accountSid || body["ApplicationSid"] !== this.connectionId) {
      this.#record(record);
      return error(404, "10005", "Resource not found", "No such account or application.");
    }
    record.callSid = telnyxCallControlId();
    this.#record(record);
    if (typeof body["From"] !== "string" || typeof body["To"] !== "string")
      return error(422, "10032", "Invalid parameters", "From and To are required.");
    if (this.failCreates) return error(500, "10007", "Unexpected error");
    const answer = (): void => {
      json(200, {
        from: body["From"],
        to: body["To"],
        status: "queued",
        ...(this.#options.answerCallSid ? { call_sid: record.callSid } : {}),
      });
      const events = String(body["StatusCallbackEvent"] ?? "").split(/\s+/);
      const url = body["StatusCallback"];
      if (this.#options.deliver && typeof url === "string" && events.includes("initiated"))
        void this.#options
          .deliver(url, {
            AccountSid: this.accountSid,
            CallSid: record.callSid!,
            CallSidLegacy: record.callSid!,
            CallStatus: "initiated",
            ConnectionId: this.connectionId,
            From: String(body["From"]),
            To: String(body["To"]),
            Direction: "outbound-api",
          })
          .catch(() => {});
    };
    if (this.holdCreates) this.#held.push(answer);
    else answer();
  }

  #record(r: TelnyxRestRequest): void {
    this.requests.push(r);
    for (const w of [...this.#waiters]) w();
  }
}
