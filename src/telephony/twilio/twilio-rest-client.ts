/**
 * The Twilio REST calls telephony needs, over fetch: end a call
 * (`POST /2010-04-01/Accounts/{Sid}/Calls/{CallSid}.json` Status=completed),
 * place one (`POST .../Calls.json` with inline TwiML and a status callback)
 * and transfer one (the live call's TwiML replaced by a `<Dial>`). Basic auth with the Account SID and auth token. The base URL is
 * configurable, so tests point it at a local server speaking the same shape.
 * Not the SDK's REST client: it costs ~140 ms and ~8 MB to load for two POSTs.
 */
import { TalkError } from "../../core/index.js";
import type { CarrierCall, CarrierDialRequest, CarrierRestClient } from "../carrier/carrier-protocol.js";
import { twilioAmdParams } from "./twilio-amd.js";
import { connectStreamTwiml, dialTwiml } from "./twiml.js";

/** Options of the REST client. */
export interface TwilioRestClientOptions {
  /** Account SID (TWILIO_ACCOUNT_SID). Required. */
  accountSid: string;
  /** Auth token (TWILIO_AUTH_TOKEN). Required; never logged. */
  authToken: string;
  /** API base. Default "https://api.twilio.com". */
  baseUrl?: string;
  /** Upper bound on each request, ms. Default 10 000. */
  timeoutMs?: number;
}

export interface CreateCallRequest {
  to: string;
  from: string;
  twiml: string;
  statusCallback?: string;
  /** More form fields (answering-machine detection). */
  extra?: Record<string, string>;
  signal: AbortSignal;
}

export interface TwilioCallResource {
  sid: string;
  status: string;
}

export class TwilioRestClient implements CarrierRestClient {
  readonly #accountSid: string;
  readonly #authorization: string;
  readonly #baseUrl: string;
  readonly #timeoutMs: number;

  constructor(options: TwilioRestClientOptions) {
    if (!options.accountSid || !options.authToken) {
      throw new TalkError(
        "config_invalid",
        "The Twilio REST client needs telephony.twilio.accountSid and authToken.",
      );
    }
    const baseUrl = (options.baseUrl ?? "https://api.twilio.com").replace(/\/+$/, "");
    if (!/^https?:\/\//.test(baseUrl))
      throw new TalkError("config_invalid", "telephony.twilio.apiBaseUrl must be http(s).");
    const timeoutMs = options.timeoutMs ?? 10_000;
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
      throw new TalkError("config_invalid", "timeoutMs must be a positive integer.");
    this.#accountSid = options.accountSid;
    this.#authorization = `Basic ${Buffer.from(`${options.accountSid}:${options.authToken}`).toString("base64")}`;
    this.#baseUrl = baseUrl;
    this.#timeoutMs = timeoutMs;
  }

  /** Hangs up a live call (Status=completed), or cancels one still queued or ringing (Status=canceled). */
  async endCall(
    callSid: string,
    signal: AbortSignal,
    status: "completed" | "canceled" = "completed",
  ): Promise<TwilioCallResource> {
    return this.#post(`Calls/${encodeURIComponent(callSid)}.json`, { Status: status }, signal);
  }

  /** Places a call that runs `twiml` when answered; status changes go to `statusCallback`. */
  async createCall(request: CreateCallRequest): Promise<TwilioCallResource> {
    const form: Record<string, string | string[]> = {
      To: request.to,
      From: request.from,
      Twiml: request.twiml,
      ...request.extra,
    };
    if (request.statusCallback) {
      form["StatusCallback"] = request.statusCallback;
      form["StatusCallbackMethod"] = "POST";
      form["StatusCallbackEvent"] = ["initiated", "ringing", "answered", "completed"];
    }
    return this.#post("Calls.json", form, request.signal);
  }

  // CarrierRestClient ---------------------------------------------------------

  async dial(request: CarrierDialRequest): Promise<CarrierCall> {
    const created = await this.createCall({
      to: request.to,
      from: request.from,
      twiml: connectStreamTwiml(request.stream),
      statusCallback: request.statusCallbackUrl,
      extra: twilioAmdParams(request.machineDetection),
      signal: request.signal,
    });
    return { callId: created.sid, status: created.status };
  }

  async hangUp(callId: string, options: { signal: AbortSignal; ringing?: boolean }): Promise<void> {
    await this.endCall(callId, options.signal, options.ringing ? "canceled" : "completed");
  }

  async transfer(
    callId: string,
    destination: string,
    signal: AbortSignal,
    options: { briefingUrl?: string } = {},
  ): Promise<void> {
    await this.#post(
      `Calls/${encodeURIComponent(callId)}.json`,
      { Twiml: dialTwiml(destination, options.briefingUrl) },
      signal,
    );
  }

  async #post(
    path: string,
    form: Record<string, string | string[]>,
    signal: AbortSignal,
  ): Promise<TwilioCallResource> {
    const body = new URLSearchParams();
    for (const [name, value] of Object.entries(form)) for (const v of [value].flat()) body.append(name, v);
    const url = `${this.#baseUrl}/2010-04-01/Accounts/${encodeURIComponent(this.#accountSid)}/${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: { authorization: this.#authorization, "content-type": "application/x-www-form-urlencoded" },
        body,
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.#timeoutMs)]),
      });
    } catch (cause) {
      if (signal.aborted) throw new TalkError("cancelled", "The Twilio request was cancelled.", { cause });
      throw new TalkError(
        "provider_unavailable",
        `Twilio REST API unreachable: ${(cause as Error).message}`,
        { cause },
      );
    }
    const text = await response.text();
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Twilio answers JSON; anything else is reported by status below.
    }
    if (!response.ok) {
      throw new TalkError(
        response.status >= 500 ? "provider_unavailable" : "provider_error",
        `Twilio REST ${response.status}: ${typeof json["message"] === "string" ? json["message"] : "request failed"}`,
        { details: { status: response.status, twilioCode: json["code"] ?? null } },
      );
    }
    return { sid: String(json["sid"] ?? ""), status: String(json["status"] ?? "") };
  }
}
