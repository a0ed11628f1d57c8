import { describe, expect, it } from "vitest";
import { TalkError } from "../../core/errors.js";
import {
  decodeCaptureFrame,
  encodeCaptureFrame,
  parseSourcesMessage,
  silencePayload,
  silenceSamples,
} from "./capture-framing.js";

describe("capture framing", () => {
  it("round-trips an Opus frame with its track id, channels and rate", () => {
    const payload = new Uint8Array([0x78, 1, 2, 3]);
    const frame = decodeCaptureFrame(
      encodeCaptureFrame({ kind: "opus", trackId: "trk-é", channels: 2, sampleRate: 48_000, payload }),
    );
    expect(frame).toMatchObject({ kind: "opus", trackId: "trk-é", channels: 2, sampleRate: 48_000 });
    expect([...frame.payload]).toEqual([...payload]);
  });

  it("round-trips a silence frame's sample count", () => {
    const frame = decodeCaptureFrame(
      encodeCaptureFrame({
        kind: "silence",
        trackId: "t",
        channels: 1,
        sampleRate: 48_000,
        payload: silencePayload(4800),
      }),
    );
    expect(frame.kind).toBe("silence");
    expect(silenceSamples(frame)).toBe(4800);
  });

  it.each([
    ["no count", new Uint8Array(0)],
    ["a torn count", new Uint8Array(3)],
    ["zero samples", silencePayload(0)],
    ["more than 10 s", silencePayload(480_001)],
    ["a count and more", new Uint8Array([1, 0, 0, 0, 0])],
  ])("refuses a silence frame with %s with invalid_audio", (_what, payload) => {
    const data = encodeCaptureFrame({
      kind: "silence",
      trackId: "t",
      channels: 1,
      sampleRate: 48_000,
      payload,
    });
    expect(() => decodeCaptureFrame(data)).toThrow(expect.objectContaining({ code: "invalid_audio" }));
  });

  it("rejects frames with a bad header, an unknown kind or torn PCM samples with invalid_audio", () => {
    const good = encodeCaptureFrame({
      kind: "pcm16",
      trackId: "t",
      channels: 1,
      sampleRate: 48_000,
      payload: new Uint8Array(4),
    });
    const bad = [
      good.subarray(0, 5),
      Uint8Array.from(good, (b, i) => (i === 0 ? 9 : b)),
      Uint8Array.from(good, (b, i) => (i === 2 ? 200 : b)),
      encodeCaptureFrame({
        kind: "pcm16",
        trackId: "t",
        channels: 1,
        sampleRate: 48_000,
        payload: new Uint8Array(3),
      }),
    ];
    for (const data of bad) {
      expect(() => decodeCaptureFrame(data)).toThrow(TalkError);
      try {
        decodeCaptureFrame(data);
      } catch (err) {
        expect((err as TalkError).code).toBe("invalid_audio");
      }
    }
  });
});

describe("capture sources message", () => {
  it("reads each track's SSRCs and CSRCs with their levels", () => {
    expect(
      parseSourcesMessage({
        type: "sources",
        tracks: [
          { trackId: "a", ssrc: [[4294967295, 0.25]], csrc: [] },
          { trackId: "b", ssrc: [[12, null]], csrc: [[7, 0.5]] },
        ],
      }),
    ).toEqual([
      { trackId: "a", ssrc: [{ source: 4294967295, level: 0.25 }], csrc: [] },
      { trackId: "b", ssrc: [{ source: 12, level: null }], csrc: [{ source: 7, level: 0.5 }] },
    ]);
  });

  it.each([
    [{ tracks: "x" }],
    [{ tracks: [{ trackId: "", ssrc: [] }] }],
    [{ tracks: [{ trackId: "a", ssrc: [[-1, 0.1]] }] }],
    [{ tracks: [{ trackId: "a", ssrc: [[4294967296, 0.1]] }] }],
    [{ tracks: [{ trackId: "a", ssrc: [[1.5, 0.1]] }] }],
    [{ tracks: [{ trackId: "a", ssrc: [[1, 2]] }] }],
    [{ tracks: [{ trackId: "a", ssrc: [[1]] }] }],
    [{ tracks: [{ trackId: "a", csrc: Array.from({ length: 17 }, (_, i) => [i, 0.1]) }] }],
    [null],
  ])("refuses a malformed message with invalid_params: %j", (message) => {
    expect(() => parseSourcesMessage(message)).toThrow(TalkError);
    try {
      parseSourcesMessage(message);
    } catch (err) {
      expect((err as TalkError).code).toBe("invalid_params");
    }
  });
});
