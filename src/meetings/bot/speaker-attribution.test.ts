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

  describe("the page's active-speaker marks (Zoom, Teams)", () => {
    it("names the utterance after the one participant marked during it, marks after its end within the tail included", async () => {
      const { a, u } = setup("mixed");
      a.noteActiveSpeakers([], u.startedAt - 300); // before it: nobody
      a.noteActiveSpeakers(["Alice"], u.startedAt + 100);
      a.noteActiveSpeakers(["Alice"], u.startedAt + 200);
      await ended(u);
      a.noteActiveSpeakers(["Alice"], u.endedAt! + 300); // the page's lag
      expect(a.speakerOf(u)).toEqual({ speaker: "Alice" });
    });

    it("says unknown when nobody is marked, when two are marked alike, and ignores marks outside the utterance", async () => {
      const none = setup("mixed");
      none.a.noteActiveSpeakers([], none.u.startedAt + 100);
      none.a.noteActiveSpeakers(["Bob"], none.u.startedAt - 2000); // Bob spoke before
      await ended(none.u);
      none.a.noteActiveSpeakers(["Bob"], none.u.endedAt! + 2000); // and after
      expect(none.a.speakerOf(none.u).speaker).toBe("unknown");

      const both = setup("mixed");
      both.a.noteActiveSpeakers(["Alice", "Bob"], both.u.startedAt + 100);
      both.a.noteActiveSpeakers(["Alice", "Bob"], both.u.startedAt + 300);
      await ended(both.u);
      expect(both.a.speakerOf(both.u).speaker).toBe("unknown");
    });

    it("needs one name to dominate the marks (a handover at the edge is fine, a split is not)", async () => {
      const edge = setup("mixed");
      for (const [name, t] of [
        ["Bob", 0],
        ["Alice", 100],
        ["Alice", 200],
        ["Alice", 300],
        ["Alice", 400],
      ] as const)
        edge.a.noteActiveSpeakers([name], edge.u.startedAt + t);
      await ended(edge.u);
      expect(edge.a.speakerOf(edge.u).speaker).toBe("Alice");

      const split = setup("mixed");
      for (const [name, t] of [
        ["Bob", 0],
        ["Alice", 100],
        ["Bob", 200],
        ["Alice", 300],
      ] as const)
        split.a.noteActiveSpeakers([name], split.u.startedAt + t);
      await ended(split.u);
      expect(split.a.speakerOf(split.u).speaker).toBe("unknown");
    });

    it("says unknown when the marks and the RTP source name different people", async () => {
      const { a, u, report } = setup("mixed");
      a.setNames({}, { "1111": "Alice" });
      for (let i = 0; i < 5; i++) report([s(1111, 0.2)], [], i * 200);
      a.noteActiveSpeakers(["Bob"], u.startedAt + 300);
      await ended(u);
      expect(a.speakerOf(u)).toEqual({ speaker: "unknown", rtpSource: 1111 });
      a.noteActiveSpeakers(["Alice"], u.endedAt! + 100);
      a.noteActiveSpeakers(["Alice"], u.endedAt! + 200);
      a.noteActiveSpeakers(["Alice"], u.endedAt! + 300);
      a.noteActiveSpeakers(["Alice"], u.endedAt! + 400);
      // Now the marks agree with the source (Alice 4 of 5).
      expect(a.speakerOf(u)).toEqual({ speaker: "Alice", rtpSource: 1111 });
    });
  });
});
