/**
 * The talk page's input format choice (docs/web-page.md): resample the
 * microphone in the page to the provider's rate (what the page does), or
 * declare the browser's rate and let the server resample once. Prints, for
 * 48 kHz and 44.1 kHz microphones to 16 kHz (local STT) and 24 kHz (realtime):
 *
 * - page CPU: the page's worklet resampler (web/resampler.js, the same file
 *   the browser runs) in ms of one core per second of audio;
 * - server CPU: the server's resampler (SpeexDSP, src/codecs) for the same
 *   conversion, per second of audio and per session;
 * - quality: in-band SNR of each against sox `rate -v` on real speech;
 * - wire: bytes per second on the Talk API socket (JSON + base64) for each choice.
 *
 * Run: npm run bench:web-page [-- --seconds 20]
 */
import { benchParseArgs } from "./lib/bench-cli.js";
import { createResampler } from "../src/codecs/index.js";
import { loadSpeech, soxResample } from "../src/codecs/testing/audio-tools.js";
import { inBandSnrDb } from "../src/codecs/testing/spectrum.js";

interface PageResampler {
  process(input: Float32Array): Float32Array;
}
interface PageResamplerModule {
  Resampler: new (inRate: number, outRate: number) => PageResampler;
  floatToPcm16(samples: Float32Array): Int16Array;
}

const { values } = benchParseArgs(import.meta.url, {
  options: { seconds: { type: "string", default: "10" } },
});
const seconds = Number(values.seconds);
// Loaded by URL: a browser module without TypeScript declarations.
const page = (await import(new URL("../web/resampler.js", import.meta.url).href)) as PageResamplerModule;

/** Worklet render quanta: 128 frames. */
const QUANTUM = 128;
/** What one 40 ms appendAudio request costs on the wire besides its audio (JSON envelope). */
const ENVELOPE_BYTES = 120;

function pageResample(x: Float32Array, from: number, to: number): { out: Int16Array; ms: number } {
  const rs = new page.Resampler(from, to);
  const parts: Int16Array[] = [];
  const started = performance.now();
  for (let i = 0; i + QUANTUM <= x.length; i += QUANTUM)
    parts.push(page.floatToPcm16(rs.process(x.subarray(i, i + QUANTUM))));
  return { out: concat(parts), ms: performance.now() - started };
}

function serverResample(x: Int16Array, from: number, to: number): { out: Int16Array; ms: number } {
  const rs = createResampler({ from, to });
  const parts: Int16Array[] = [];
  const frame = from / 50;
  const started = performance.now();
  for (let i = 0; i + frame <= x.length; i += frame) parts.push(rs.process(x.subarray(i, i + frame)));
  parts.push(rs.flush());
  return { out: concat(parts), ms: performance.now() - started };
}

/** Best in-band SNR over small lags (the two filters have different delays). */
function snr(ref: Int16Array, y: Int16Array, rate: number, band: number): number {
  let best = Number.NEGATIVE_INFINITY;
  for (let lag = 0; lag < 80; lag++) {
    const n = Math.min(ref.length, y.length - lag);
    best = Math.max(best, inBandSnrDb(ref.subarray(0, n), y.subarray(lag, lag + n), rate, band));
  }
  return best;
}

function wireBytesPerSecond(rate: number): number {
  const audio = rate * 2;
  return Math.round((audio * 4) / 3 + ENVELOPE_BYTES * 25);
}

const rows: Record<string, string | number>[] = [];
for (const from of [48_000, 44_100]) {
  const speech = loadSpeech("numbers.raw", from);
  // Repeat the recording up to --seconds so the timings are not dominated by warm-up.
  const loops = Math.max(1, Math.ceil((seconds * from) / speech.length));
  const x16 = new Int16Array(speech.length * loops);
  for (let i = 0; i < loops; i++) x16.set(speech, i * speech.length);
  const xf = Float32Array.from(x16, (v) => v / 32768);
  const audioSeconds = x16.length / from;
  for (const to of [16_000, 24_000]) {
    const ref = soxResample(speech, from, to);
    const band = (0.85 * to) / 2;
    pageResample(xf, from, to); // warm-up
    const p = pageResample(xf, from, to);
    serverResample(x16, from, to);
    const s = serverResample(x16, from, to);
    rows.push({
      conversion: `${from} -> ${to}`,
      "page ms/s": +(p.ms / audioSeconds).toFixed(2),
      "server ms/s": +(s.ms / audioSeconds).toFixed(2),
      "page SNR dB": +snr(ref, p.out.subarray(0, ref.length + 80), to, band).toFixed(1),
      "server SNR dB": +snr(ref, s.out.subarray(0, ref.length + 80), to, band).toFixed(1),
      [`wire B/s at ${to / 1000}k`]: wireBytesPerSecond(to),
      [`wire B/s at ${from / 1000}k`]: wireBytesPerSecond(from),
    });
  }
}
console.table(rows);

function concat(parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
