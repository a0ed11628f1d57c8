import { describe, expect, it } from "vitest";
import { parsePlivoAmd, plivoAmdParams } from "../plivo/plivo-amd.js";
import { parseTelnyxAmd, telnyxAmdParams } from "../telnyx/telnyx-amd.js";
import { parseTwilioAmd, twilioAmdParams } from "../twilio/twilio-amd.js";
import { parseVonageAmd, vonageAmdParams } from "../vonage/vonage-amd.js";

const request = {
  mode: "detect_message_end",
  callbackUrl: "https://talkgate.test/telephony/x/status",
} as const;

describe("carrier AMD: what each dial asks for", () => {
  it("maps the neutral request onto each carrier's parameters; none without a request", () => {
    expect(twilioAmdParams(request)).toEqual({
      MachineDetection: "DetectMessageEnd",
      AsyncAmd: "true",
      AsyncAmdStatusCallback: request.callbackUrl,
      AsyncAmdStatusCallbackMethod: "POST",
    });
    expect(twilioAmdParams({ ...request, mode: "detect" })["MachineDetection"]).toBe("Enable");
    expect(telnyxAmdParams(request)).toMatchObject({ MachineDetection: "DetectMessageEnd", AsyncAmd: true });
    expect(plivoAmdParams(request)).toEqual({
      machine_detection: "true",
      machine_detection_url: request.callbackUrl,
      machine_detection_method: "POST",
    });
    expect(vonageAmdParams(request)).toEqual({
      advanced_machine_detection: { behavior: "continue", mode: "default", beep_timeout: 45 },
    });
    for (const params of [twilioAmdParams, telnyxAmdParams, plivoAmdParams, vonageAmdParams])
      expect(params(undefined)).toEqual({});
  });
});

describe("carrier AMD: what each callback says", () => {
  it.each([
    ["human", "human", false],
    ["machine_start", "machine", false],
    ["machine_end_beep", "machine", true],
    ["machine_end_silence", "machine", true],
    ["machine_end_other", "machine", true],
    ["fax", "fax", false],
    ["unknown", "unknown", false],
  ])("AnsweredBy=%s is %s (greeting ended: %s) for Twilio and Telnyx", (word, answeredBy, greetingEnded) => {
    for (const parse of [parseTwilioAmd, parseTelnyxAmd])
      expect(parse({ CallSid: "CA1", AnsweredBy: word })).toEqual({
        ok: true,
        detection: { callId: "CA1", answeredBy, greetingEnded, carrierResult: word },
      });
  });

  it("refuses what is not a result, names the field of a bad one", () => {
    expect(parseTwilioAmd({ CallSid: "CA1", CallStatus: "ringing" })).toBeUndefined();
    expect(parseTwilioAmd({ CallSid: "CA1", AnsweredBy: "robot" })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^AnsweredBy:/),
    });
    expect(parseTwilioAmd({ AnsweredBy: "human" })).toMatchObject({
      ok: false,
      message: expect.stringMatching(/^CallSid:/),
    });
    expect(parsePlivoAmd({ CallStatus: "completed", RequestUUID: "r" })).toBeUndefined();
    expect(parsePlivoAmd({ Event: "MachineDetection", RequestUUID: "r", Machine: "maybe" })).toMatchObject({
      ok: false,
    });
    expect(parsePlivoAmd({ Event: "MachineDetection", Machine: "true" })).toMatchObject({ ok: false });
    expect(parseVonageAmd({ uuid: "u", status: "answered" })).toBeUndefined();
    expect(parseVonageAmd({ status: "machine" })).toMatchObject({ ok: false });
    expect(parseVonageAmd({ uuid: "u", status: "machine", sub_state: "beep_end" })).toMatchObject({
      ok: false,
    });
  });

  it("reads Plivo's Machine and Vonage's status / sub_state", () => {
    expect(parsePlivoAmd({ Event: "MachineDetection", RequestUUID: "r", Machine: "false" })).toMatchObject({
      ok: true,
      detection: { callId: "r", answeredBy: "human", greetingEnded: false },
    });
    expect(parseVonageAmd({ uuid: "u", status: "machine", sub_state: "beep_timeout" })).toMatchObject({
      ok: true,
      detection: {
        callId: "u",
        answeredBy: "machine",
        greetingEnded: true,
        carrierResult: "machine/beep_timeout",
      },
    });
    expect(parseVonageAmd({ uuid: "u", status: "human" })).toMatchObject({
      ok: true,
      detection: { answeredBy: "human", greetingEnded: false },
    });
  });
});
