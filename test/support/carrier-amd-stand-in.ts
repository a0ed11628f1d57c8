/**
 * Each carrier's answering-machine detection as its docs describe it, over
 * the fake REST servers: `requested(callId)` checks what the call create
 * asked for (the parameters and values the carrier accepts, the callback URL
 * absolute) and `answer(callId, ...)` posts the asynchronous result the way
 * the carrier does, to the URL it was given, signed like its other webhooks:
 * - Twilio: `MachineDetection` Enable | DetectMessageEnd, `AsyncAmd=true`,
 *   `AsyncAmdStatusCallback`; form {CallSid, AccountSid, AnsweredBy,
 *   MachineDetectionDuration}, X-Twilio-Signature.
 * - Telnyx TeXML: the same names in JSON (`AsyncAmd: true`); form {AccountSid,
 *   CallSid, AnsweredBy, ConnectionId, MachineDetectionDuration}, Ed25519.
 * - Plivo: `machine_detection` true | hangup, `machine_detection_url`; form
 *   {From, To, Machine, RequestUUID, ALegRequestUUID, CallUUID, IfMachine,
 *   Direction, Event: MachineDetection, CallStatus: in-progress}, V3 signature.
 * - Vonage: `advanced_machine_detection {behavior, mode, beep_timeout}`; the
 *   event webhook {uuid, conversation_uuid, status: human | machine,
 *   sub_state?: beep_start | beep_timeout}, signed JWT.
 * Test-only.
 */
import { computeTwilioSignature } from "../../src/telephony/twilio/twilio-signature.js";
import type { PlivoHarness } from "./plivo-harness.js";
import { ACCOUNT_SID, AUTH_TOKEN, type TelephonyHarness } from "./telephony-harness.js";
import { TELNYX_ACCOUNT, TELNYX_CONNECTION_ID, type TelnyxHarness } from "./telnyx-harness.js";
import type { VonageHarness } from "./vonage-harness.js";

export interface AmdRequested {
  /** detect, or detect_message_end (the carrier also reports the end of a machine's greeting). */
  mode: "detect" | "detect_message_end";
  /** Where the result goes: path and query on our server. */
  callbackPath: string;
}

const ANSWERED_BY = [
  "human",
  "machine_start",
  "machine_end_beep",
  "machine_end_silence",
  "machine_end_other",
  "fax",
  "unknown",
];

function pathUnder(url: unknown, publicUrl: string, what: string): string {
  if (typeof url !== "string" || !url.startsWith(`${publicUrl}/`)) throw new Error(`${what}: ${String(url)}`);
  return url.slice(publicUrl.length);
}

function asyncAmd(get: (name: string) => unknown, publicUrl: string, asyncValue: unknown): AmdRequested {
  const mode = get("MachineDetection");
  if (mode !== "Enable" && mode !== "DetectMessageEnd") throw new Error(`MachineDetection: ${String(mode)}`);
  if (get("AsyncAmd") !== asyncValue) throw new Error(`AsyncAmd: ${String(get("AsyncAmd"))}`);
  if (get("AsyncAmdStatusCallbackMethod") !== "POST") throw new Error("AsyncAmdStatusCallbackMethod");
  return {
    mode: mode === "Enable" ? "detect" : "detect_message_end",
    callbackPath: pathUnder(get("AsyncAmdStatusCallback"), publicUrl, "AsyncAmdStatusCallback"),
  };
}

export function twilioAmd(h: TelephonyHarness) {
  const create = (callId: string) => {
    const found = h.rest.requests.find((r) => r.sid === callId);
    if (!found) throw new Error(`no create for ${callId}`);
    return found;
  };
  const requested = (callId: string): AmdRequested => {
    const params = create(callId).params;
    return asyncAmd((n) => params.get(n) ?? undefined, h.publicUrl, "true");
  };
  return {
    requested,
    async answer(callId: string, answeredBy: string, override?: Record<string, string>): Promise<Response> {
      if (!override && !ANSWERED_BY.includes(answeredBy)) throw new Error(answeredBy);
      const path = requested(callId).callbackPath;
      const params = override ?? {
        CallSid: callId,
        AccountSid: ACCOUNT_SID,
        AnsweredBy: answeredBy,
        MachineDetectionDuration: "2400",
      };
      return fetch(`${h.baseUrl}${path}`, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "x-twilio-signature": computeTwilioSignature(AUTH_TOKEN, `${h.publicUrl}${path}`, params),
        },
        body: new URLSearchParams(params),
      });
    },
  };
}

export function telnyxAmd(h: TelnyxHarness) {
  const requested = (callId: string): AmdRequested => {
    const body = h.rest.requests.find((r) => r.callSid === callId)?.body;
    if (!body) throw new Error(`no create for ${callId}`);
    return asyncAmd((n) => body[n], h.publicUrl, true);
  };
  return {
    requested,
    answer(callId: string, answeredBy: string): Promise<Response> {
      if (!ANSWERED_BY.includes(answeredBy)) throw new Error(answeredBy);
      return h.post(requested(callId).callbackPath, {
        AccountSid: TELNYX_ACCOUNT,
        CallSid: callId,
        AnsweredBy: answeredBy,
        ConnectionId: TELNYX_CONNECTION_ID,
        MachineDetectionDuration: "2500",
      });
    },
  };
}

export function plivoAmd(h: PlivoHarness) {
  const create = (requestUuid: string) => {
    const found = h.rest.requests.find((r) => r.requestUuid === requestUuid);
    if (!found) throw new Error(`no create for ${requestUuid}`);
    return found;
  };
  const requested = (requestUuid: string): AmdRequested => {
    const body = create(requestUuid).body;
    if (body["machine_detection"] !== "true" && body["machine_detection"] !== "hangup")
      throw new Error(`machine_detection: ${String(body["machine_detection"])}`);
    if (body["machine_detection_method"] !== "POST") throw new Error("machine_detection_method");
    return {
      mode: "detect",
      callbackPath: pathUnder(body["machine_detection_url"], h.publicUrl, "machine_detection_url"),
    };
  };
  return {
    requested,
    /** Plivo posts only `Machine` (true/false): no beep, no fax. */
    answer(requestUuid: string, machine: boolean, callUuid: string): Promise<Response> {
      const body = create(requestUuid).body;
      return h.post(requested(requestUuid).callbackPath, {
        From: String(body["from"]),
        To: String(body["to"]),
        Machine: String(machine),
        RequestUUID: requestUuid,
        ALegRequestUUID: requestUuid,
        CallUUID: callUuid,
        ALegUUID: callUuid,
        IfMachine: body["machine_detection"] === "hangup" ? "hangup" : "continue",
        Direction: "outbound",
        Event: "MachineDetection",
        CallStatus: "in-progress",
      });
    },
  };
}

export function vonageAmd(h: VonageHarness) {
  const create = (uuid: string) => {
    const found = h.rest.requests.find((r) => r.method === "POST" && r.uuid === uuid);
    if (!found) throw new Error(`no create for ${uuid}`);
    return found;
  };
  const requested = (uuid: string): AmdRequested => {
    const body = create(uuid).body;
    const amd = body["advanced_machine_detection"] as Record<string, unknown> | undefined;
    if (!amd) throw new Error("no advanced_machine_detection");
    if (amd["behavior"] !== "continue" && amd["behavior"] !== "hangup") throw new Error("behavior");
    if (!["default", "detect", "detect_beep"].includes(String(amd["mode"]))) throw new Error("mode");
    const beep = amd["beep_timeout"];
    if (beep !== undefined && (typeof beep !== "number" || beep < 45 || beep > 120))
      throw new Error("beep_timeout");
    const eventUrl = (body["event_url"] as string[] | undefined)?.[0];
    return {
      mode: amd["mode"] === "detect" ? "detect" : "detect_message_end",
      callbackPath: pathUnder(eventUrl, h.publicUrl, "event_url"),
    };
  };
  return {
    requested,
    answer(
      uuid: string,
      status: "human" | "machine",
      subState?: "beep_start" | "beep_timeout",
    ): Promise<Response> {
      const path = requested(uuid).callbackPath;
      return h.event(
        {
          uuid,
          conversation_uuid: `CON-${uuid}`,
          status,
          ...(subState ? { sub_state: subState } : {}),
          direction: "outbound",
          timestamp: new Date().toISOString(),
        },
        { path: path.split("?")[0]! },
      );
    },
  };
}
