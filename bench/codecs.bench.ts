/**
 * Codec figures (docs/performance.md#codecs): every figure per 20 ms frame on
 * one core, as "x real time" (seconds of audio processed per second of one
 * core), ours beside a peer measured in the same child process, medians over
 * --processes fresh processes.
 *
 * Run: npm run bench:codecs [-- --processes 5 --ms 250]
 */
import { createRequire } from "node:module";
import { benchParseArgs } from "./lib/bench-cli.js";
import alawmulaw from "alawmulaw";
import lsr from "@alexanderolsen/libsamplerate-js";
import OpusScript from "opusscript";
import {
  createOpusDecoder,
  createOpusEncoder,
  createResampler,
  createVad,
  decodeAlaw,
  decodeMulaw,
  encodeAlaw,
  encodeMulaw,
  type Resampler,
} from "../src/codecs/index.js";
import { speexSimd } from "../src/codecs/speex-module.js";
import { loadSpeech, soxResample } from "../src/codecs/testing/audio-tools.js";
import { inBandSnrDb } from "../src/codecs/testing/spectrum.js";
import { medianOfChildren, rates, type Figures } from "./lib/child-medians.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    processes: { type: "string", default: "5" },
    ms: { type: "string", default: "250" },
    child: { type: "boolean", default: false },
  },
});
const MS = Number(values.ms);
const FRAMES_PER_SECOND = 50;

interface NativeOpus {
  encode(b: Buffer): Buffer;
  decode(b: Buffer): Buffer;
  applyEncoderCTL(c: number, v: number): void;
}
const { OpusEncoder: BareOpus } = createRequire(import.meta.url)("@discordjs/opus") as {
  OpusEncoder: new (rate: number, ch: number) => NativeOpus;
};

/**
 * Every step processes one second of audio as 50 frames of 20 ms, with a
 * plain loop, so calls per second read directly as "x real time" and the
 * harness costs nothing next to even the fastest codec.
 */
function second<T>(items: T[], offset = 0): T[] {
  return Array.from({ length: FRAMES_PER_SECOND }, (_, i) => items[(offset + i) % items.length]!);
}
function frames(x: Int16Array, n: number): Int16Array[] {
  const out: Int16Array[] = [];
  for (let o = 0; o + n <= x.length; o += n) out.push(x.slice(o, o + n));
  return out;
}
const xrt = (secondsPerSecond: number) => secondsPerSecond;

async function child(): Promise<Figures> {
  const f: Figures = {};
  const put = (prefix: string, r: Record<string, number>) => {
    for (const [k, v] of Object.entries(r)) f[`${prefix}.${k}`] = xrt(v);
  };
  const s8 = loadSpeech("numbers.raw", 8000);
  const s16 = loadSpeech("numbers.raw", 16000);
  const s24 = loadSpeech("numbers.raw", 24000);
  const s48 = loadSpeech("numbers.raw", 48000);

  // G.711, 160 samples per frame, reused output buffers for ours (the peer has no such API).
  const pcm8 = second(frames(s8, 160), 100);
  const ulaw = pcm8.map((p) => encodeMulaw(p));
  const alaw = pcm8.map((p) => encodeAlaw(p));
  const outPcm = new Int16Array(160);
  const outBytes = new Uint8Array(160);
  const each =
    <T>(items: T[], fn: (item: T) => unknown) =>
    () => {
      for (let i = 0; i < items.length; i++) fn(items[i]!);
    };
  put(
    "ulaw.decode",
    rates(
      { ours: each(ulaw, (u) => decodeMulaw(u, outPcm)), peer: each(ulaw, (u) => alawmulaw.mulaw.decode(u)) },
      MS,
    ),
  );
  put(
    "ulaw.encode",
    rates(
      {
        ours: each(pcm8, (p) => encodeMulaw(p, outBytes)),
        peer: each(pcm8, (p) => alawmulaw.mulaw.encode(p)),
      },
      MS,
    ),
  );
  put(
    "alaw.decode",
    rates(
      { ours: each(alaw, (u) => decodeAlaw(u, outPcm)), peer: each(alaw, (u) => alawmulaw.alaw.decode(u)) },
      MS,
    ),
  );
  put(
    "alaw.encode",
    rates(
      { ours: each(pcm8, (p) => encodeAlaw(p, outBytes)), peer: each(pcm8, (p) => alawmulaw.alaw.encode(p)) },
      MS,
    ),
  );

  // Resampling in 20 ms frames; the peer gets float input prepared outside the timing.
  const inputs: Record<number, Int16Array> = { 8000: s8, 24000: s24, 48000: s48 };
  for (const [from, to] of [
    [8000, 16000],
    [48000, 16000],
    [24000, 8000],
  ] as const) {
    const rs = createResampler({ from, to });
    const fr = second(frames(inputs[from]!, from / 50), 100);
    const src = await lsr.create(1, from, to, { converterType: lsr.ConverterType.SRC_SINC_MEDIUM_QUALITY });
    const ff = fr.map((p) => Float32Array.from(p, (v) => v / 32768));
    put(
      `resample.${from}-${to}`,
      rates({ ours: each(fr, (p) => rs.process(p)), peer: each(ff, (p) => src.full(p)) }, MS),
    );
    rs.close();
    src.destroy();
  }

  // Opus decode 48 kHz packets straight to 16 kHz.
  const enc48 = createOpusEncoder({ sampleRate: 48000 });
  const pkt = second(
    frames(s48, 960).map((p) => Buffer.from(enc48.encode(p))),
    100,
  );
  const ours = createOpusDecoder({ sampleRate: 16000 });
  const bare = new BareOpus(16000, 1);
  const script = new OpusScript(16000, 1, OpusScript.Application.VOIP);
  put(
    "opus.decode",
    rates(
      {
        ours: each(pkt, (p) => ours.decode(p)),
        bare: each(pkt, (p) => bare.decode(p)),
        opusscript: each(pkt, (p) => script.decode(p)),
      },
      MS * 2,
    ),
  );
  script.delete();

  // Opus encode 48 kHz, 32 kb/s, voip, at complexity 5 and 10; every encoder gets the same settings.
  const pcm48 = second(frames(s48, 960), 100);
  for (const complexity of [5, 10]) {
    const e = createOpusEncoder({ sampleRate: 48000, complexity });
    const b = new BareOpus(48000, 1);
    b.applyEncoderCTL(4000, 2048);
    b.applyEncoderCTL(4002, 32000);
    b.applyEncoderCTL(4010, complexity);
    b.applyEncoderCTL(4024, 3001);
    const o = new OpusScript(48000, 1, OpusScript.Application.VOIP);
    o.encoderCTL(4002, 32000);
    o.encoderCTL(4010, complexity);
    o.encoderCTL(4024, 3001);
    put(
      `opus.encode.c${complexity}`,
      rates(
        {
          ours: each(pcm48, (p) => e.encode(p)),
          bare: each(pcm48, (p) => b.encode(Buffer.from(p.buffer, p.byteOffset, p.byteLength))),
          opusscript: each(pcm48, (p) => o.encode(Buffer.from(p.buffer, p.byteOffset, p.byteLength), 960)),
        },
        MS * 4,
      ),
    );
    o.delete();
  }

  // VAD on 20 ms frames.
  const vad8 = createVad({ sampleRate: 8000 });
  const vad16 = createVad({ sampleRate: 16000 });
  const f8 = second(frames(s8, 160), 100);
  const f16 = second(frames(s16, 320), 100);
  put(
    "vad",
    rates({ "8000": each(f8, (p) => vad8.process(p)), "16000": each(f16, (p) => vad16.process(p)) }, MS),
  );

  // One Twilio call, both directions, per 20 ms: u-law in -> 16 kHz for STT; 24 kHz TTS -> u-law out.
  const up = createResampler({ from: 8000, to: 16000 });
  const down = createResampler({ from: 24000, to: 8000 });
  const tts = second(frames(s24, 480), 100);
  const inBuf = new Int16Array(160);
  const outU = new Uint8Array(160);
  put(
    "call",
    rates(
      {
        budget: () => {
          for (let i = 0; i < FRAMES_PER_SECOND; i++) {
            up.process(decodeMulaw(ulaw[i]!, inBuf));
            encodeMulaw(down.process(tts[i]!), outU);
          }
        },
        "budget+vad": () => {
          for (let i = 0; i < FRAMES_PER_SECOND; i++) {
            vad16.process(up.process(decodeMulaw(ulaw[i]!, inBuf)));
            encodeMulaw(down.process(tts[i]!), outU);
          }
        },
      },
      MS,
    ),
  );
  for (const [k, v] of Object.entries(f)) {
    const m = /^(.*)\.ours$/.exec(k);
    if (!m) continue;
    for (const peer of ["peer", "bare", "opusscript"])
      if (f[`${m[1]}.${peer}`]) f[`${m[1]}.ratio.${peer}`] = v / f[`${m[1]}.${peer}`]!;
  }
  return f;
}

/** In-band SNR (0..85% of the lower Nyquist) against sox rate -v, ours and libsamplerate SINC_MEDIUM, streamed in 20 ms frames. */
async function quality(): Promise<Figures> {
  const q: Figures = {};
  for (const [from, to] of [
    [8000, 16000],
    [48000, 16000],
    [24000, 8000],
  ] as const) {
    const x = loadSpeech("numbers.raw", from);
    const ref = soxResample(x, from, to);
    const band = (0.85 * Math.min(from, to)) / 2;
    const rs: Resampler = createResampler({ from, to });
    const parts: Int16Array[] = [];
    for (const fr of frames(x, from / 50)) parts.push(rs.process(fr));
    parts.push(rs.flush());
    q[`resample.${from}-${to}.ours.snr`] = inBandSnrDb(ref, concat(parts), to, band);
    const src = await lsr.create(1, from, to, { converterType: lsr.ConverterType.SRC_SINC_MEDIUM_QUALITY });
    const peer: Int16Array[] = [];
    for (const fr of frames(x, from / 50)) {
      const y = src.full(Float32Array.from(fr, (v) => v / 32768));
      peer.push(Int16Array.from(y, (v) => Math.max(-32768, Math.min(32767, Math.round(v * 32768)))));
    }
    src.destroy();
    // libsamplerate's streaming output lags by its filter delay: align at the best lag before comparing.
    const p = concat(peer);
    let best = Number.NEGATIVE_INFINITY;
    for (let lag = 0; lag < 256; lag++)
      best = Math.max(best, inBandSnrDb(ref.subarray(0, p.length - lag), p.subarray(lag), to, band));
    q[`resample.${from}-${to}.peer.snr`] = best;
  }
  return q;
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

if (values.child) {
  process.stdout.write(`${JSON.stringify(await child())}\n`);
} else {
  const processes = Number(values.processes);
  const started = performance.now();
  const m = medianOfChildren(
    new URL(import.meta.url).pathname,
    ["--child", "--ms", String(MS)],
    processes,
    (i) => process.stderr.write(`child ${i + 1}/${processes}\n`),
  );
  const q = await quality();
  const fmt = (v: number) => (v >= 100 ? Math.round(v).toLocaleString("en-US") : v.toFixed(1));
  const rows: string[][] = [];
  const row = (
    what: string,
    key: string,
    peer: string,
    peerName: string,
    goal: (ratio: number) => boolean,
    goalText: string,
  ) => {
    const ratio = m[`${key}.ratio.${peer}`]!;
    rows.push([
      what,
      `${fmt(m[`${key}.ours`]!)}x`,
      peerName,
      `${fmt(m[`${key}.${peer}`]!)}x`,
      ratio.toFixed(2),
      goalText,
      goal(ratio) ? "yes" : "NO",
    ]);
  };
  for (const law of ["ulaw", "alaw"]) {
    for (const op of ["decode", "encode"])
      row(
        `${law === "ulaw" ? "u-law" : "A-law"} ${op}`,
        `${law}.${op}`,
        "peer",
        "alawmulaw",
        (r) => r >= 8,
        ">= 8",
      );
  }
  for (const pair of ["8000-16000", "48000-16000", "24000-8000"]) {
    const so = q[`resample.${pair}.ours.snr`]!;
    const sp = q[`resample.${pair}.peer.snr`]!;
    const label = `resample ${pair.replace("-", " -> ")} (SNR ${so.toFixed(1)} vs ${sp.toFixed(1)} dB)`;
    row(
      label,
      `resample.${pair}`,
      "peer",
      "libsamplerate MEDIUM",
      (r) => r >= 10 && so >= sp - 0.5,
      ">= 10, SNR >= peer - 0.5",
    );
  }
  row(
    "opus decode 48k packets -> 16k",
    "opus.decode",
    "bare",
    "@discordjs/opus bare",
    (r) => r >= 0.9,
    ">= 0.9",
  );
  row("opus decode 48k packets -> 16k", "opus.decode", "opusscript", "opusscript", (r) => r > 1, "> 1");
  for (const c of [5, 10]) {
    row(
      `opus encode 48k c${c}`,
      `opus.encode.c${c}`,
      "bare",
      "@discordjs/opus bare",
      (r) => r >= 0.9,
      ">= 0.9",
    );
    row(`opus encode 48k c${c}`, `opus.encode.c${c}`, "opusscript", "opusscript", (r) => r > 1, "> 1");
  }
  const widths = rows[0]!.map((_, i) =>
    Math.max(
      ...rows.map((r) => r[i]!.length),
      ["figure", "ours", "peer", "peer x", "ratio", "goal", "met"][i]!.length,
    ),
  );
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  console.log(
    `codecs bench: medians of ${processes} processes, ${MS} ms per figure, node ${process.version}, speex wasm ${speexSimd ? "SIMD" : "scalar"}`,
  );
  console.log(line(["figure", "ours", "peer", "peer x", "ratio", "goal", "met"]));
  console.log(line(widths.map((w) => "-".repeat(w))));
  for (const r of rows) console.log(line(r));
  console.log("");
  for (const r of [8000, 16000])
    console.log(`VAD at ${r / 1000} kHz, 20 ms frames: ${fmt(m[`vad.${r}`]!)}x real time`);
  for (const key of ["call.budget", "call.budget+vad"]) {
    const x = m[key]!;
    console.log(
      `Twilio call${key.endsWith("vad") ? " + 16 kHz VAD" : ""} (u-law decode, 8 -> 16, 24 -> 8, u-law encode): ${(1 / x).toExponential(2)} core-s per call-s = ${fmt(x)} calls per core (goal > 1,000: ${x > 1000 ? "yes" : "NO"})`,
    );
  }
  console.log(`(${((performance.now() - started) / 1000).toFixed(0)} s)`);
}
