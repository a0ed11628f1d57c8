import { describe, expect, it } from "vitest";
import { loadSpeech, run, toInt16 } from "./testing/audio-tools.js";
import { createNoiseSuppressor, noiseSuppressorAvailable } from "./noise-suppressor.js";

function pink(rate: number, seconds: number, dbfs: number): Int16Array {
  const raw = toInt16(
    run(
      "sox",
      ["-R", "-n", "-t", "raw", "-r", String(rate), "-e", "signed", "-b", "16", "-c", "1", "-"].concat([
        "synth",
        String(seconds),
        "pinknoise",
        "vol",
        String(10 ** (dbfs / 20) * 3),
      ]),
    ),
  );
  return raw;
}

function levelDb(x: Int16Array): number {
  let e = 0;
  for (const v of x) e += v * v;
  return 10 * Math.log10(e / Math.max(1, x.length) / 32768 ** 2 + 1e-12);
}

function through(rate: number, pcm: Int16Array, suppressDb = -30): Int16Array {
  const ns = createNoiseSuppressor({ sampleRate: rate, suppressDb });
  const parts: Int16Array[] = [];
  for (let o = 0; o < pcm.length; o += rate / 50) parts.push(ns.process(pcm.subarray(o, o + rate / 50)));
  ns.close();
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

describe.skipIf(!noiseSuppressorAvailable())("createNoiseSuppressor (libspeexdsp's preprocessor)", () => {
  it.each([8000, 16000])(
    "takes steady pink noise at %i Hz down by more than 10 dB once it has learnt it",
    (rate) => {
      const noise = pink(rate, 4, -40);
      const out = through(rate, noise);
      const tail = (x: Int16Array) => x.subarray(x.length - rate * 2);
      expect(levelDb(tail(noise)) - levelDb(tail(out))).toBeGreaterThan(10);
    },
  );

  it("keeps speech within 6 dB of its level in a quiet recording", () => {
    const speech = loadSpeech("goforward.raw", 8000);
    const out = through(8000, speech);
    expect(Math.abs(levelDb(out) - levelDb(speech.subarray(0, out.length)))).toBeLessThan(6);
  });

  it("attenuates more with a deeper suppressDb", () => {
    const noise = pink(8000, 4, -40);
    const tail = (x: Int16Array) => x.subarray(x.length - 8000 * 2);
    expect(levelDb(tail(through(8000, noise, -40)))).toBeLessThan(
      levelDb(tail(through(8000, noise, -10))) - 3,
    );
  });

  it("carries a partial frame to the next call; close() is idempotent and process() afterwards is invalid_state", () => {
    const ns = createNoiseSuppressor({ sampleRate: 8000 });
    expect(ns.frameSamples).toBe(160);
    expect(ns.process(new Int16Array(100))).toHaveLength(0);
    expect(ns.process(new Int16Array(100))).toHaveLength(160);
    expect(ns.process(new Int16Array(120))).toHaveLength(160);
    ns.close();
    ns.close();
    expect(() => ns.process(new Int16Array(160))).toThrow(expect.objectContaining({ code: "invalid_state" }));
  });

  it.each([
    [{ sampleRate: 7000 }],
    [{ sampleRate: 8000, frameMs: 30 }],
    [{ sampleRate: 8000, suppressDb: 0 }],
    [{ sampleRate: 8000, suppressDb: -91 }],
    [{ sampleRate: 8000, suppressDb: -2.5 }],
  ])("refuses %j with invalid_options", (options) => {
    expect(() => createNoiseSuppressor(options)).toThrow(
      expect.objectContaining({ code: "invalid_options" }),
    );
  });
});
