import { afterEach, describe, expect, it } from "vitest";
import { createEchoCanceller, echoCancellerAvailable } from "../../codecs/echo-canceller.js";
import { decodeMulaw, encodeMulaw } from "../../codecs/mulaw.js";
import { loadSpeech } from "../../codecs/testing/audio-tools.js";
import { EchoGuard, resolveEchoCancellation } from "./echo-guard.js";
import { SpeechGate } from "./speech-gate.js";

const RATE = 8000;
const FRAME = 160;
const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const o of open.splice(0)) o.close();
});

describe("resolveEchoCancellation", () => {
  it("fills the defaults", () => {
    expect(resolveEchoCancellation()).toEqual({ enabled: true, tailMs: 300, denoise: false });
  });

  it.each([
    [{ tailMs: 19 }, "talk.input.echoCancellation.tailMs"],
    [{ tailMs: 1001 }, "talk.input.echoCancellation.tailMs"],
    [{ tailMs: Number.NaN }, "talk.input.echoCancellation.tailMs"],
    [{ enabled: "yes" as unknown as boolean }, "talk.input.echoCancellation.enabled"],
    [{ denoise: 1 as unknown as boolean }, "talk.input.echoCancellation.denoise"],
  ])("refuses %j naming %s", (options, key) => {
    expect(() => resolveEchoCancellation(options)).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => resolveEchoCancellation(options)).toThrow(key);
  });
});

/** The assistant's audio back on the caller's channel: delay, loss, a 3-tap line response, u-law; plus the caller. */
function line(
  far: Int16Array,
  delayMs: number,
  lossDb: number,
  near?: { pcm: Int16Array; at: number; gain: number },
) {
  const delay = (RATE * delayMs) / 1000;
  const g = 10 ** (-lossDb / 20);
  const taps = [1, 0.35, -0.15];
  const mic = new Int16Array(far.length);
  for (let i = 0; i < far.length; i++) {
    let v = 0;
    for (let k = 0; k < taps.length; k++) v += (far[i - delay - k] ?? 0) * taps[k]!;
    v *= g;
    if (near) v += (near.pcm[i - near.at] ?? 0) * near.gain;
    mic[i] = Math.max(-32768, Math.min(32767, Math.round(v)));
  }
  return decodeMulaw(encodeMulaw(mic));
}

/** The gate's speech onsets (ms) on the guard's output, the reference fed in step, 20 ms at a time. */
function onsets(mic: Int16Array, far: Int16Array, cancel: boolean): number[] {
  const guard = new EchoGuard((o) => createEchoCanceller(o), resolveEchoCancellation(), RATE);
  const gate = new SpeechGate({ threshold: -45, minSpeechMs: 120, silenceMs: 800, sampleRate: RATE });
  open.push(guard, gate);
  const found: number[] = [];
  for (let at = 0; at + FRAME <= mic.length; at += FRAME) {
    const frame = mic.subarray(at, at + FRAME);
    const heard = cancel ? guard.process(frame, far.subarray(at, at + FRAME)) : frame;
    if (gate.process(heard) === "speech-start") found.push(at / 8);
  }
  return found;
}

describe.skipIf(!echoCancellerAvailable())("EchoGuard (libspeexdsp)", () => {
  const far = loadSpeech("librivox/sense_and_sensibility_01_austen_64kb-0870.wav", RATE).subarray(
    0,
    RATE * 8,
  );
  const near = loadSpeech("goforward.raw", RATE);

  for (const [delayMs, lossDb] of [
    [20, 6],
    [120, 6],
    [250, 6],
    [120, 12],
  ] as const) {
    it(`an echo-only call (${delayMs} ms, ${lossDb} dB) starts no speech at the gate; without the guard it does`, () => {
      const mic = line(far, delayMs, lossDb);
      expect(onsets(mic, far, true)).toEqual([]);
      expect(onsets(mic, far, false).length).toBeGreaterThan(0);
    });
  }

  it("a caller as loud as the assistant is heard over the echo, within 60 ms of the onset without echo", () => {
    const at = RATE * 3;
    const alone = onsets(line(new Int16Array(far.length), 120, 6, { pcm: near, at, gain: 3 }), far, false);
    const over = onsets(line(far, 120, 6, { pcm: near, at, gain: 3 }), far, true);
    expect(alone).toHaveLength(1);
    // The same onset, at most three frames later (the residual test drops the quietest start of a word).
    expect(over).toHaveLength(1);
    expect(over[0]! - alone[0]!).toBeGreaterThanOrEqual(0);
    expect(over[0]! - alone[0]!).toBeLessThanOrEqual(60);
  });

  it("on a handset (30 dB echo return) a caller at the recording's level is heard once the echo return is measured", () => {
    const at = RATE * 3;
    const over = onsets(line(far, 120, 30, { pcm: near, at, gain: 1 }), far, true);
    const alone = onsets(line(new Int16Array(far.length), 120, 30, { pcm: near, at, gain: 1 }), far, false);
    expect(alone).toHaveLength(1);
    expect(over).toHaveLength(1);
    expect(over[0]! - alone[0]!).toBeGreaterThanOrEqual(0);
    expect(over[0]! - alone[0]!).toBeLessThanOrEqual(60);
  });

  it("closes once; audio after close is dropped", () => {
    const guard = new EchoGuard(
      (o) => createEchoCanceller(o),
      resolveEchoCancellation({ tailMs: 100 }),
      RATE,
    );
    expect(guard.process(new Int16Array(FRAME), undefined)).toHaveLength(FRAME);
    guard.close();
    guard.close();
    expect(guard.process(new Int16Array(FRAME), new Int16Array(FRAME))).toHaveLength(0);
  });
});
