import { afterAll, describe, expect, it } from "vitest";
import { CodecError } from "./codec-error.js";
import { SUPPORTED_SAMPLE_RATES } from "./pcm.js";
import { createResampler, type Resampler } from "./resampler.js";
import { loadSpeech, soxResample } from "./testing/audio-tools.js";
import { inBandSnrDb, powerAboveDb, powerRatioDb, sine } from "./testing/spectrum.js";

const RATES = SUPPORTED_SAMPLE_RATES;
const PAIRS = RATES.flatMap((from) => RATES.filter((to) => to !== from).map((to) => ({ from, to })));
/** The band the SNR goal covers: 85% of the lower Nyquist (3.4 kHz at 8 kHz, the telephone band edge). */
const BAND = 0.85;

const speechCache = new Map<number, Int16Array>();
function speech(rate: number): Int16Array {
  let s = speechCache.get(rate);
  if (!s) {
    s = loadSpeech("numbers.raw", rate);
    speechCache.set(rate, s);
  }
  return s;
}

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/**
 * Sample-exact equality of two outputs, as the index of the first difference (-1 when equal).
 * `toEqual` on typed arrays of ~100,000 samples compares element by element through the generic
 * deep-equality path and took most of this file's minute.
 */
function firstDifference(a: Int16Array, b: Int16Array): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  )
    ? -1
    : a.findIndex((v, i) => v !== b[i]);
}

function whole(rs: Resampler, x: Int16Array): Int16Array {
  return concat([rs.process(x), rs.flush()]);
}

function chunked(rs: Resampler, x: Int16Array, chunk: number): Int16Array {
  const parts: Int16Array[] = [];
  for (let o = 0; o < x.length; o += chunk) parts.push(rs.process(x.subarray(o, o + chunk)));
  parts.push(rs.flush());
  return concat(parts);
}

const open: Resampler[] = [];
function make(from: number, to: number, extra: { channels?: number; quality?: number } = {}): Resampler {
  const rs = createResampler({ from, to, ...extra });
  open.push(rs);
  return rs;
}
afterAll(() => {
  for (const rs of open) rs.close();
});

describe("createResampler: streaming", () => {
  it.each(PAIRS)(
    "$from -> $to Hz gives the same output in 20 ms chunks, odd chunks and at once",
    ({ from, to }) => {
      const x = speech(from).subarray(0, from * 2);
      const rs = make(from, to);
      const ref = whole(rs, x);
      expect(ref.length).toBe(Math.ceil((x.length * to) / from));
      expect(
        firstDifference(chunked(rs, x, from / 50 === Math.floor(from / 50) ? from / 50 : 441), ref),
      ).toBe(-1);
      expect(firstDifference(chunked(rs, x, 37), ref)).toBe(-1);
    },
  );

  it("starts a new, identical stream after flush()", () => {
    const x = speech(16000).subarray(0, 8000);
    const rs = make(16000, 24000);
    const first = whole(rs, x);
    expect(firstDifference(whole(rs, x), first)).toBe(-1);
    expect(firstDifference(whole(make(16000, 24000), x), first)).toBe(-1);
  });

  it("resamples interleaved stereo as two independent channels", () => {
    const left = sine(48000, 440, 0.5, 9000);
    const right = sine(48000, 1250, 0.5, 5000);
    const stereo = new Int16Array(left.length * 2);
    for (let i = 0; i < left.length; i++) {
      stereo[2 * i] = left[i]!;
      stereo[2 * i + 1] = right[i]!;
    }
    const out = whole(make(48000, 16000, { channels: 2 }), stereo);
    const l = whole(make(48000, 16000), left);
    const r = whole(make(48000, 16000), right);
    expect(out.length).toBe(l.length * 2);
    for (let i = 0; i < l.length; i++) {
      expect(out[2 * i]).toBe(l[i]);
      expect(out[2 * i + 1]).toBe(r[i]);
    }
  });

  it("passes audio through unchanged when the rates are equal", () => {
    const x = speech(16000).subarray(0, 1600);
    const rs = make(16000, 16000);
    const y = rs.process(x);
    expect(y).toEqual(x);
    expect(y.buffer).not.toBe(x.buffer);
    expect(rs.flush().length).toBe(0);
  });
});

describe("createResampler: quality against sox rate -v on real speech", () => {
  it.each(PAIRS)("$from -> $to Hz keeps in-band SNR of at least 65 dB", ({ from, to }) => {
    const x = speech(from);
    const ours = whole(make(from, to), x);
    const ref = soxResample(x, from, to);
    expect(inBandSnrDb(ref, ours, to, (BAND * Math.min(from, to)) / 2)).toBeGreaterThanOrEqual(65);
  });

  it("the SNR measurement rejects a poor filter (quality 0)", () => {
    const x = speech(16000);
    const ours = whole(make(16000, 8000, { quality: 0 }), x);
    expect(inBandSnrDb(soxResample(x, 16000, 8000), ours, 8000, BAND * 4000)).toBeLessThan(65);
  });
});

describe("createResampler: aliases and images", () => {
  const down = PAIRS.filter((p) => p.to < p.from);
  const up = PAIRS.filter((p) => p.to > p.from);

  it.each(down)("$from -> $to Hz keeps tones beyond the new Nyquist at or below -80 dB", ({ from, to }) => {
    const rs = make(from, to);
    for (const k of [1.0, 1.02, 1.1, 1.5, 2, 3, 5]) {
      const hz = (k * to) / 2;
      if (hz > 0.97 * (from / 2)) continue;
      const tone = sine(from, hz, 0.5, 16000);
      const y = whole(rs, tone);
      expect(powerRatioDb(y.subarray(to / 20, y.length - to / 20), tone), `${hz} Hz`).toBeLessThanOrEqual(
        -80,
      );
    }
  });

  it.each(up)("$from -> $to Hz keeps images above the old Nyquist at or below -80 dB", ({ from, to }) => {
    const rs = make(from, to);
    for (const k of [0.3, 0.6, 0.85]) {
      const y = whole(rs, sine(from, (k * from) / 2, 0.5, 16000));
      expect(powerAboveDb(y.subarray(to / 20, y.length - to / 20), to, from / 2), `${k}`).toBeLessThanOrEqual(
        -80,
      );
    }
  });
});

describe("createResampler: bad input", () => {
  it.each([
    [{ from: Number.NaN, to: 16000 }, "unsupported_rate"],
    [{ from: 8000, to: 11025 }, "unsupported_rate"],
    [{ from: -8000, to: 16000 }, "unsupported_rate"],
    [{ from: 8000, to: 16000, channels: 3 }, "invalid_options"],
    [{ from: 8000, to: 16000, quality: 11 }, "invalid_options"],
    [{ from: 8000, to: 16000, quality: 2.5 }, "invalid_options"],
  ])("rejects %o with %s", (options, code) => {
    try {
      createResampler(options);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(CodecError);
      expect((err as CodecError).code).toBe(code);
    }
  });

  it("rejects a partial stereo frame and stays usable", () => {
    const rs = make(8000, 16000, { channels: 2 });
    expect(() => rs.process(new Int16Array(3))).toThrow(/whole number of 2-channel frames/);
    expect(rs.process(new Int16Array(320)).length).toBeGreaterThan(0);
  });

  it("returns nothing for empty input", () => {
    const rs = make(8000, 16000);
    expect(rs.process(new Int16Array(0)).length).toBe(0);
    expect(rs.flush().length).toBe(0);
  });

  it("close() is idempotent and later calls throw invalid_state", () => {
    const rs = createResampler({ from: 24000, to: 8000 });
    rs.close();
    rs.close();
    expect(() => rs.process(new Int16Array(480))).toThrow(expect.objectContaining({ code: "invalid_state" }));
    expect(() => rs.flush()).toThrow(expect.objectContaining({ code: "invalid_state" }));
  });
});
