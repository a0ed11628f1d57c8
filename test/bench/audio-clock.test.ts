import { describe, expect, it } from "vitest";
import { AudioClock, base64Bytes } from "../../bench/lib/audio-clock-provider.js";
import { LatencyLog } from "../../bench/lib/frame-stamp.js";

/**
 * The carrier bench times frames by audio duration (stamps do not survive
 * Vonage's resampling): a 20 ms frame counts as through once the audio
 * received on the other side reaches its end, less 5 ms of resampler delay.
 */
function openLog(): LatencyLog {
  const log = new LatencyLog();
  log.open();
  log.windowStart = 0;
  return log;
}

describe("AudioClock", () => {
  it("counts each frame when a resampler's output, short by its delay, reaches it", () => {
    const log = openLog();
    const clock = new AudioClock();
    for (const at of [0, 20, 40]) clock.sent(at);
    // 16k -> 24k: 420 samples (17.5 ms) for the first frame, then 480 (20 ms) each.
    clock.received(17.5, log, 1);
    expect(log.samples).toEqual([1]);
    clock.received(20, log, 22);
    clock.received(20, log, 43);
    expect(log.samples).toEqual([1, 2, 3]);
    expect(log.arrived).toBe(3);
  });

  it("counts a frame late when whole frames lag a frame behind (a framer waiting for the next delta)", () => {
    const log = openLog();
    const clock = new AudioClock();
    clock.sent(0);
    clock.received(0, log, 1); // nothing framed yet
    clock.sent(20);
    clock.received(20, log, 21); // the first frame, completed by the second delta
    expect(log.samples).toEqual([21]);
    expect(log.arrived).toBe(1);
  });

  it("times a piece of several frames (a relay gathering the caller's frames) from its newest frame", () => {
    const log = openLog();
    const clock = new AudioClock();
    for (const at of [0, 20, 40]) clock.sent(at);
    clock.received(60, log, 45); // one 60 ms append, 5 ms after its last frame was sent
    expect(log.samples).toEqual([5, 5, 5]);
    expect(log.arrived).toBe(3);
  });

  it("does not count audio that has not arrived, or frames sent outside the window", () => {
    const log = openLog();
    log.windowStart = 10;
    const clock = new AudioClock();
    clock.sent(0);
    clock.sent(20);
    clock.received(14, log, 30);
    expect(log.arrived).toBe(0);
    clock.received(26, log, 40);
    expect(log.samples).toEqual([20]); // the frame sent at 0 is outside the window
  });
});

describe("base64Bytes", () => {
  it("gives the decoded length without decoding, padding included", () => {
    for (const n of [0, 1, 2, 3, 160, 161, 640, 959]) {
      const text = `"${Buffer.alloc(n, 7).toString("base64")}"`;
      expect(base64Bytes(text, 1, text.length - 1)).toBe(n);
    }
  });
});
