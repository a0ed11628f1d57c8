import { describe, expect, it } from "vitest";
import { TalkError } from "../../core/errors.js";
import { decodeCaptureFrame, encodeCaptureFrame, parseSourcesMessage } from "./capture-framing.js";

describe("capture framing", () => {
  it("round-trips an Opus frame with its track id, channels and rate", () => {
    const payload = new Uint8Array([0x78, 1, 2, 3]);
    const frame = decodeCaptureFrame(
      encodeCaptureFrame({ kind: "opus", trackId: "trk-é", channels: 2, sampleRate: 48_000, payload }),
    );
    expect(frame).toMatchObject({ kind: "opus", trackId: "trk-é", channels: 2, sampleRate: 48_000 });
    expect([...frame.payload]).toEqual([...payload]);
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
