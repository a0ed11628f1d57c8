import { describe, expect, it } from "vitest";
import { SpeakerAttribution, type RtpSourceSample } from "./speaker-attribution.js";
import { Utterance } from "./utterance-segmenter.js";

const s = (source: number, level: number | null): RtpSourceSample => ({ source, level });

/** An utterance on `trackId` with reports at its start time (the attribution reads times, not audio). */
function setup(trackId = "track-1"): {
  a: SpeakerAttribution;
  u: Utterance;
  report(ssrc: RtpSourceSample[], csrc?: RtpSourceSample[], offsetMs?: number): void;
} {
  const a = new SpeakerAttribution({ historyMs: 60_000 });
  const u = new Utterance(trackId);
  a.follow(u);
  return {
    a,
    u,
    report: (ssrc, csrc = [], offsetMs = 0) => a.note({ trackId, ssrc, csrc }, u.startedAt + offsetMs),
  };
}

const ended = async (u: Utterance): Promise<void> => {
  u.end();
  await u.whenEnded();
  await Promise.resolve();
};

describe("speaker attribution", () => {
  it("names the speaker from the driver's SSRC table", async () => {
    const { a, u, report } = setup();
    a.setNames({}, { "1111": "Alice" });
    for (let i = 0; i < 5; i++) report([s(1111, 0.2)], [], i * 200);
    await ended(u);
    expect(a.speakerOf(u)).toEqual({ speaker: "Alice", rtpSource: 1111 });
  });

  it("uses the contributing sources of a mixed stream, not the mixer's SSRC", async () => {
    const { a, u, report } = setup();
    a.setNames({}, { "7": "Alice", "8": "Bob", "500": "The SFU" });
    for (let i = 0; i < 5; i++) report([s(500, 0.3)], [s(7, 0.02), s(8, 0.25)], i * 200);
    await ended(u);
    expect(a.speakerOf(u)).toEqual({ speaker: "Bob", rtpSource: 8 });
  });

  it("says unknown, never a guess, when the speaking source is in nobody's name", async () => {
    const { a, u, report } = setup();
    // Alice is known and even quietly present; the loud source is not in the table.
    a.setNames({}, { "1111": "Alice" });
    for (let i = 0; i < 5; i++) report([], [s(2222, 0.3), s(1111, 0.01)], i * 200);
    await ended(u);
    expect(a.speakerOf(u)).toEqual({ speaker: "unknown", rtpSource: 2222 });
  });

  it("says unknown when no source dominates a mixed utterance", async () => {
    const { a, u, report } = setup();
    a.setNames({}, { "7": "Alice", "8": "Bob" });
    report([], [s(7, 0.3)], 0);
    report([], [s(8, 0.3)], 200);
    report([], [s(7, 0.2), s(8, 0.2)], 400);
    await ended(u);
    expect(a.speakerOf(u)).toEqual({ speaker: "unknown" });
  });

  it("falls back to the track's name (a mesh track carries one participant), else unknown", async () => {
    const { a, u, report } = setup();
    report([s(3333, 0.2)]);
    await ended(u);
    expect(a.speakerOf(u).speaker).toBe("unknown");
    a.setNames({ "track-1": "Carol" });
    expect(a.speakerOf(u)).toEqual({ speaker: "Carol", rtpSource: 3333 });
  });

  it("says unknown when the track's name and the source's name disagree", async () => {
    const { a, u, report } = setup();
    a.setNames({ "track-1": "Carol" }, { "3333": "Dave" });
    report([s(3333, 0.2)]);
    await ended(u);
    expect(a.speakerOf(u).speaker).toBe("unknown");
  });

  it("ignores silence, reports outside the utterance and other tracks", async () => {
    const { a, u, report } = setup();
    a.setNames({}, { "1": "Alice", "2": "Bob", "3": "Erin" });
    for (let i = 0; i < 5; i++) report([s(1, 0.2), s(2, 0.0001)], [], i * 200);
    // Bob, loud, but five seconds before the utterance: another line.
    for (let i = 0; i < 10; i++) report([s(2, 0.9)], [], -5000 - i * 100);
    a.note({ trackId: "track-2", ssrc: [s(3, 0.9)], csrc: [] }, u.startedAt);
    await ended(u);
    // After the end, a new speaker on the same (mixed) stream does not rewrite the line.
    for (let i = 0; i < 10; i++) report([s(2, 0.9)], [], 2000 + i * 100);
    expect(a.speakerOf(u)).toEqual({ speaker: "Alice", rtpSource: 1 });
  });

  it("takes a lone source without audio levels as the speaker, several as inconclusive", async () => {
    const one = setup();
    one.a.setNames({}, { "9": "Frank" });
    one.report([s(9, null)]);
    await ended(one.u);
    expect(one.a.speakerOf(one.u).speaker).toBe("Frank");

    const two = setup();
    two.a.setNames({}, { "9": "Frank", "10": "Grace" });
    two.report([], [s(9, null), s(10, null)]);
    await ended(two.u);
    expect(two.a.speakerOf(two.u).speaker).toBe("unknown");
  });

  it("ignores source numbers that are not 32-bit and empty names", () => {
    const { a, u } = setup();
    a.setNames({ "track-1": "" }, { "-1": "X", "4294967296": "Y", abc: "Z" });
    expect(a.speakerOf(u).speaker).toBe("unknown");
  });
});
