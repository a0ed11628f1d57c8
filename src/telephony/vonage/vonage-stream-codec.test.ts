import { describe, expect, it } from "vitest";
import { PCM16_16K } from "../../core/index.js";
import { formatOfContentType, vonageStreamCodec } from "./vonage-stream-codec.js";

const codec = () => vonageStreamCodec({ maxBytes: 4096 });
const text = (v: unknown) => Buffer.from(typeof v === "string" ? v : JSON.stringify(v));

describe("Vonage stream codec", () => {
  it("websocket:connected is the start: format from content-type, the headers as parameters, the call id ours", () => {
    const r = codec().decode(
      text({
        event: "websocket:connected",
        "content-type": "audio/l16;rate=16000",
        token: "t1abc",
        callId: "63f61863-4a51-4f6b-86e1-46edebcf9356",
        from: "447700900123",
        nested: { ignored: true },
      }),
      false,
    );
    expect(r).toMatchObject({
      ok: true,
      event: {
        type: "start",
        callId: "63f61863-4a51-4f6b-86e1-46edebcf9356",
        format: PCM16_16K,
        formatName: "audio/l16;rate=16000",
        parameters: { token: "t1abc", callId: "63f61863-4a51-4f6b-86e1-46edebcf9356", from: "447700900123" },
      },
    });
    const start = (r as { event: { streamId: string } }).event;
    expect(start.streamId).toMatch(/^vonage-/);
  });

  it("a first connected message without our callId header, or without content-type, is refused and closes the stream (1008)", () => {
    const closes = { code: 1008, reason: "stream headers missing" };
    expect(
      codec().decode(text({ event: "websocket:connected", "content-type": "audio/l16;rate=16000" }), false),
    ).toMatchObject({
      ok: false,
      rejection: { reason: "invalid_message", close: closes },
    });
    expect(codec().decode(text({ event: "websocket:connected", callId: "x" }), false)).toMatchObject({
      ok: false,
      rejection: { reason: "invalid_message", close: closes },
    });
    // After a start, a stray malformed one is a plain rejection: the live call goes on.
    const c = codec();
    c.decode(
      text({ event: "websocket:connected", "content-type": "audio/l16;rate=16000", callId: "x" }),
      false,
    );
    const stray = c.decode(
      text({ event: "websocket:connected", "content-type": "audio/l16;rate=16000" }),
      false,
    );
    expect(stray.ok === false && stray.rejection.close).toBeUndefined();
  });

  it("names 8 kHz L16 and refuses to model anything else (the route then refuses the stream)", () => {
    expect(formatOfContentType("audio/l16;rate=8000")).toEqual({
      encoding: "pcm16",
      sampleRate: 8000,
      channels: 1,
    });
    expect(formatOfContentType("Audio/L16; rate=16000")).toEqual(PCM16_16K);
    expect(formatOfContentType("audio/l16;rate=24000")).toBeUndefined();
    expect(formatOfContentType("audio/x-mulaw")).toBeUndefined();
  });

  it("binary frames are caller audio; empty, odd-sized and oversized ones are refused (oversized closes 1009)", () => {
    const frame = Buffer.alloc(640, 1);
    const r = codec().decode(frame, true);
    expect(r).toMatchObject({ ok: true, event: { type: "media" } });
    expect((r as { event: { audio: Uint8Array } }).event.audio.byteLength).toBe(640);
    expect(codec().decode([Buffer.alloc(320), Buffer.alloc(320)], true)).toMatchObject({
      ok: true,
      event: { type: "media" },
    });
    expect(codec().decode(new Uint8Array(640).buffer, true)).toMatchObject({
      ok: true,
      event: { type: "media" },
    });
    expect(codec().decode(Buffer.alloc(0), true)).toMatchObject({
      ok: false,
      rejection: { reason: "bad_audio" },
    });
    expect(codec().decode(Buffer.alloc(641), true)).toMatchObject({
      ok: false,
      rejection: { reason: "bad_audio" },
    });
    const big = codec().decode(Buffer.alloc(4098), true);
    expect(big).toMatchObject({ ok: false, rejection: { reason: "oversized", close: { code: 1009 } } });
    expect(codec().decode(text("x".repeat(5000)), false)).toMatchObject({
      ok: false,
      rejection: { reason: "oversized" },
    });
  });

  it("dtmf, notify and cleared; other events pass unremarked", () => {
    expect(codec().decode(text({ event: "websocket:dtmf", digit: "5", duration: 260 }), false)).toEqual({
      ok: true,
      event: { type: "dtmf", digit: "5" },
    });
    expect(
      codec().decode(text({ event: "websocket:notify", payload: { name: "talkgate-3" } }), false),
    ).toEqual({
      ok: true,
      event: { type: "played", name: "talkgate-3" },
    });
    expect(codec().decode(text({ event: "websocket:cleared" }), false)).toEqual({
      ok: true,
      event: undefined,
    });
    expect(codec().decode(text({ event: "websocket:something-new", x: 1 }), false)).toEqual({
      ok: true,
      event: undefined,
    });
  });

  it("malformed text frames are refused with a stable reason, never thrown", () => {
    const cases: Array<[unknown, string]> = [
      ["{not json", "bad_json"],
      ["[1,2]", "not_an_object"],
      ["null", "not_an_object"],
      ['"text"', "not_an_object"],
      [{ digit: "1" }, "unknown_event"],
      [{ event: 7 }, "unknown_event"],
      [{ event: "websocket:dtmf", digit: "55" }, "invalid_message"],
      [{ event: "websocket:dtmf" }, "invalid_message"],
      [{ event: "websocket:notify", payload: "talkgate-1" }, "invalid_message"],
      [{ event: "websocket:notify", payload: { name: "" } }, "invalid_message"],
      [{ event: "websocket:notify" }, "invalid_message"],
    ];
    for (const [frame, reason] of cases)
      expect(codec().decode(text(frame), false)).toMatchObject({ ok: false, rejection: { reason } });
  });

  it("builds binary audio, notify and clear", () => {
    const c = codec();
    const audio = new Uint8Array(640);
    expect(c.media(audio)).toBe(audio);
    expect(JSON.parse(c.mark("talkgate-9") as string)).toEqual({
      action: "notify",
      payload: { name: "talkgate-9" },
    });
    expect(JSON.parse(c.clear() as string)).toEqual({ action: "clear" });
  });
});
