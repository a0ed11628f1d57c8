import { describe, expect, it } from "vitest";
import { ANSWER } from "../../bench/lib/turn-corpus.js";
import { espeak } from "../../bench/lib/corpus-audio.js";
import { webrtcAecBinding, webrtcAecChain } from "../../bench/lib/webrtc-aec-peer.js";
import { loadChain } from "../../bench/lib/onset-latency.js";
import { EchoPath, roomResponse } from "../support/echo-path.js";

/**
 * The echo benches' peer (bench/onset-latency.bench.ts --peer webrtc-aec): WebRTC's echo canceller from
 * Debian's webrtc-audio-processing, built by setup.sh. A peer that silently cancelled nothing (a reference
 * the library refused, as a first version of the binding did without a word) would make every figure
 * beside it a lie, so: it must take the echo off, and only given the reference.
 */

const FRAME = 160;

/** Input and output power (sum of squares) over the last 2 s of 6 s of echo-only answer. */
function cancel(withReference: boolean): { input: number; output: number } {
  const { EchoCanceller } = webrtcAecBinding();
  const aec = new EchoCanceller(8000, 1);
  const answer = Int16Array.from(espeak(ANSWER).subarray(0, 6 * 8000), (v) => Math.round(v));
  const path = new EchoPath({ delayMs: 120, lossDb: 6, response: roomResponse(3) });
  const out = new Int16Array(FRAME);
  let input = 0;
  let output = 0;
  for (let at = 0; at + FRAME <= answer.length; at += FRAME) {
    const played = answer.subarray(at, at + FRAME);
    path.playedPcm(played);
    const mic = Int16Array.from(path.next(), (v) => Math.round(v));
    aec.process(mic, withReference ? played : new Int16Array(FRAME), out);
    if (at < 4 * 8000) continue;
    for (let i = 0; i < FRAME; i++) {
      input += mic[i]! * mic[i]!;
      output += out[i]! * out[i]!;
    }
  }
  aec.close();
  return { input, output };
}

const db = (ratio: number): number => 10 * Math.log10(ratio);

describe("the WebRTC echo canceller peer", () => {
  it("takes over 15 dB off an echo-only answer once converged, and nothing without the reference", () => {
    const cancelled = cancel(true);
    const blind = cancel(false);
    expect(db(cancelled.input / cancelled.output)).toBeGreaterThan(15);
    // Without the reference it has nothing to subtract: the echo goes through (its suppression leaves it whole).
    expect(db(blind.input / blind.output)).toBeLessThan(3);
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
