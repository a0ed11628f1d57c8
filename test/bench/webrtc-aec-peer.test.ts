import { describe, expect, it } from "vitest";
import { webrtcAecBinding, webrtcAecChain } from "../../bench/lib/webrtc-aec-peer.js";
import { loadChain } from "../../bench/lib/onset-latency.js";
import { attenuationDb } from "../support/canceller-check.js";

/**
 * The echo benches' peer (bench/onset-latency.bench.ts --peer webrtc-aec): WebRTC's echo canceller from
 * Debian's webrtc-audio-processing, built by setup.sh. A peer that silently cancelled nothing (a reference
 * the library refused, as a first version of the binding did without a word) would make every figure
 * beside it a lie, so: it must take the echo off, and only given the reference.
 */

const FRAME = 160;

/** dB taken off an echo-only answer's last 2 s (test/support/canceller-check.ts). */
function cancel(withReference: boolean): number {
  const { EchoCanceller } = webrtcAecBinding();
  const aec = new EchoCanceller(8000, 1);
  try {
    return attenuationDb((reference, mic) => {
      const out = new Int16Array(FRAME);
      aec.process(mic, reference, out);
      return out;
    }, withReference);
  } finally {
    aec.close();
  }
}

describe("the WebRTC echo canceller peer", () => {
  it("takes over 15 dB off an echo-only answer once converged, and nothing without the reference", () => {
    expect(cancel(true)).toBeGreaterThan(15);
    // Without the reference it has nothing to subtract: the echo goes through (its suppression leaves it whole).
    expect(cancel(false)).toBeLessThan(3);
  });

  it("refuses bad input with a clear error and is closed once", () => {
    const { EchoCanceller } = webrtcAecBinding();
    expect(() => new EchoCanceller(44_100, 1)).toThrow(/8000 or 16000/);
    expect(() => new EchoCanceller(8000, 3)).toThrow(/suppression/);
    const aec = new EchoCanceller(8000, 0);
    expect(() => aec.process(new Int16Array(160), new Int16Array(80), new Int16Array(160))).toThrow(
      /same whole 10 ms frames/,
    );
    expect(() => aec.process(new Int16Array(100), new Int16Array(100), new Int16Array(100))).toThrow(
      /same whole 10 ms frames/,
    );
    aec.close();
    aec.close();
    expect(() => aec.process(new Int16Array(160), new Int16Array(160), new Int16Array(160))).toThrow(
      /closed/,
    );
  });

  it("stands in the bench's chain in the guard's place: its output is what the gate hears", async () => {
    const peer = webrtcAecChain(await loadChain("change"), "low");
    expect(peer.name).toBe("webrtc-aec:low");
    const guard = new peer.EchoGuard(
      () => {
        throw new Error("the peer makes its own canceller");
      },
      {} as never,
      8000,
    );
    const mic = new Int16Array(FRAME).fill(1000);
    expect(guard.process(mic, new Int16Array(FRAME))).toHaveLength(FRAME);
    expect(guard.suppressedFrames).toBe(0);
    guard.close();
  });
});
