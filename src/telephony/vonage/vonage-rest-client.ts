/**
 * The Vonage Voice API calls telephony needs, over fetch, authenticated by
 * an RS256 JWT of the application (VONAGE_APPLICATION_ID + the application's
 * private key):
 * - place a call: `POST /v1/calls {to: [{type: "phone", number}], from:
 *   {type: "phone", number}, ncco, event_url: [...], event_method: "POST"}`
 *   → 201 `{uuid, status, direction, conversation_uuid}`;
 * - hang up (or cancel while ringing): `PUT /v1/calls/{uuid} {action: "hangup"}` → 204;
 * - transfer: `PUT /v1/calls/{uuid} {action: "transfer", destination: {type:
 *   "ncco", ncco}}` → 204; the NCCO connects a phone endpoint whose
 *   `onAnswer` URL serves the briefing;
 * - DTMF: `PUT /v1/calls/{uuid}/dtmf {digits}` → 200. Digits, * and # only
 *   (a pause is `capability_unsupported`: played in-band); no request id, so
 *   an outage is reported, not retried.
 * Errors are `{type, title, detail}` JSON. The base URL is configurable, so
 * tests point it at a local server speaking the same shapes.
 */
import type { KeyObject } from "node:crypto";
import { TalkError } from "../../core/index.js";
import type {
  CarrierCall,
  CarrierDialRequest,
  CarrierRestClient,
  TransferOptions,
} from "../carrier/carrier-protocol.js";
import { connectStreamNcco, phoneEndpoint, transferNcco } from "./ncco.js";
import { parsePrivateKey, signRs256 } from "./vonage-jwt.js";
import { vonageAmdParams } from "./vonage-amd.js";

export interface VonageRestClientOptions {
  /** VONAGE_APPLICATION_ID. Required. */
  applicationId: string;
  /** VONAGE_PRIVATE_KEY: the application's RSA private key, PEM. Required; never logged. */
  privateKey: string;
  /** API base. Default "https://api.nexmo.com". */
  baseUrl?: string;
  /** Upper bound on each request, ms. Default 10 000. */
  timeoutMs?: number;
}

export class VonageRestClient implements CarrierRestClient {
  readonly #applicationId: string;
  readonly #key: KeyObject;
  readonly #baseUrl: string;
  readonly #timeoutMs: number;

  constructor(options: VonageRestClientOptions) {
    if (!options.applicationId || !options.privateKey)
      throw new TalkError(
        "config_invalid",
        "The Vonage REST client needs telephony.vonage.applicationId and privateKey.",
      );
    const baseUrl = (options.baseUrl ?? "https://api.nexmo.com").replace(/\/+$/, "");
    if (!/^https?:\/\//.test(baseUrl))
      throw new TalkError("config_invalid", "telephony.vonage.apiBaseUrl must be http(s).");
    const timeoutMs = options.timeoutMs ?? 10_000;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
      throw new TalkError("config_invalid", "timeoutMs must be a positive integer.");
    this.#applicationId = options.applicationId;
    this.#key = parsePrivateKey(options.privateKey);
    this.#baseUrl = baseUrl;
    this.#timeoutMs = timeoutMs;
  }

  async dial(request: CarrierDialRequest): Promise<CarrierCall> {
    const json = await this.#request(
      "POST",
      "/v1/calls",
      {
        to: [phoneEndpoint(request.to)],
        from: phoneEndpoint(request.from),
        ncco: connectStreamNcco(request.stream),
        event_url: [request.statusCallbackUrl],
        event_method: "POST",
        ...vonageAmdParams(request.machineDetection),
      },
      request.signal,
    );
    const uuid = json["uuid"];
    if (typeof uuid !== "string" || uuid.length === 0)
      throw new TalkError("provider_error", "Vonage accepted the call but named no uuid.");
    return { callId: uuid, status: typeof json["status"] === "string" ? json["status"] : "started" };
  }

  async hangUp(callId: string, options: { signal: AbortSignal; ringing?: boolean }): Promise<void> {
    // Vonage has one action for both: a ringing call is cancelled by hanging it up.
    await this.#request(
      "PUT",
      `/v1/calls/${encodeURIComponent(callId)}`,
      { action: "hangup" },
      options.signal,
    );
  }

  async transfer(
    callId: string,
    destination: string,
    signal: AbortSignal,
    options: TransferOptions = {},
  ): Promise<void> {
    await this.#request(
      "PUT",
      `/v1/calls/${encodeURIComponent(callId)}`,
      {
        action: "transfer",
        destination: { type: "ncco", ncco: transferNcco(destination, options.briefingUrl) },
      },
      signal,
    );
  }

  async sendDtmf(callId: string, digits: string, signal: AbortSignal): Promise<void> {
    if (!/^[0-9*#]+$/.test(digits))
      throw new TalkError("capability_unsupported", "Vonage's DTMF request takes digits, * and # only.");
    await this.#request("PUT", `/v1/calls/${encodeURIComponent(callId)}/dtmf`, { digits }, signal);
  }

  async #request(
    method: "POST" | "PUT",
    path: string,
    body: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    let response: Response;
    try {
      response = await fetch(`${this.#baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${signRs256(this.#key, this.#applicationId)}`,
          "content-type": "application/json",
          accept: "application/json",
        },
        body: JSON.stringify(body),
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.#timeoutMs)]),
      });
    } catch (cause) {
      if (signal.aborted) throw new TalkError("cancelled", "The Vonage request was cancelled.", { cause });
      throw new TalkError(
        "provider_unavailable",
        `Vonage Voice API unreachable: ${(cause as Error).message}`,
        {
          cause,
        },
      );
    }
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      const parsed: unknown = text ? JSON.parse(text) : {};
      if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed))
        json = parsed as Record<string, unknown>;
    } catch {
      // 204 has no body; an error that is not JSON is reported by its status below.
    }
    if (!response.ok) {
      const what = [json["title"], json["detail"]].filter((v) => typeof v === "string").join(": ");
      throw new TalkError(
        response.status >= 500 ? "provider_unavailable" : "provider_error",
        `Vonage Voice API ${response.status}: ${what || "request failed"}`,
        {
          details: {
            status: response.status,
            vonageType: typeof json["type"] === "string" ? json["type"] : null,
          },
        },
      );
    }
    return json;
  }
}
