import { describe, expect, it } from "vitest";
import { RecordingTimeline } from "./recording-timeline.js";

/** 8 kHz: 8 samples per ms, a 20 ms frame is 160 samples. */
const frame = (value: number, n = 160): Int16Array => new Int16Array(n).fill(value);
const track = (stereo: Int16Array, channel: 0 | 1): number[] =>
  Array.from(stereo.filter((_, i) => i % 2 === channel));

describe("RecordingTimeline", () => {
  it("lays caller frames end to end through jitter, and places a frame after a real gap where the clock is", () => {
    const t = new RecordingTimeline({ sampleRate: 8000, callerLagMs: 100 });
    t.caller(frame(1), 160);
    t.caller(frame(2), 600); // 55 ms late: jitter within the lag, joins the frame before
    expect(t.callerEnd).toBe(320);
    t.caller(frame(3), 4000); // nothing for 460 ms: a gap, this frame ends now
    expect(t.callerEnd).toBe(4000);
    const caller = track(t.take(4000), 0);
    expect(caller.slice(0, 160).every((v) => v === 1)).toBe(true);
    expect(caller.slice(160, 320).every((v) => v === 2)).toBe(true);
    expect(caller.slice(320, 3840).every((v) => v === 0)).toBe(true);
    expect(caller.slice(3840).every((v) => v === 3)).toBe(true);
  });

  it("plays assistant audio at 1x from when it was sent, after the audio sent before it", () => {
    const t = new RecordingTimeline({ sampleRate: 8000 });
    t.assistant(frame(5), 800); // sent at 100 ms
    t.assistant(frame(6), 800); // sent in the same burst: queued behind
    expect(t.assistantEnd).toBe(800 + 320);
    t.assistant(frame(7), 2000); // after a pause: at the clock
    const assistant = track(t.take(2160), 1);
    expect(assistant.slice(0, 800).every((v) => v === 0)).toBe(true);
    expect(assistant.slice(800, 960).every((v) => v === 5)).toBe(true);
    expect(assistant.slice(960, 1120).every((v) => v === 6)).toBe(true);
    expect(assistant.slice(1120, 2000).every((v) => v === 0)).toBe(true);
    expect(assistant.slice(2000).every((v) => v === 7)).toBe(true);
  });

  it("a cut drops the assistant audio not yet played at the clock, never what was confirmed played", () => {
    const t = new RecordingTimeline({ sampleRate: 8000 });
    for (let i = 0; i < 10; i++) t.assistant(frame(i + 1), 0); // 200 ms sent at once
    t.confirm(480); // the far end confirmed the first 60 ms
    t.cut(320); // cleared at 40 ms: confirmed audio stays
    expect(t.assistantEnd).toBe(480);
    const assistant = track(t.takeRest(320), 1);
    expect(assistant).toHaveLength(480);
    expect(assistant.slice(320, 480).every((v) => v === 3)).toBe(true);
    // After the cut the next answer starts at the clock, and the dropped tail stays silent.
    const u = new RecordingTimeline({ sampleRate: 8000 });
    for (let i = 0; i < 10; i++) u.assistant(frame(9), 0);
    u.cut(800);
    u.assistant(frame(4), 1200);
    const out = track(u.take(1360), 1);
    expect(out.slice(0, 800).every((v) => v === 9)).toBe(true);
    expect(out.slice(800, 1200).every((v) => v === 0)).toBe(true);
    expect(out.slice(1200).every((v) => v === 4)).toBe(true);
  });

  it("takes only what can no longer change; the rest stays buffered and taken audio is never touched again", () => {
    const t = new RecordingTimeline({ sampleRate: 8000, callerLagMs: 100 });
    t.caller(frame(1), 160);
    t.assistant(frame(2, 1600), 160); // 200 ms of answer, played from 20 ms on
    expect(t.finalPosition(400)).toBe(160); // the caller's next frame may still land after 160
    expect(t.finalPosition(2000)).toBe(1200); // no caller audio for longer than the lag
    const first = t.take(t.finalPosition(400));
    expect(first).toHaveLength(320);
    t.cut(400); // a clear at 50 ms
    t.caller(frame(3), 400);
    const rest = t.takeRest(400);
    expect(t.taken).toBe(400);
    expect(
      track(rest, 0)
        .slice(0, 160)
        .every((v) => v === 3),
    ).toBe(true);
    expect(track(rest, 1).every((v) => v === 2)).toBe(true); // 160..400 played, then cut
    expect(rest).toHaveLength(2 * 240);
  });

  it("refuses assistant audio placed too far ahead instead of buffering it without bound", () => {
    const t = new RecordingTimeline({ sampleRate: 8000, maxAheadMs: 1000 });
    expect(t.assistant(frame(1, 8000), 0)).toBe(true);
    expect(t.assistant(frame(1, 160), 0)).toBe(false);
    expect(t.droppedSamples).toBe(160);
  });

  it("validates its options", () => {
    expect(() => new RecordingTimeline({ sampleRate: 1234.5 })).toThrow(/sample rate/);
    expect(() => new RecordingTimeline({ sampleRate: 8000, callerLagMs: 1 })).toThrow(/callerLagMs/);
  });
});
