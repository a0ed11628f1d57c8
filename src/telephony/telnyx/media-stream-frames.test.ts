import { describe, expect, it } from "vitest";
import { clearFrame, markFrame, mediaFrame, parseTelnyxFrame } from "./media-stream-frames.js";

const opts = { maxBytes: 65_536 };
const parse = (v: unknown, o: { streamId?: string; maxBytes?: number } = {}) =>
  parseTelnyxFrame(typeof v === "string" ? v : JSON.stringify(v), { ...opts, ...o });

const start = {
  event: "start",
  sequence_number: "1",
  stream_id: "32DE0DEA-53CB-4B21-89A4-9E1819C043BC",
  start: {
    user_id: "3E6F995F-85F7-4705-9741-53B116D28237",
    call_control_id: "v2:T02llQxIyaRkhfRKxgAP8nY511EhFLizdvdUKJiSw8d6A9BborherQ",
    call_session_id: "ff55a038-6f5d-11ef-9692-02420aeffb1f",
    from: "+13122010094",
    to: "+13122123456",
    tags: ["TAG1"],
    client_state: "aGF2ZSBhIG5pY2UgZGF5ID1d",
    custom_parameters: { customer_id: "customer_123" },
    media_format: { encoding: "PCMU", sample_rate: 8000, channels: 1 },
  },
};
const media = {
  event: "media",
  sequence_number: "4",
  stream_id: start.stream_id,
  media: { track: "inbound", chunk: "2", timestamp: "5", payload: Buffer.from([1, 2, 3]).toString("base64") },
};

describe("Telnyx media-streaming frames", () => {
  it("parses every frame Telnyx sends, in its documented shapes", () => {
    expect(parse({ event: "connected", version: "1.0.0" })).toEqual({
      ok: true,
      frame: { event: "connected" },
    });
    const s = parse(start);
    expect(s.ok && s.frame).toMatchObject({
      event: "start",
      streamId: start.stream_id,
      start: {
        call_control_id: start.start.call_control_id,
        custom_parameters: { customer_id: "customer_123" },
      },
    });
    const m = parse(media, { streamId: start.stream_id });
    expect(m.ok && m.frame.event === "media" && [m.frame.track, m.frame.chunk, [...m.frame.audio]]).toEqual([
      "inbound",
      2,
      [1, 2, 3],
    ]);
    expect(
      parse({
        event: "dtmf",
        stream_id: start.stream_id,
        occurred_at: "x",
        sequence_number: "2",
        dtmf: { digit: "#" },
      }),
    ).toEqual({ ok: true, frame: { event: "dtmf", digit: "#" } });
    expect(
      parse({ event: "mark", sequence_number: "3", stream_id: start.stream_id, mark: { name: "m1" } }),
    ).toEqual({
      ok: true,
      frame: { event: "mark", name: "m1" },
    });
    expect(
      parse({
        event: "stop",
        sequence_number: "5",
        stream_id: start.stream_id,
        stop: { call_control_id: "x" },
      }),
    ).toEqual({ ok: true, frame: { event: "stop" } });
    const e = parse({ event: "error", payload: { code: 100002, title: "unknown_error", detail: "boom" } });
    expect(e.ok && e.frame).toEqual({ event: "error", code: "100002", detail: "unknown_error boom" });
  });

  it("takes numbers where Telnyx documents decimal strings, and a start without custom parameters", () => {
    const m = parse({ ...media, sequence_number: 4, media: { ...media.media, chunk: 2, timestamp: 5 } });
    expect(m.ok && m.frame.event === "media" && m.frame.chunk).toBe(2);
    const bare = { ...start, start: { ...start.start, custom_parameters: undefined, client_state: null } };
    expect(parse(bare).ok).toBe(true);
    const scalars = { ...start, start: { ...start.start, custom_parameters: { n: 5, b: true, s: "x" } } };
    const p = parse(scalars);
    expect(p.ok && p.frame.event === "start" && p.frame.start.custom_parameters).toEqual({
      n: "5",
      b: "true",
      s: "x",
    });
    const nested = { ...start, start: { ...start.start, custom_parameters: { o: { a: 1 } } } };
    expect(parse(nested)).toMatchObject({ ok: false, reason: "invalid_message" });
  });

  it.each([
    ["not JSON", "{nope", "bad_json"],
    ["an array", "[1]", "not_an_object"],
    ["an unknown event", { event: "hello" }, "unknown_event"],
    ["no event", { media: {} }, "unknown_event"],
    [
      "a start without call_control_id",
      { ...start, start: { ...start.start, call_control_id: undefined } },
      "invalid_message",
    ],
    [
      "a start without media_format",
      { ...start, start: { ...start.start, media_format: undefined } },
      "invalid_message",
    ],
    ["media without chunk", { ...media, media: { ...media.media, chunk: undefined } }, "invalid_message"],
    ["media with a negative chunk", { ...media, media: { ...media.media, chunk: "-1" } }, "invalid_message"],
    [
      "media with an unknown track",
      { ...media, media: { ...media.media, track: "sideways" } },
      "invalid_message",
    ],
    ["media with a bad payload", { ...media, media: { ...media.media, payload: "@@@" } }, "bad_base64"],
    ["media with an empty payload", { ...media, media: { ...media.media, payload: "" } }, "bad_base64"],
    ["dtmf of two digits", { event: "dtmf", dtmf: { digit: "12" } }, "invalid_message"],
    ["a mark without name", { event: "mark", mark: {} }, "invalid_message"],
  ])("refuses %s", (_what, frame, reason) => {
    const r = parse(frame);
    expect(r.ok ? "accepted" : r.reason).toBe(reason);
  });

  it("refuses frames of another stream once started, oversized frames and oversized payloads", () => {
    expect(parse(media, { streamId: "another" })).toMatchObject({ ok: false, reason: "wrong_stream_id" });
    expect(parse(media, { maxBytes: 50 })).toMatchObject({ ok: false, reason: "oversized" });
    const big = { ...media, media: { ...media.media, payload: Buffer.alloc(20_000).toString("base64") } };
    expect(parse(big)).toMatchObject({ ok: false, reason: "oversized" });
  });

  it("builds the frames we send: media with a base64 payload, mark, clear", () => {
    expect(JSON.parse(mediaFrame(new Uint8Array([0xff, 0x7f])))).toEqual({
      event: "media",
      media: { payload: Buffer.from([0xff, 0x7f]).toString("base64") },
    });
    expect(JSON.parse(markFrame('a"b'))).toEqual({ event: "mark", mark: { name: 'a"b' } });
    expect(JSON.parse(clearFrame())).toEqual({ event: "clear" });
  });
});
