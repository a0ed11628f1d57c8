import { beforeAll, describe, expect, it } from "vitest";
import { loadSpeech, run, toInt16 } from "./testing/audio-tools.js";
import { createRnnoiseSuppressor, loadRnnoise } from "./rnnoise-suppressor.js";

function levelDb(x: Int16Array): number {
  let e = 0;
  for (const v of x) e += v * v;
  return 10 * Math.log10(e / Math.max(1, x.length) / 32768 ** 2 + 1e-12);
}

function through(rate: number, pcm: Int16Array): Int16Array {
  const ns = createRnnoiseSuppressor({ sampleRate: rate });
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

describe("createRnnoiseSuppressor (RNNoise, WebAssembly)", () => {
  beforeAll(() => loadRnnoise());

  it.each([8000, 16000])("takes pink noise at %i Hz down by more than 10 dB", (rate) => {
    const noise = toInt16(
      run("sox", [
        "-R",
        "-n",
        ...["-t", "raw", "-r", String(rate), "-e", "signed", "-b", "16", "-c", "1", "-"],
        ...["synth", "4", "pinknoise", "vol", "0.03"],
      ]),
    );
    const out = through(rate, noise);
    expect(out.length).toBeGreaterThan(noise.length - rate / 25);
    const tail = (x: Int16Array) => x.subarray(x.length - rate * 2);
    expect(levelDb(tail(noise)) - levelDb(tail(out))).toBeGreaterThan(10);
  });

  it("keeps speech within 6 dB of its level in a quiet recording", () => {
    const speech = loadSpeech("goforward.raw", 8000);
    const out = through(8000, speech);
    expect(Math.abs(levelDb(out) - levelDb(speech))).toBeLessThan(6);
  });

  it("returns whole 20 ms frames at the line's rate", () => {
    const ns = createRnnoiseSuppressor({ sampleRate: 8000 });
    let total = 0;
    for (let i = 0; i < 50; i++) {
      const out = ns.process(new Int16Array(160).fill(100));
      expect(out.length % 160).toBe(0);
      total += out.length;
    }
    expect(total).toBeGreaterThanOrEqual(160 * 48);
    ns.close();
  });

  it("close() is idempotent and process() afterwards is invalid_state; bad rates are refused", () => {
    const ns = createRnnoiseSuppressor({ sampleRate: 16000 });
    ns.close();
    ns.close();
    expect(() => ns.process(new Int16Array(320))).toThrow(expect.objectContaining({ code: "invalid_state" }));
    expect(() => createRnnoiseSuppressor({ sampleRate: 11025 })).toThrow(
      expect.objectContaining({ code: "invalid_options" }),
    );
  });
});
