import { describe, expect, it } from "vitest";
import { CodecError } from "./codec-error.js";
import { noiseCorpus, onsetCases, concatPcm, quietLineCase } from "./testing/vad-corpus.js";
import { createVad, type VadOptions } from "./vad.js";

const RATES = [16000, 8000] as const;

function firstStartMs(options: VadOptions, pcm: Int16Array): number {
  const vad = createVad(options);
  const frame = options.sampleRate / 50;
  try {
    for (let o = 0; o + frame <= pcm.length; o += frame) {
      if (vad.process(pcm.subarray(o, o + frame)) === "speech-start")
        return ((o + frame) * 1000) / options.sampleRate;
    }
    return Number.POSITIVE_INFINITY;
  } finally {
    vad.close();
  }
}

function starts(options: VadOptions, pcm: Int16Array): number {
  const vad = createVad(options);
  const frame = options.sampleRate / 50;
  let n = 0;
  for (let o = 0; o + frame <= pcm.length; o += frame)
    if (vad.process(pcm.subarray(o, o + frame)) === "speech-start") n++;
  vad.close();
  return n;
}

describe.each(RATES)("createVad at %i Hz on real recordings", (rate) => {
  const cases = onsetCases(rate);

  it.each(cases.map((c) => [c.name, c] as const))("detects the onset of %s within 100 ms", (_name, c) => {
    const at = firstStartMs({ sampleRate: rate }, c.pcm);
    expect(at - c.onsetMs).toBeLessThanOrEqual(100);
    // Not in the second of noise before the speech either.
    expect(at).toBeGreaterThan(c.onsetMs - 100);
  });
});

describe("createVad on a quiet line, as the speech gate runs it (-45 dBFS, 120 ms)", () => {
  const gate = { sampleRate: 8000, minLevelDbfs: -45, onsetMs: 120, hangoverMs: 500 } as const;

  // A caller this quiet dips under the level floor between syllables. With each gap taking a whole point off
  // the onset score, these were heard 530, 670 and 620 ms after their onset (the next word); on a line whose
  // floor is under -70 dBFS a gap weighs a quarter (vad.ts, QUIET_GAP_WEIGHT): 230, 270 and 220 ms.
  it.each([
    ["cards/001.wav", -44],
    ["cards/005.wav", -44],
    ["librivox/sense_and_sensibility_01_austen_64kb-0870.wav", -42],
  ] as const)("hears %s at %i dBFS within 300 ms of its onset", (name, dbfs) => {
    const c = quietLineCase(name, dbfs);
    const at = firstStartMs(gate, c.pcm);
    expect(at - c.onsetMs).toBeLessThan(300);
    expect(at).toBeGreaterThan(c.onsetMs);
  });
});

describe.each(RATES)("createVad at %i Hz on ten minutes of noise, hum and silence", (rate) => {
  const corpus = noiseCorpus(rate);
  const stream = concatPcm(corpus.map((c) => c.pcm));

  it("covers ten minutes", () => {
    expect(stream.length / rate).toBe(600);
  });

  it("never declares speech, streamed as one call", () => {
    expect(starts({ sampleRate: rate }, stream)).toBe(0);
  });

  it.each(corpus.map((c) => [c.name, c.pcm] as const))("never declares speech on %s alone", (_name, pcm) => {
    expect(starts({ sampleRate: rate }, pcm)).toBe(0);
  });

  it("would catch the WebRTC VAD without the energy gate", () => {
    expect(starts({ sampleRate: rate, minSnrDb: 0, minLevelDbfs: -120 }, stream)).toBeGreaterThan(0);
  });
});

describe("createVad: segments and state", () => {
  const [c] = onsetCases(16000);

  it("ends a segment once the hangover has passed without speech", () => {
    const vad = createVad({ sampleRate: 16000, hangoverMs: 300 });
    // Two seconds of pink noise at about the recording's own noise level (-60 dBFS).
    const tail = Int16Array.from(noiseCorpus(16000)[2]!.pcm.subarray(0, 16000 * 2), (v) =>
      Math.round(v * 0.178),
    );
    const pcm = concatPcm([c!.pcm, tail]);
    const events: Array<[string, number]> = [];
    for (let o = 0; o + 320 <= pcm.length; o += 320) {
      const e = vad.process(pcm.subarray(o, o + 320));
      if (e === "speech-start" || e === "speech-end") events.push([e, (o + 320) / 16]);
    }
    expect(events[0]?.[0]).toBe("speech-start");
    const last = events.at(-1)!;
    expect(last[0]).toBe("speech-end");
    expect(last[1]).toBeGreaterThanOrEqual(c!.pcm.length / 16 - 1000);
    expect(last[1]).toBeLessThanOrEqual(c!.pcm.length / 16 + 400);
    expect(vad.speaking).toBe(false);
    vad.close();
  });

  it("reports a probability that rises in speech and a noise floor near the noise level", () => {
    const vad = createVad({ sampleRate: 16000 });
    for (let o = 0; o < 16000; o += 320) vad.process(c!.pcm.subarray(o, o + 320));
    expect(vad.probability).toBeLessThan(0.1);
    expect(vad.noiseFloorDbfs).toBeGreaterThan(-60);
    expect(vad.noiseFloorDbfs).toBeLessThan(-45);
    let peak = 0;
    for (let o = 16000; o + 320 <= c!.pcm.length; o += 320) {
      vad.process(c!.pcm.subarray(o, o + 320));
      peak = Math.max(peak, vad.probability);
    }
    expect(peak).toBeGreaterThan(0.8);
    vad.close();
  });

  it("says which frames held speech: the ones that restart the hangover", () => {
    const vad = createVad({ sampleRate: 16000, hangoverMs: 300 });
    const pcm = concatPcm([c!.pcm, new Int16Array(16000)]);
    const voiced: boolean[] = [];
    let ended = -1;
    for (let o = 0; o + 320 <= pcm.length; o += 320) {
      if (vad.process(pcm.subarray(o, o + 320)) === "speech-end") ended = voiced.length;
      voiced.push(vad.voiced);
    }
    expect(voiced).toContain(true);
    expect(ended).toBeGreaterThan(0);
    // 300 ms of 10 ms sub-frames without speech end the segment: the 14 frames before the end and the end's
    // own frame held none, and the frame before them (or its neighbour, by sub-frame) held some.
    expect(voiced.slice(ended - 14, ended + 1)).not.toContain(true);
    expect(voiced.slice(ended - 16, ended - 14)).toContain(true);
    expect(voiced.slice(ended + 1)).not.toContain(true);
    vad.close();
  });

  it("accepts any multiple of 10 ms and gives the same decisions", () => {
    const a = createVad({ sampleRate: 16000 });
    const b = createVad({ sampleRate: 16000 });
    const pcm = c!.pcm.subarray(0, 16000 * 2.4);
    const sa: boolean[] = [];
    const sb: boolean[] = [];
    for (let o = 0; o < pcm.length; o += 640) {
      a.process(pcm.subarray(o, o + 640));
      sa.push(a.speaking);
      b.process(pcm.subarray(o, o + 160));
      b.process(pcm.subarray(o + 160, o + 640));
      sb.push(b.speaking);
    }
    expect(sb).toEqual(sa);
    expect(sa).toContain(true);
  });

  it("forgets the stream on reset()", () => {
    const vad = createVad({ sampleRate: 16000 });
    for (let o = 0; o + 320 <= c!.pcm.length; o += 320) vad.process(c!.pcm.subarray(o, o + 320));
    vad.reset();
    expect(vad.speaking).toBe(false);
    expect(vad.noiseFloorDbfs).toBeNaN();
    vad.close();
  });

  it("rejects a frame that is not a multiple of 10 ms and stays usable", () => {
    const vad = createVad({ sampleRate: 8000 });
    expect(() => vad.process(new Int16Array(100))).toThrow(
      expect.objectContaining({ code: "invalid_audio" }),
    );
    expect(() => vad.process(new Int16Array(0))).toThrow(CodecError);
    expect(vad.process(new Int16Array(160))).toBe("silence");
    vad.close();
  });

  it.each([
    [{ sampleRate: 24000 }, "unsupported_rate"],
    [{ sampleRate: Number.NaN }, "unsupported_rate"],
    [{ sampleRate: 16000, mode: 4 }, "invalid_options"],
    [{ sampleRate: 16000, onsetMs: 25 }, "invalid_options"],
    [{ sampleRate: 16000, hangoverMs: 0 }, "invalid_options"],
    [{ sampleRate: 16000, minSnrDb: Number.NaN }, "invalid_options"],
  ])("rejects %o with %s", (options, code) => {
    expect(() => createVad(options)).toThrow(expect.objectContaining({ code }));
  });

  it("close() is idempotent and process() afterwards throws invalid_state", () => {
    const vad = createVad({ sampleRate: 16000 });
    vad.close();
    vad.close();
    expect(() => vad.process(new Int16Array(160))).toThrow(
      expect.objectContaining({ code: "invalid_state" }),
    );
  });
});
