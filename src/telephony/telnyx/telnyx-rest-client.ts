/**
 * The Telnyx REST calls telephony needs, over fetch, with the API key as a
 * Bearer token:
 * - dial: `POST /v2/texml/Accounts/{account_sid}/Calls` ("Initiate an
 *   outbound call": `ApplicationSid` = the TeXML application's id, the answer
 *   TeXML inline as `Texml`, `StatusCallback*`, and for answering-machine
 *   detection `MachineDetection` / `AsyncAmd*`). The connection-scoped
 *   `POST /v2/texml/calls/{connection_id}` takes only From, To, Method,
 *   Texml and Url (the telnyx SDK's `CallCreateParams` and the API
 *   reference), so status callbacks and detection sent there may be dropped.
 *   The account-scoped answer is documented as `{from, to, status}`: when it
 *   names no call (`call_sid` / `sid`), the call is named by its first status
 *   callback (`callIdFromStatus`; `initiated` is among the events asked for);
 *   a call_sid is the call's call_control_id;
 * - hang up: Call Control `POST /v2/calls/{call_control_id}/actions/hangup`
 *   (a call already over, error 90018, counts as hung up);
 * - transfer: Call Control `POST /v2/calls/{call_control_id}/actions/transfer`
 *   `{to, audio_url?, command_id}` (`audio_url`: a WAV or MP3 file played to
 *   the destination when it answers, before the call is bridged: the briefing);
 * - DTMF: Call Control `POST /v2/calls/{call_control_id}/actions/send_dtmf`
 *   `{digits, command_id}` (0-9, A-D, *, #; `w` pauses 0.5 s).
 * Telnyx ignores a command whose `command_id` it has already seen for the
 * call, so both may be repeated after an outage.
 * The base URL is configurable, so tests point it at a local server
 * speaking the same shapes.
 */
import { TalkError } from "../../core/index.js";
import type {
  CarrierCall,
  CarrierDialRequest,
  CarrierRestClient,
  TransferOptions,
} from "../carrier/carrier-protocol.js";
import { telnyxAmdParams } from "./telnyx-amd.js";
import { connectStreamTexml } from "./texml.js";

export interface TelnyxRestClientOptions {
  /** TELNYX_API_KEY. Required; never logged. */
  apiKey: string;
  /** The TeXML application's id (`ApplicationSid`) calls are placed from; without it `dial` is refused. */
  connectionId?: string | undefined;
  /** The account's id (`account_sid`, a TeXML webhook's `AccountSid`); without it `dial` is refused. */
  accountSid?: string | undefined;
  /** API base. Default "https://api.telnyx.com". */
  baseUrl?: string | undefined;
  /** Upper bound on each request, ms. Default 10 000. */
  timeoutMs?: number;
}

/** Telnyx's "call has already ended" error code: a hang-up that finds the call over is done. */
const CALL_ALREADY_ENDED = "90018";

export class TelnyxRestClient implements CarrierRestClient {
  readonly #authorization: string;
  readonly #connectionId: string | undefined;
  readonly #accountSid: string | undefined;
  readonly #baseUrl: string;
  readonly #timeoutMs: number;

  constructor(options: TelnyxRestClientOptions) {
    if (!options.apiKey)
      throw new TalkError("config_invalid", "The Telnyx REST client needs telephony.telnyx.apiKey.");
    const baseUrl = (options.baseUrl ?? "https://api.telnyx.com").replace(/\/+$/, "");
    if (!/^https?:\/\//.test(baseUrl))
      throw new TalkError("config_invalid", "telephony.telnyx.apiBaseUrl must be http(s).");
    const timeoutMs = options.timeoutMs ?? 10_000;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
      throw new TalkError("config_invalid", "timeoutMs must be a positive integer.");
    this.#authorization = `Bearer ${options.apiKey}`;
    this.#connectionId = options.connectionId || undefined;
    this.#accountSid = options.accountSid || undefined;
    this.#baseUrl = baseUrl;
    this.#timeoutMs = timeoutMs;
  }

  /** The account-scoped answer may not name the call: its first status callback does. */
  readonly callIdFromStatus = true;

  async dial(request: CarrierDialRequest): Promise<CarrierCall> {
    if (this.#connectionId === undefined || this.#accountSid === undefined)
      throw new TalkError(
        "capability_unsupported",
        "Telnyx outbound calls need telephony.telnyx.accountSid (TELNYX_ACCOUNT_SID) and connectionId (TELNYX_CONNECTION_ID).",
      );
    const json = await this.#post(
      `/v2/texml/Accounts/${pathSegment(this.#accountSid)}/Calls`,
      telnyxDialBody(this.#connectionId, request),
      request.signal,
    );
    // Documented flat (`{from, to, status}`); a `data` wrapper is read too.
    const call = (isObject(json["data"]) ? json["data"] : json) as Record<string, unknown>;
    const named = call["call_sid"] ?? call["sid"];
    const callId = typeof named === "string" && named.length > 0 ? named : undefined;
    return { callId, status: typeof call["status"] === "string" ? call["status"] : "queued" };
  }

  async hangUp(callId: string, options: { signal: AbortSignal; ringing?: boolean }): Promise<void> {
    try {
      await this.#post(`/v2/calls/${pathSegment(callId)}/actions/hangup`, {}, options.signal);
    } catch (err) {
      if (err instanceof TalkError && err.details?.["telnyxCode"] === CALL_ALREADY_ENDED) return;
      throw err;
    }
  }

  readonly dtmfIdempotent = true;

  async transfer(
    callId: string,
    destination: string,
    signal: AbortSignal,
    options: TransferOptions = {},
  ): Promise<void> {
    await this.#post(
      `/v2/calls/${pathSegment(callId)}/actions/transfer`,
      {
        to: destination,
        ...(options.briefingUrl ? { audio_url: options.briefingUrl } : {}),
        ...(options.requestId ? { command_id: options.requestId } : {}),
      },
      signal,
    );
  }

  async sendDtmf(
    callId: string,
    digits: string,
    signal: AbortSignal,
    options: { requestId?: string } = {},
  ): Promise<void> {
    await this.#post(
      `/v2/calls/${pathSegment(callId)}/actions/send_dtmf`,
      { digits, ...(options.requestId ? { command_id: options.requestId } : {}) },
      signal,
    );
  }

  async #post(
    path: string,
    body: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(`${this.#baseUrl}${path}`, {
        method: "POST",
        headers: {
          authorization: this.#authorization,
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.#timeoutMs)]),
      });
    } catch (cause) {
      if (signal.aborted) throw new TalkError("cancelled", "The Telnyx request was cancelled.", { cause });
      throw new TalkError(
        "provider_unavailable",
        `Telnyx REST API unreachable: ${(cause as Error).message}`,
        {
          cause,
        },
      );
    }
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(text) as unknown;
      if (isObject(parsed)) json = parsed;
    } catch {
      // Telnyx answers JSON; anything else is reported by status below.
    }
    if (!response.ok) {
      const first = Array.isArray(json["errors"]) && isObject(json["errors"][0]) ? json["errors"][0] : {};
      const detail = [first["title"], first["detail"]].filter((s) => typeof s === "string").join(": ");
      throw new TalkError(
        response.status >= 500 || response.status === 429 ? "provider_unavailable" : "provider_error",
        `Telnyx REST ${response.status}: ${detail || "request failed"}`,
        {
          details: {
            status: response.status,
            telnyxCode: first["code"] === undefined ? null : String(first["code"]),
          },
        },
      );
    }
    return json;
  }
}

/** The body of an outbound TeXML call (account-scoped "Initiate an outbound call"). */
export function telnyxDialBody(applicationSid: string, request: CarrierDialRequest): Record<string, unknown> {
  return {
    ApplicationSid: applicationSid,
    From: request.from,
    To: request.to,
    Texml: connectStreamTexml(request.stream),
    StatusCallback: request.statusCallbackUrl,
    StatusCallbackMethod: "POST",
    StatusCallbackEvent: "initiated ringing answered completed",
    ...telnyxAmdParams(request.machineDetection),
  };
}

/**
 * A call id as a path segment, encoded as the telnyx SDK encodes path
 * parameters (`encodeURIPath`: RFC 3986 pchars stay, so a `v3:` call
 * control id keeps its `:`); `.` and `..` are refused, as the SDK refuses them.
 */
export function pathSegment(id: string): string {
  if (id === "" || id === "." || id === "..")
    throw new TalkError("invalid_params", `"${id}" is not a Telnyx call id.`);
  return id.replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@]+/g, encodeURIComponent);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
