/**
 * The Plivo Voice REST calls telephony needs, over fetch, with Basic auth
 * (Auth ID : Auth Token) under `/v1/Account/{auth_id}/`:
 * - place a call: `POST Call/` (JSON `from`, `to`, `answer_url`,
 *   `hangup_url`), answered `201 {message: "call fired", request_uuid}`.
 *   Plivo takes no inline XML: it fetches the answer document from
 *   `answer_url` once the call is answered, so the dial hands it our voice
 *   webhook URL carrying the dial's stream token (CarrierDialRequest.answerUrl);
 * - hang up a live call: `DELETE Call/{call_uuid}/` (204); cancel one still
 *   queued or ringing: `DELETE Request/{request_uuid}/` (204);
 * - transfer: `POST Call/{call_uuid}/ {legs: "aleg", aleg_url, aleg_method}`
 *   (202 "call transferred") moves the call to the XML our transfer document
 *   route serves (TransferOptions.documentUrl: a `<Dial>` whose callee hears
 *   the briefing first, plivo-transfer-xml.ts);
 * - DTMF: `POST Call/{call_uuid}/DTMF/ {digits, leg: "aleg"}` (202 "digits
 *   sent"). Plivo documents digits only, no pause: digits with `w` are
 *   `capability_unsupported` here (the call plays them in-band). Not
 *   repeatable (no request id), so an outage is reported, not retried.
 *
 * A call placed here is known by its request_uuid until it is answered; the
 * stream's start then names its CallUUID. `PlivoCallIds` remembers the pair
 * (learnt by the stream codec), so hanging up a call known by its
 * request_uuid ends the live call.
 */
import { TalkError } from "../../core/index.js";
import type {
  CarrierCall,
  CarrierDialRequest,
  CarrierRestClient,
  TransferOptions,
} from "../carrier/carrier-protocol.js";
import { plivoAmdParams } from "./plivo-amd.js";

export interface PlivoRestClientOptions {
  /** PLIVO_AUTH_ID. Required. */
  authId: string;
  /** PLIVO_AUTH_TOKEN. Required; never logged. */
  authToken: string;
  /** API base. Default "https://api.plivo.com". */
  baseUrl?: string;
  /** Upper bound on each request, ms. Default 10 000. */
  timeoutMs?: number;
  /** The request_uuid -> CallUUID pairs learnt from streams. */
  ids?: PlivoCallIds;
}

/** request_uuid -> CallUUID of answered calls placed here (bounded: the oldest is forgotten). */
export class PlivoCallIds {
  readonly #max: number;
  readonly #ids = new Map<string, string>();

  constructor(max = 10_000) {
    this.#max = max;
  }

  link(requestUuid: string, callUuid: string): void {
    if (requestUuid === callUuid) return;
    this.#ids.delete(requestUuid);
    this.#ids.set(requestUuid, callUuid);
    if (this.#ids.size > this.#max) this.#ids.delete(this.#ids.keys().next().value as string);
  }

  callUuidOf(id: string): string | undefined {
    return this.#ids.get(id);
  }
}

export class PlivoRestClient implements CarrierRestClient {
  readonly #authorization: string;
  readonly #base: string;
  readonly #timeoutMs: number;
  readonly #ids: PlivoCallIds;

  constructor(options: PlivoRestClientOptions) {
    if (!options.authId || !options.authToken)
      throw new TalkError(
        "config_invalid",
        "The Plivo REST client needs telephony.plivo.authId and authToken.",
      );
    const baseUrl = (options.baseUrl ?? "https://api.plivo.com").replace(/\/+$/, "");
    if (!/^https?:\/\//.test(baseUrl))
      throw new TalkError("config_invalid", "telephony.plivo.apiBaseUrl must be http(s).");
    const timeoutMs = options.timeoutMs ?? 10_000;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
      throw new TalkError("config_invalid", "timeoutMs must be a positive integer.");
    this.#authorization = `Basic ${Buffer.from(`${options.authId}:${options.authToken}`).toString("base64")}`;
    this.#base = `${baseUrl}/v1/Account/${encodeURIComponent(options.authId)}/`;
    this.#timeoutMs = timeoutMs;
    this.#ids = options.ids ?? new PlivoCallIds();
  }

  async dial(request: CarrierDialRequest): Promise<CarrierCall> {
    if (!request.answerUrl)
      throw new TalkError("invalid_params", "A Plivo dial needs the answer URL Plivo fetches (answerUrl).");
    const body = {
      from: plivoNumber(request.from),
      to: plivoNumber(request.to),
      answer_url: request.answerUrl,
      answer_method: "POST",
      hangup_url: request.statusCallbackUrl,
      hangup_method: "POST",
      ...plivoAmdParams(request.machineDetection),
    };
    const { status, json } = await this.#request("POST", "Call/", body, request.signal);
    const requestUuid = json["request_uuid"];
    if (typeof requestUuid !== "string" || requestUuid.length === 0)
      throw new TalkError("provider_error", `Plivo REST ${status}: no request_uuid in the answer.`);
    return { callId: requestUuid, status: "queued" };
  }

  async hangUp(callId: string, options: { signal: AbortSignal; ringing?: boolean }): Promise<void> {
    const live = this.#ids.callUuidOf(callId);
    if (options.ringing && live === undefined) {
      await this.#request("DELETE", `Request/${encodeURIComponent(callId)}/`, undefined, options.signal);
      return;
    }
    try {
      await this.#request("DELETE", `Call/${encodeURIComponent(live ?? callId)}/`, undefined, options.signal);
    } catch (err) {
      // A call placed here and never streamed is still known by its request_uuid only.
      const notFound = err instanceof TalkError && err.details?.["status"] === 404;
      if (!notFound || live !== undefined) throw err;
      await this.#request("DELETE", `Request/${encodeURIComponent(callId)}/`, undefined, options.signal);
    }
  }

  async transfer(
    callId: string,
    _destination: string,
    signal: AbortSignal,
    options: TransferOptions = {},
  ): Promise<void> {
    if (!options.documentUrl)
      throw new TalkError("capability_unsupported", "A Plivo transfer needs the URL of its XML (aleg_url).");
    const live = this.#ids.callUuidOf(callId) ?? callId;
    await this.#request(
      "POST",
      `Call/${encodeURIComponent(live)}/`,
      { legs: "aleg", aleg_url: options.documentUrl, aleg_method: "POST" },
      signal,
    );
  }

  async sendDtmf(callId: string, digits: string, signal: AbortSignal): Promise<void> {
    if (!/^[0-9*#]+$/.test(digits))
      throw new TalkError("capability_unsupported", "Plivo's DTMF API takes digits, * and # only.");
    const live = this.#ids.callUuidOf(callId) ?? callId;
    await this.#request("POST", `Call/${encodeURIComponent(live)}/DTMF/`, { digits, leg: "aleg" }, signal);
  }

  async #request(
    method: "POST" | "DELETE",
    path: string,
    body: Record<string, unknown> | undefined,
    signal: AbortSignal,
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    let response: Response;
    try {
      response = await fetch(this.#base + path, {
        method,
        headers: {
          authorization: this.#authorization,
          ...(body ? { "content-type": "application/json" } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.#timeoutMs)]),
      });
    } catch (cause) {
      if (signal.aborted) throw new TalkError("cancelled", "The Plivo request was cancelled.", { cause });
      throw new TalkError("provider_unavailable", `Plivo REST API unreachable: ${(cause as Error).message}`, {
        cause,
      });
    }
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      const parsed = text ? (JSON.parse(text) as unknown) : {};
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
        json = parsed as Record<string, unknown>;
    } catch {
      // Plivo answers JSON (or nothing, 204); anything else is reported by status below.
    }
    if (!response.ok) {
      const message = typeof json["error"] === "string" ? json["error"] : "request failed";
      throw new TalkError(
        response.status >= 500 ? "provider_unavailable" : "provider_error",
        `Plivo REST ${response.status}: ${message.slice(0, 200)}`,
        { details: { status: response.status, apiId: json["api_id"] ?? null } },
      );
    }
    return { status: response.status, json };
  }
}

/** Plivo writes numbers as country code + number, without E.164's `+`; SIP URIs go as they are. */
function plivoNumber(address: string): string {
  return /^\+\d+$/.test(address) ? address.slice(1) : address;
}
