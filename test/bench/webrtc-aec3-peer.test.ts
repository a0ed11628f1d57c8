import { describe, expect, it } from "vitest";
import { loadChain } from "../../bench/lib/onset-latency.js";
import { Aec3Canceller, webrtcAec3Chain, webrtcAec3Module } from "../../bench/lib/webrtc-aec3-peer.js";
import { attenuationDb } from "../support/canceller-check.js";

/**
 * The echo benches' second peer (bench/onset-latency.bench.ts --peer webrtc-aec3): WebRTC's AEC3 from the
 * npm package @ennuicastr/webrtcaec3.js. As with the first peer, a peer that cancelled nothing would make
 * every figure beside it a lie: it must take the echo off, and only given the reference.
 */

const FRAME = 160;

/** dB taken off an echo-only answer's last 2 s (test/support/canceller-check.ts), and the canceller closed once. */
async function cancel(withReference: boolean): Promise<number> {
  const aec = new Aec3Canceller(await webrtcAec3Module(), 8000, 300, true);
  const db = attenuationDb((reference, mic) => {
    aec.played(reference);
    return aec.process(mic);
  }, withReference);
  // The coherence measure reads the output against the reference.
  expect(aec.explainedWithin(0, 20)).toBeGreaterThanOrEqual(0);
  aec.close();
  aec.close();
  expect(() => aec.process(new Int16Array(FRAME))).toThrow(/closed/);
  return db;
}

describe("the WebRTC AEC3 peer", () => {
  it("takes over 20 dB off an echo-only answer once converged, and little without the reference", async () => {
    expect(await cancel(true)).toBeGreaterThan(20);
    expect(await cancel(false)).toBeLessThan(3);
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
