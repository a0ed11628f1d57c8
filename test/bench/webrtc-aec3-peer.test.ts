import { describe, expect, it } from "vitest";
import { ANSWER } from "../../bench/lib/turn-corpus.js";
import { espeak } from "../../bench/lib/corpus-audio.js";
import { loadChain } from "../../bench/lib/onset-latency.js";
import { Aec3Canceller, webrtcAec3Chain, webrtcAec3Module } from "../../bench/lib/webrtc-aec3-peer.js";
import { EchoPath, roomResponse } from "../support/echo-path.js";

/**
 * The echo benches' second peer (bench/onset-latency.bench.ts --peer webrtc-aec3): WebRTC's AEC3 from the
 * npm package @ennuicastr/webrtcaec3.js. As with the first peer, a peer that cancelled nothing would make
 * every figure beside it a lie: it must take the echo off, and only given the reference.
 */

const FRAME = 160;

/** Input and output power over the last 2 s of 6 s of echo-only answer (6 dB, a room, 120 ms). */
async function cancel(withReference: boolean): Promise<{ input: number; output: number }> {
  const aec = new Aec3Canceller(await webrtcAec3Module(), 8000, 300, true);
  const answer = Int16Array.from(espeak(ANSWER).subarray(0, 6 * 8000), (v) => Math.round(v));
  const path = new EchoPath({ delayMs: 120, lossDb: 6, response: roomResponse(3) });
  let input = 0;
  let output = 0;
  for (let at = 0; at + FRAME <= answer.length; at += FRAME) {
    const played = answer.subarray(at, at + FRAME);
    path.playedPcm(played);
    const mic = Int16Array.from(path.next(), (v) => Math.round(v));
    aec.played(withReference ? played : new Int16Array(FRAME));
    const out = aec.process(mic);
    expect(out).toHaveLength(FRAME);
    if (at < 4 * 8000) continue;
    for (let i = 0; i < FRAME; i++) {
      input += mic[i]! * mic[i]!;
      output += out[i]! * out[i]!;
    }
  }
  // With a reference, the coherence measure reads the residual against it.
  if (withReference) expect(aec.explainedWithin(0, 20)).toBeGreaterThanOrEqual(0);
  aec.close();
  aec.close();
  expect(() => aec.process(new Int16Array(FRAME))).toThrow(/closed/);
  return { input, output };
}

const db = (ratio: number): number => 10 * Math.log10(ratio);

describe("the WebRTC AEC3 peer", () => {
  it("takes over 20 dB off an echo-only answer once converged, and little without the reference", async () => {
    const cancelled = await cancel(true);
    const blind = await cancel(false);
    expect(db(cancelled.input / cancelled.output)).toBeGreaterThan(20);
    expect(db(blind.input / blind.output)).toBeLessThan(3);
  });

  it("refuses caller audio that is not whole 20 ms frames", async () => {
    const aec = new Aec3Canceller(await webrtcAec3Module(), 8000, 300, false);
    expect(() => aec.process(new Int16Array(100))).toThrow(/whole 20 ms frames/);
    aec.close();
  });

  it("stands in the bench's chain alone, or under talkgate's guard in libspeexdsp's place", async () => {
    const base = await loadChain("change");
    const alone = await webrtcAec3Chain(base, "webrtc-aec3");
    const guarded = await webrtcAec3Chain(base, "webrtc-aec3+guard");
    expect([alone.name, guarded.name]).toEqual(["webrtc-aec3", "webrtc-aec3+guard"]);
    const peer = new alone.EchoGuard(
      () => {
        throw new Error("the peer makes its own canceller");
      },
      {} as never,
      8000,
    );
    expect(peer.process(new Int16Array(FRAME).fill(1000), new Int16Array(FRAME))).toHaveLength(FRAME);
    expect(peer.suppressedFrames).toBe(0);
    peer.close();
    // Under the guard: the guard's own class, its canceller AEC3.
    expect(guarded.EchoGuard).toBe(base.EchoGuard);
    const guard = new guarded.EchoGuard(
      (o) => guarded.createEchoCanceller({ ...o, frameMs: 20 }),
      base.resolveEchoCancellation({}),
      8000,
    );
    expect(guard.process(new Int16Array(FRAME).fill(1000), new Int16Array(FRAME))).toHaveLength(FRAME);
    guard.close();
  });
});
