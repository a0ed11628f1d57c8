import { describe, expect, it } from "vitest";
import { scanTwilioMediaFrame } from "./media-frame-scan.js";
import { parseTwilioMessage } from "./media-stream-messages.js";

const SID = "MZ18ad3ab5a668481ce02b83e7395059f0";
const MAX_PAYLOAD = Math.ceil(16_000 / 3) * 4;

/** Twilio's media frame as its reference shows it, compact. */
function frame(
  f: { seq?: string; track?: string; chunk?: string; ts?: string; payload?: string; sid?: string } = {},
): string {
  const { seq = "3", track = "inbound", chunk = "1", ts = "5", payload = "f39/fw==", sid = SID } = f;
  return `{"event":"media","sequenceNumber":"${seq}","media":{"track":"${track}","chunk":"${chunk}","timestamp":"${ts}","payload":"${payload}"},"streamSid":"${sid}"}`;
}

/** The general path's answer: a string frame never takes the in-place read. */
const general = (text: string) => parseTwilioMessage(text, { expectedStreamSid: SID });
const inPlace = (text: string) => parseTwilioMessage(Buffer.from(text, "utf8"), { expectedStreamSid: SID });

function randomBase64(bytes: number, seed: number): string {
  const b = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) b[i] = (seed * 131 + i * 197) & 0xff;
  return b.toString("base64");
}

describe("Twilio media frames read in place", () => {
  it("gives the general parser's message for Twilio's frames, every payload length and padding", () => {
    for (let bytes = 1; bytes <= 400; bytes += 7) {
      for (const track of ["inbound", "outbound"]) {
        const text = frame({
          seq: String(bytes * 1000 + 7),
          track,
          chunk: String(bytes),
          ts: String(bytes * 20),
          payload: randomBase64(bytes, bytes),
        });
        const scanned = scanTwilioMediaFrame(Buffer.from(text), SID, MAX_PAYLOAD);
        expect(scanned).toBeDefined();
        const expected = general(text);
        expect(expected.ok).toBe(true);
        expect(inPlace(text)).toEqual(expected);
        expect(expected.ok && scanned).toEqual(expected.ok && expected.message);
      }
    }
  });

  // Each of these is left to the general path, whose answer (accepted or refused, and why) stands.
  const others: Array<[string, string]> = [
    ["whitespace", frame().replace('"media",', '"media", ')],
    ["pretty-printed", JSON.stringify(JSON.parse(frame()), null, 2)],
    [
      "another field order",
      frame().replace('"event":"media","sequenceNumber":"3"', '"sequenceNumber":"3","event":"media"'),
    ],
    ["streamSid first", `{"streamSid":"${SID}",${frame().slice(1).replace(`,"streamSid":"${SID}"`, "")}`],
    ["an escaped slash in the payload", frame({ payload: "ab\\/d" })],
    ["a unicode escape in a number", frame({ seq: "\\u0033" })],
    ["an unknown field", `${frame().slice(0, -1)},"extra":1}`],
    ["another stream's sid", frame({ sid: "MZ00000000000000000000000000000000" })],
    ["an empty sid", frame({ sid: "" })],
    ["a payload that is not base64", frame({ payload: "ab$d" })],
    ["a payload without its padding", frame({ payload: "f39/fw" })],
    ["a payload with padding inside", frame({ payload: "f3==fw==" })],
    ["three padding characters", frame({ payload: "f===" })],
    ["an empty payload", frame({ payload: "" })],
    ["a payload over the limit", frame({ payload: "A".repeat(MAX_PAYLOAD + 4) })],
    ["16 digits", frame({ seq: "1234567890123456" })],
    ["a negative number", frame({ ts: "-5" })],
    ["no digits", frame({ chunk: "" })],
    ["an unknown track", frame({ track: "both" })],
    ["trailing bytes", `${frame()} `],
    ["a truncated frame", frame().slice(0, -3)],
    ["a mark", `{"event":"mark","sequenceNumber":"4","streamSid":"${SID}","mark":{"name":"m1"}}`],
    ["not JSON", "media"],
  ];

  it.each(others)("leaves %s to the general parser, with its answer", (_what, text) => {
    expect(scanTwilioMediaFrame(Buffer.from(text), SID, MAX_PAYLOAD)).toBeUndefined();
    expect(inPlace(text)).toEqual(general(text));
  });

  it("refuses what the general parser refuses, with the same reason", () => {
    const reasons = (text: string) => {
      const r = inPlace(text);
      return r.ok ? "ok" : r.error.details?.["reason"];
    };
    expect(reasons(frame({ sid: "MZ00000000000000000000000000000000" }))).toBe("wrong_stream_sid");
    expect(reasons(frame({ payload: "ab$d" }))).toBe("bad_base64");
    expect(reasons(frame({ payload: "" }))).toBe("bad_base64");
    expect(reasons(frame({ payload: "A".repeat(MAX_PAYLOAD + 4) }))).toBe("oversized");
    expect(reasons(frame({ seq: "1234567890123456" }))).toBe("invalid_message");
    // An escaped slash is valid JSON and valid base64 once unescaped: accepted by the general path.
    expect(reasons(frame({ payload: "ab\\/d" }))).toBe("ok");
  });

  it("is not tried before the stream's start (no sid to hold the frame to) or for a frame over maxBytes", () => {
    const text = frame();
    expect(parseTwilioMessage(Buffer.from(text))).toEqual(parseTwilioMessage(text));
    const small = parseTwilioMessage(Buffer.from(text), { expectedStreamSid: SID, maxBytes: 64 });
    expect(small).toMatchObject({ ok: false, error: { details: { reason: "oversized" } } });
  });
});
