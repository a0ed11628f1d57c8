import { describe, expect, it } from "vitest";
import {
  buildClearMessage,
  buildMarkMessage,
  buildMediaMessage,
  isMulaw8kMono,
  TwilioMarkSchema,
  TwilioMediaSchema,
  parseTwilioMessage,
  type ParseTwilioMessageResult,
} from "./media-stream-messages.js";

const SID = "MZ18ad3ab5a668481ce02b83e7395059f0";

// Examples in the shapes of Twilio's "Media Streams - WebSocket Messages" page.
const CONNECTED = { event: "connected", protocol: "Call", version: "1.0.0" };
const START = {
  event: "start",
  sequenceNumber: "1",
  start: {
    accountSid: "AC123",
    streamSid: SID,
    callSid: "CA123",
    tracks: ["inbound"],
    mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
    customParameters: { token: "abc", from: "+15550001111" },
  },
  streamSid: SID,
};
const PAYLOAD = Buffer.from(Uint8Array.from({ length: 160 }, (_, i) => i)).toString("base64");
const MEDIA = {
  event: "media",
  sequenceNumber: "3",
  media: { track: "inbound", chunk: "1", timestamp: "5", payload: PAYLOAD },
  streamSid: SID,
};
const DTMF = {
  event: "dtmf",
  streamSid: SID,
  sequenceNumber: "5",
  dtmf: { track: "inbound_track", digit: "1" },
};
const MARK = { event: "mark", sequenceNumber: "4", streamSid: SID, mark: { name: "my label" } };
const STOP = {
  event: "stop",
  sequenceNumber: "5",
  stop: { accountSid: "AC123", callSid: "CA123" },
  streamSid: SID,
};

function errorOf(result: ParseTwilioMessageResult): { code: string; reason: unknown } {
  if (result.ok) throw new Error("expected a rejection");
  return { code: result.error.code, reason: result.error.details?.reason };
}

describe("parseTwilioMessage", () => {
  it("parses every documented message Twilio sends", () => {
    for (const msg of [CONNECTED, START, DTMF, MARK, STOP]) {
      const result = parseTwilioMessage(JSON.stringify(msg), {
        expectedStreamSid: msg === START ? undefined : SID,
      });
      expect(result).toEqual({ ok: true, message: msg });
    }
  });

  it("decodes the media payload into bytes", () => {
    const result = parseTwilioMessage(JSON.stringify(MEDIA), { expectedStreamSid: SID });
    if (!result.ok || result.message.event !== "media") throw new Error("expected media");
    expect(result.message.media).toEqual(MEDIA.media);
    expect(Array.from(result.message.audio)).toEqual(Array.from({ length: 160 }, (_, i) => i));
  });

  it("accepts Buffer frames as ws delivers them", () => {
    const result = parseTwilioMessage(Buffer.from(JSON.stringify(MARK)));
    expect(result.ok && result.message.event).toBe("mark");
  });

  it("defaults missing customParameters to an empty object", () => {
    const { customParameters: _omit, ...start } = START.start;
    const result = parseTwilioMessage(JSON.stringify({ ...START, start }));
    expect(result.ok && result.message.event === "start" && result.message.start.customParameters).toEqual(
      {},
    );
  });

  it("ignores fields Twilio may add later", () => {
    const result = parseTwilioMessage(JSON.stringify({ ...MARK, futureField: 1 }));
    expect(result.ok).toBe(true);
  });

  it("refuses a frame that is not JSON with bad_json", () => {
    expect(errorOf(parseTwilioMessage("{not json"))).toEqual({ code: "invalid_request", reason: "bad_json" });
  });

  it("refuses JSON that is not an object", () => {
    expect(errorOf(parseTwilioMessage("[1,2]"))).toEqual({
      code: "invalid_request",
      reason: "not_an_object",
    });
    expect(errorOf(parseTwilioMessage("null"))).toEqual({ code: "invalid_request", reason: "not_an_object" });
  });

  it("refuses an unknown or missing event, including inherited property names", () => {
    expect(errorOf(parseTwilioMessage(JSON.stringify({ event: "hello" })))).toEqual({
      code: "invalid_request",
      reason: "unknown_event",
    });
    expect(errorOf(parseTwilioMessage(JSON.stringify({ streamSid: SID })))).toEqual({
      code: "invalid_request",
      reason: "unknown_event",
    });
    expect(errorOf(parseTwilioMessage(JSON.stringify({ event: "toString" })))).toEqual({
      code: "invalid_request",
      reason: "unknown_event",
    });
    // We send clear; Twilio never does.
    expect(errorOf(parseTwilioMessage(JSON.stringify({ event: "clear", streamSid: SID })))).toMatchObject({
      reason: "unknown_event",
    });
  });

  it("refuses a known event with a wrong shape and names the field", () => {
    const bad = { ...MEDIA, media: { ...MEDIA.media, track: "sideways" } };
    const result = parseTwilioMessage(JSON.stringify(bad));
    expect(errorOf(result)).toEqual({ code: "invalid_request", reason: "invalid_message" });
    expect(!result.ok && result.error.details?.path).toBe("media.track");
    expect(errorOf(parseTwilioMessage(JSON.stringify({ ...MEDIA, sequenceNumber: 3 })))).toMatchObject({
      reason: "invalid_message",
    });
    expect(
      errorOf(parseTwilioMessage(JSON.stringify({ ...DTMF, dtmf: { track: "inbound_track", digit: "12" } }))),
    ).toMatchObject({
      reason: "invalid_message",
    });
  });

  it("refuses a media payload that is not base64 with invalid_audio", () => {
    for (const payload of ["!!!!", "abc", "", "YWJj ZA==", "YW=j"]) {
      const bad = { ...MEDIA, media: { ...MEDIA.media, payload } };
      expect(errorOf(parseTwilioMessage(JSON.stringify(bad)))).toEqual({
        code: "invalid_audio",
        reason: "bad_base64",
      });
    }
  });

  it("refuses a message for another stream once the stream sid is known", () => {
    const other = { ...MEDIA, streamSid: "MZother" };
    expect(errorOf(parseTwilioMessage(JSON.stringify(other), { expectedStreamSid: SID }))).toEqual({
      code: "invalid_request",
      reason: "wrong_stream_sid",
    });
    expect(parseTwilioMessage(JSON.stringify(other)).ok).toBe(true);
  });

  it("refuses a start whose two stream sids disagree", () => {
    const bad = { ...START, streamSid: "MZother" };
    expect(errorOf(parseTwilioMessage(JSON.stringify(bad)))).toMatchObject({ reason: "wrong_stream_sid" });
  });

  it("refuses an oversized frame before parsing it", () => {
    const big = JSON.stringify({ ...MARK, mark: { name: "x".repeat(2000) } });
    expect(errorOf(parseTwilioMessage(big, { maxBytes: 1024 }))).toEqual({
      code: "payload_too_large",
      reason: "oversized",
    });
    expect(errorOf(parseTwilioMessage(Buffer.from(big), { maxBytes: 1024 }))).toEqual({
      code: "payload_too_large",
      reason: "oversized",
    });
  });

  it("refuses a media payload larger than the audio limit", () => {
    const payload = Buffer.alloc(4000, 0xff).toString("base64");
    const big = { ...MEDIA, media: { ...MEDIA.media, payload } };
    expect(errorOf(parseTwilioMessage(JSON.stringify(big), { maxAudioBytes: 3200 }))).toEqual({
      code: "payload_too_large",
      reason: "oversized",
    });
    expect(parseTwilioMessage(JSON.stringify(big), { maxAudioBytes: 4000 }).ok).toBe(true);
  });
});

describe("outbound messages", () => {
  it("builds media with a base64 payload addressed to the stream", () => {
    const audio = new Uint8Array([0xff, 0x7f, 0x00, 0x80]);
    expect(JSON.parse(buildMediaMessage(SID, audio))).toEqual({
      event: "media",
      streamSid: SID,
      media: { payload: "/38AgA==" },
    });
  });

  it("encodes only the view's bytes of a subarray", () => {
    const backing = new Uint8Array([1, 2, 3, 4, 5, 6]);
    const msg = JSON.parse(buildMediaMessage(SID, backing.subarray(2, 4)));
    expect(Buffer.from(msg.media.payload, "base64")).toEqual(Buffer.from([3, 4]));
  });

  it("builds media from its template as JSON.stringify would, even for a sid that needs escaping", () => {
    const audio = new Uint8Array(160).map((_, i) => i * 7);
    for (const sid of [SID, 'MZ"quoted\\back\u0001', "MZ\u2028", undefined]) {
      const payload = Buffer.from(audio).toString("base64");
      expect(buildMediaMessage(sid, audio)).toBe(
        JSON.stringify({ event: "media", streamSid: sid, media: { payload } }),
      );
    }
  });

  it("builds mark and clear", () => {
    expect(JSON.parse(buildMarkMessage(SID, "m1"))).toEqual({
      event: "mark",
      streamSid: SID,
      mark: { name: "m1" },
    });
    expect(JSON.parse(buildClearMessage(SID))).toEqual({ event: "clear", streamSid: SID });
  });

  it("recognizes Twilio's documented stream format", () => {
    expect(isMulaw8kMono(START.start.mediaFormat)).toBe(true);
    expect(isMulaw8kMono({ encoding: "audio/x-mulaw", sampleRate: 16000, channels: 1 })).toBe(false);
  });
});

describe("parseTwilioMessage media fast path", () => {
  const frame = (media: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ event: "media", sequenceNumber: "3", streamSid: "MZ1", media, ...extra });

  it("gives what the schema gives for a valid frame, unknown fields dropped", () => {
    const media = {
      track: "inbound",
      chunk: "2",
      timestamp: "40",
      payload: Buffer.alloc(160, 0xff).toString("base64"),
    };
    const r = parseTwilioMessage(frame({ ...media, extra: 1 }, { future: true }));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const { audio, ...message } = r.message as typeof r.message & { audio: Uint8Array };
    expect(message).toEqual(TwilioMediaSchema.parse(JSON.parse(frame(media))));
    expect(audio).toHaveLength(160);
  });

  it("leaves a malformed frame to the schema, which names the field", () => {
    const r = parseTwilioMessage(frame({ track: "inbound", chunk: "x", timestamp: "40", payload: "AAAA" }));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.details).toMatchObject({ reason: "invalid_message", path: "media.chunk" });
  });
});

describe("parseTwilioMessage mark fast path", () => {
  const mark = (m: unknown, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ event: "mark", sequenceNumber: "9", streamSid: "MZ1", mark: m, ...extra });

  it("gives what the schema gives for a valid mark, unknown fields dropped", () => {
    const r = parseTwilioMessage(mark({ name: "talkgate-3", extra: 1 }, { future: true }));
    expect(r.ok && r.message).toEqual(TwilioMarkSchema.parse(JSON.parse(mark({ name: "talkgate-3" }))));
  });

  it("leaves a malformed mark to the schema, which names the field", () => {
    for (const [m, path] of [
      [{ name: 7 }, "mark.name"],
      [null, "mark"],
      [["x"], "mark"],
    ] as const) {
      const r = parseTwilioMessage(mark(m));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.details).toMatchObject({ reason: "invalid_message", path });
    }
    const sid = parseTwilioMessage(
      JSON.stringify({ event: "mark", sequenceNumber: "x", streamSid: "MZ1", mark: { name: "a" } }),
    );
    expect(!sid.ok && sid.error.details).toMatchObject({ path: "sequenceNumber" });
  });
});
