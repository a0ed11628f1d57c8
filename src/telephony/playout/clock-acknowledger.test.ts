import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ClockAcknowledger } from "./clock-acknowledger.js";

describe("ClockAcknowledger (a carrier without playback acknowledgements)", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("reaches a mark once the audio sent before it has played at 1x", () => {
    const played: string[] = [];
    const ack = new ClockAcknowledger({ played: (n) => played.push(n), now: () => Date.now() });
    ack.media(800); // 100 ms of u-law
    ack.mark("a");
    ack.media(800);
    ack.mark("b");
    vi.advanceTimersByTime(99);
    expect(played).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(played).toEqual(["a"]);
    vi.advanceTimersByTime(100);
    expect(played).toEqual(["a", "b"]);
  });

  it("clear answers the pending marks at once and restarts the clock", () => {
    const played: string[] = [];
    const ack = new ClockAcknowledger({ played: (n) => played.push(n), now: () => Date.now() });
    ack.media(8000);
    ack.mark("a");
    ack.mark("b");
    ack.clear();
    expect(played).toEqual(["a", "b"]);
    ack.mark("c"); // nothing buffered any more
    vi.advanceTimersByTime(0);
    expect(played).toEqual(["a", "b", "c"]);
  });
});
