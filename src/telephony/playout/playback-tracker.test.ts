import { describe, expect, it } from "vitest";
import { OutboundFramer } from "./outbound-framer.js";
import { PlaybackTracker } from "./playback-tracker.js";

/**
 * Drives a framer and a tracker the way the call adapter will: provider audio
 * in, bursts out (each media frame counted as sent, each mark recorded), and
 * a simulated carrier that plays frames in order and echoes marks.
 */
class Harness {
  readonly framer = new OutboundFramer({ maxFramesPerBurst: 5 }); // a mark every 100 ms
  readonly tracker = new PlaybackTracker();
  /** What the simulated carrier holds, in order: frames (ms) and marks. */
  carrier: Array<{ kind: "audio"; ms: number } | { kind: "mark"; name: string }> = [];

  providerAudio(itemId: string, ms: number): void {
    this.tracker.produced(itemId, ms);
    this.framer.push(itemId, new Uint8Array(ms * 8).fill(0x55));
    this.pump();
  }

  providerDone(itemId: string): void {
    this.framer.end(itemId);
    this.pump();
  }

  pump(): void {
    while (this.framer.hasBurst) {
      for (const out of this.framer.takeBurst()) {
        if (out.type === "media") {
          this.tracker.sent(out.itemId, out.ms);
          this.carrier.push({ kind: "audio", ms: out.ms });
        } else {
          this.tracker.markSent(out.name, out.itemId);
          this.carrier.push({ kind: "mark", name: out.name });
        }
      }
    }
  }

  /** Playback time not yet spent on a whole frame. */
  credit = 0;

  /** The carrier plays `ms` of audio, echoing each mark it passes. */
  play(ms: number): void {
    this.credit += ms;
    while (this.carrier.length > 0) {
      const head = this.carrier[0]!;
      if (head.kind === "mark") {
        this.carrier.shift();
        this.tracker.markPlayed(head.name);
        continue;
      }
      if (this.credit < head.ms) break;
      this.credit -= head.ms;
      this.carrier.shift();
    }
  }

  /** We send clear: the carrier drops its audio and echoes the pending marks. */
  clear(): string[] {
    this.framer.clear();
    this.tracker.clear();
    const echoed = this.carrier.flatMap((e) => (e.kind === "mark" ? [e.name] : []));
    this.carrier = [];
    this.credit = 0;
    return echoed;
  }
}

describe("PlaybackTracker", () => {
  it("counts nothing heard before the carrier echoes a mark", () => {
    const h = new Harness();
    h.providerAudio("a", 500);
    expect(h.tracker.sentMs("a")).toBe(500);
    expect(h.tracker.heardMs("a")).toBe(0);
    expect(h.tracker.playing).toBe(true);
  });

  it("advances heard to each echoed mark", () => {
    const h = new Harness();
    h.providerAudio("a", 500);
    h.play(100);
    expect(h.tracker.heardMs("a")).toBe(100);
    h.play(250);
    expect(h.tracker.heardMs("a")).toBe(300); // marks every 100 ms: 350 played, 300 confirmed
    h.play(150);
    expect(h.tracker.heardMs("a")).toBe(500);
    expect(h.tracker.playing).toBe(false);
  });

  it("measures every reply from its own start across several replies in a row", () => {
    const h = new Harness();
    // Reply 1: 1 s, fully heard.
    h.providerAudio("reply-1", 1000);
    h.providerDone("reply-1");
    h.play(1000);
    // Reply 2: 800 ms, caller interrupts after 400 ms.
    h.providerAudio("reply-2", 800);
    h.play(400);
    expect(h.tracker.heardMs("reply-1")).toBe(1000);
    // Twilio's sample measures from the stream/response clock and would say 1400 here.
    expect(h.tracker.heardMs("reply-2")).toBe(400);
    h.clear();
    // Reply 3 after the barge-in, heard 200 ms.
    h.providerAudio("reply-3", 600);
    h.play(200);
    expect(h.tracker.heardMs("reply-3")).toBe(200);
    expect(h.tracker.heardMs("reply-2")).toBe(400);
  });

  it("credits an earlier reply fully when a mark of the next one is echoed", () => {
    const h = new Harness();
    h.providerAudio("a", 300);
    h.providerDone("a");
    h.providerAudio("b", 300); // queued behind a at the carrier
    h.play(400);
    expect(h.tracker.heardMs("a")).toBe(300);
    expect(h.tracker.heardMs("b")).toBe(100);
  });

  it("ignores the echoes of marks dropped by clear()", () => {
    const h = new Harness();
    h.providerAudio("a", 1000);
    h.play(300);
    const echoed = h.clear();
    expect(echoed.length).toBeGreaterThan(0);
    for (const name of echoed) expect(h.tracker.markPlayed(name)).toBe(false);
    expect(h.tracker.heardMs("a")).toBe(300);
    expect(h.tracker.pendingMarks).toBe(0);
    expect(h.tracker.sentMs("a")).toBe(300);
  });

  it("clamps heard to the audio the provider produced (padding of the last frame excluded)", () => {
    const h = new Harness();
    h.providerAudio("a", 250); // sent as 13 frames = 260 ms
    h.providerDone("a");
    expect(h.tracker.sentMs("a")).toBe(260);
    h.play(260);
    expect(h.tracker.heardMs("a")).toBe(250);
  });

  it("returns 0 for an unknown item and after forget()", () => {
    const h = new Harness();
    expect(h.tracker.heardMs("nope")).toBe(0);
    h.providerAudio("a", 200);
    h.play(200);
    h.tracker.forget("a");
    expect(h.tracker.heardMs("a")).toBe(0);
  });

  it("returns false for a mark it never saw", () => {
    expect(new PlaybackTracker().markPlayed("stranger")).toBe(false);
  });

  it("remembers at most maxItems items", () => {
    const t = new PlaybackTracker({ maxItems: 2 });
    for (const id of ["a", "b", "c"]) {
      t.produced(id, 100);
      t.sent(id, 100);
      t.markSent(`m-${id}`, id);
      t.markPlayed(`m-${id}`);
    }
    expect(t.heardMs("a")).toBe(0);
    expect(t.heardMs("c")).toBe(100);
  });

  it("rejects negative durations and bad options", () => {
    expect(() => new PlaybackTracker().sent("a", -1)).toThrow(
      expect.objectContaining({ code: "invalid_params" }),
    );
    expect(() => new PlaybackTracker({ maxItems: 0 })).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });
});
