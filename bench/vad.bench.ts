/**
 * The input chain's detectors and suppressor, measured side by side in one run
 * (docs/performance.md#voice-activity-and-noise-suppression):
 *
 * - cost: CPU per 20 ms frame of the gated WebRTC VAD (the default), the
 *   Silero VAD (onnxruntime-node, one thread) and libspeexdsp's noise
 *   suppressor, at 8 and 16 kHz, and Silero's ratio to the WebRTC VAD;
 * - recall: the share of speech frames (20 ms frames of the clean recording
 *   within 25 dB of its loud frames) during which each VAD says "speaking",
 *   on the 11 pocketsphinx-testdata recordings at 8 kHz (a phone line), clean
 *   and mixed with pink, street and babble noise at 20, 10, 5 and 0 dB SNR
 *   (2 s of the noise first), without noise suppression, with libspeexdsp's
 *   (talk.input.noiseSuppression) and with RNNoise (WebAssembly from npm,
 *   resampled to its 48 kHz: the peer, bench/lib/rnnoise-peer.ts);
 * - false starts: speech-starts per minute of noise alone (and the share of
 *   that time judged speech), at the levels those SNRs put the noise against
 *   the recordings' mean speech level, and over the 10-minute
 *   noise/hum/silence corpus streamed as one call;
 * - word errors of the local recognizer (pocketsphinx, a fresh decoder per
 *   recording, fast search) on
 *   the 8 recordings with reference transcripts (86 words), clean and noisy,
 *   with each suppressor (or none) in front of it.
 *
 * Both VADs run as the leg's speech gate does: telephony.vad defaults
 * (-45 dBFS, 120 ms of speech to start), 400 ms of silence to end. Noises are
 * generated from seeds (bench/lib/noise-synth.ts): the same figures on every
 * run but for the cost.
 *
 * Run: node --import tsx bench/vad.bench.ts [--part cost|vad|wer] [--noise-seconds 60] [--min-level=-45] [--mode 3]
 */
import { benchParseArgs } from "./lib/bench-cli.js";
import { performance } from "node:perf_hooks";
import { readFileSync } from "node:fs";
import { createVad, type Vad } from "../src/codecs/index.js";
import { createNoiseSuppressor } from "../src/codecs/noise-suppressor.js";
import { createSileroVad } from "../src/codecs/silero-vad.js";
import { loadSpeech, SPEECH_FILES } from "../src/codecs/testing/audio-tools.js";
import { concatPcm, noiseCorpus } from "../src/codecs/testing/vad-corpus.js";
import { PCM16_16K } from "../src/core/talk-types.js";
import {
  createPocketsphinxStt,
  type PocketsphinxSttProvider,
} from "../src/providers/pocketsphinx/pocketsphinx-stt.js";
import { levelDbfs, mixAtSnr, noiseOf, type NoiseKind } from "./lib/noise-synth.js";
import { createRnnoise } from "./lib/rnnoise-peer.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    part: { type: "string" },
    "noise-seconds": { type: "string", default: "60" },
    /** The gate's level bar, dBFS (telephony.vad.threshold). */
    "min-level": { type: "string", default: "-45" },
    /** The WebRTC VAD's aggressiveness, 0..3 (the codecs' default 3). */
    mode: { type: "string", default: "3" },
  },
});
const part = values.part;
const noiseSeconds = Number(values["noise-seconds"]);
const minLevelDbfs = Number(values["min-level"]);
if (!Number.isFinite(minLevelDbfs) || minLevelDbfs > 0 || minLevelDbfs < -90)
  throw new Error("--min-level must be a level -90..0 dBFS (--min-level=-45)");
const GATE = { onsetMs: 120, hangoverMs: 400, minLevelDbfs };
const mode = Number(values.mode);
const KINDS: NoiseKind[] = ["pink", "street", "babble"];
const SNRS = [20, 10, 5, 0];
const DETECTORS = {
  webrtc: (rate: number) => createVad({ sampleRate: rate, ...GATE, mode }),
  silero: (rate: number) => createSileroVad({ sampleRate: rate, ...GATE }),
} as const;
type Detector = keyof typeof DETECTORS;

function frames(pcm: Int16Array, rate: number): Int16Array[] {
  const n = rate / 50;
  const out: Int16Array[] = [];
  for (let o = 0; o + n <= pcm.length; o += n) out.push(pcm.subarray(o, o + n));
  return out;
}

/** No suppression, libspeexdsp's preprocessor (talk.input.noiseSuppression), RNNoise (the peer). */
const SUPPRESSORS = ["none", "speex", "rnnoise"] as const;
type Suppressor = (typeof SUPPRESSORS)[number];

function suppressed(pcm: Int16Array, rate: number, by: Suppressor): Int16Array {
  if (by === "none") return pcm;
  const ns = by === "speex" ? createNoiseSuppressor({ sampleRate: rate }) : createRnnoise(rate);
  const out = ns.process(pcm);
  ns.close();
  return out;
}

// --- cost -----------------------------------------------------------------------------------------

function usPerFrame(rate: number, make: () => { process(f: Int16Array): unknown; close(): void }): number {
  const speech = frames(loadSpeech("numbers.raw", rate), rate);
  let best = Number.POSITIVE_INFINITY;
  for (let rep = 0; rep < 5; rep++) {
    const it = make();
    const t0 = performance.now();
    for (const f of speech) it.process(f);
    const us = ((performance.now() - t0) * 1000) / speech.length;
    it.close();
    best = Math.min(best, us);
  }
  return best;
}

function cost(): void {
  for (const rate of [8000, 16000]) {
    const webrtc = usPerFrame(rate, () => DETECTORS.webrtc(rate));
    const silero = usPerFrame(rate, () => DETECTORS.silero(rate));
    const ns = usPerFrame(rate, () => createNoiseSuppressor({ sampleRate: rate }));
    const rnnoise = usPerFrame(rate, () => createRnnoise(rate));
    console.log(
      JSON.stringify({
        figure: "cost per 20 ms frame, µs (best of 5 over numbers.raw)",
        rate,
        webrtcVad: Number(webrtc.toFixed(1)),
        sileroVad: Number(silero.toFixed(1)),
        sileroOverWebrtc: Number((silero / webrtc).toFixed(1)),
        speexSuppressor: Number(ns.toFixed(1)),
        rnnoiseWithResampling: Number(rnnoise.toFixed(1)),
        sileroRealTime: Math.round(20_000 / silero),
      }),
    );
  }
}

// --- recall and false starts -----------------------------------------------------------------------

/** 20 ms frames of the clean recording that are speech: within 25 dB of its 95th-percentile frame level. */
function speechFrames(clean: Int16Array, rate: number): boolean[] {
  const levels = frames(clean, rate).map((f) => levelDbfs(f));
  const p95 = [...levels].sort((a, b) => a - b)[Math.floor(levels.length * 0.95)]!;
  return levels.map((l) => l >= p95 - 25);
}

function speakingPerFrame(vad: Vad, pcm: Int16Array, rate: number): { speaking: boolean[]; starts: number } {
  const speaking: boolean[] = [];
  let starts = 0;
  for (const f of frames(pcm, rate)) {
    if (vad.process(f) === "speech-start") starts++;
    speaking.push(vad.speaking);
  }
  vad.close();
  return { speaking, starts };
}

function vadFigures(): void {
  const rate = 8000;
  const recordings = SPEECH_FILES.map((name) => loadSpeech(name, rate));
  const speechLevel =
    10 * Math.log10(recordings.reduce((s, r) => s + 10 ** (levelDbfs(r) / 10), 0) / recordings.length);
  const lead = 2 * rate;
  const noises = new Map(KINDS.map((k) => [k, noiseOf(k, rate, Math.max(noiseSeconds, 30), -30)]));

  const recall = (kind: NoiseKind | "clean", snr: number, denoise: Suppressor) => {
    const hits: Record<Detector, number> = { webrtc: 0, silero: 0 };
    let total = 0;
    for (const clean of recordings) {
      const padded = concatPcm([new Int16Array(lead), clean]);
      const noisy =
        kind === "clean"
          ? padded
          : mixAtSnr(padded, noises.get(kind)!, snr + levelDbfs(padded) - levelDbfs(clean));
      const input = suppressed(noisy, rate, denoise);
      const truth = speechFrames(padded, rate);
      for (const name of Object.keys(DETECTORS) as Detector[]) {
        const { speaking } = speakingPerFrame(DETECTORS[name](rate), input, rate);
        speaking.forEach((s, i) => {
          if (s && truth[i]) hits[name]++;
        });
      }
      total += truth.filter(Boolean).length;
    }
    return { webrtc: hits.webrtc / total, silero: hits.silero / total };
  };

  console.log(`# speech level of the recordings: ${speechLevel.toFixed(1)} dBFS (mean power), 8 kHz`);
  for (const denoise of SUPPRESSORS) {
    const clean = recall("clean", 0, denoise);
    console.log(
      JSON.stringify({
        figure: "speech-frame recall",
        noise: "none",
        denoise,
        webrtc: Number(clean.webrtc.toFixed(3)),
        silero: Number(clean.silero.toFixed(3)),
      }),
    );
    for (const kind of KINDS)
      for (const snr of SNRS) {
        const r = recall(kind, snr, denoise);
        console.log(
          JSON.stringify({
            figure: "speech-frame recall",
            noise: kind,
            snrDb: snr,
            denoise,
            webrtc: Number(r.webrtc.toFixed(3)),
            silero: Number(r.silero.toFixed(3)),
          }),
        );
      }
  }

  for (const denoise of SUPPRESSORS) {
    for (const kind of KINDS)
      for (const snr of SNRS) {
        const level = speechLevel - snr;
        const noise = noiseOf(kind, rate, noiseSeconds, level);
        const input = suppressed(noise, rate, denoise);
        // Starts per minute, and the share of the time judged speech (a start that never ends counts once).
        const starts = Object.fromEntries(
          (Object.keys(DETECTORS) as Detector[]).flatMap((name) => {
            const { starts: n, speaking } = speakingPerFrame(DETECTORS[name](rate), input, rate);
            const share = speaking.filter(Boolean).length / speaking.length;
            return [
              [name, Number(((n * 60) / noiseSeconds).toFixed(1))],
              [`${name}SpeakingShare`, Number(share.toFixed(3))],
            ];
          }),
        );
        console.log(
          JSON.stringify({
            figure: "false starts per minute of noise alone",
            noise: kind,
            levelDbfs: Number(level.toFixed(1)),
            snrDb: snr,
            denoise,
            ...starts,
          }),
        );
      }
    const corpus = concatPcm(noiseCorpus(rate).map((c) => c.pcm));
    const input = suppressed(corpus, rate, denoise);
    const starts = Object.fromEntries(
      (Object.keys(DETECTORS) as Detector[]).map((name) => [
        name,
        speakingPerFrame(DETECTORS[name](rate), input, rate).starts,
      ]),
    );
    console.log(
      JSON.stringify({
        figure: "false starts over the 10-minute noise, hum and silence corpus",
        denoise,
        ...starts,
      }),
    );
  }
}

// --- word errors ------------------------------------------------------------------------------------

const DATA = "/usr/share/pocketsphinx/test/data";
const AUSTEN = `${DATA}/librivox/sense_and_sensibility_01_austen_64kb-`;
const REFERENCES: [string, string][] = [
  ["goforward.raw", "go forward ten meters"],
  ["something.raw", "go somewhere and do something"],
  ["tidigits/dhd.2934z.raw", "two nine three four zero"],
  [
    "librivox/sense_and_sensibility_01_austen_64kb-0870.wav",
    "and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them",
  ],
  ["librivox/sense_and_sensibility_01_austen_64kb-0880.wav", "he was not an ill disposed young man"],
  [
    `${AUSTEN.slice(DATA.length + 1)}0890.wav`,
    "unless to be rather cold hearted and rather selfish is to be ill disposed",
  ],
  [
    `${AUSTEN.slice(DATA.length + 1)}0920.wav`,
    "had he married a more a amiable woman he might have been made still more respectable than he was",
  ],
  [`${AUSTEN.slice(DATA.length + 1)}0930.wav`, "he might even have been made amiable himself"],
];

function wordErrors(ref: string[], hyp: string[]): number {
  let row = Array.from({ length: hyp.length + 1 }, (_, j) => j);
  for (let i = 1; i <= ref.length; i++) {
    const next = [i];
    for (let j = 1; j <= hyp.length; j++)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (ref[i - 1] === hyp[j - 1] ? 0 : 1));
    row = next;
  }
  return row[hyp.length]!;
}

async function transcribe(stt: PocketsphinxSttProvider, pcm: Int16Array): Promise<string> {
  const stream = stt.startStream({ format: PCM16_16K, signal: new AbortController().signal });
  for (let i = 0; i < pcm.length; i += 320) stream.write(pcm.subarray(i, i + 320));
  return (await stream.finish()).text;
}

async function werFigures(): Promise<void> {
  const rate = 16000;
  const recordings = REFERENCES.map(([name, ref]) => ({ pcm: loadSpeech(name, rate), ref: ref.split(" ") }));
  const words = recordings.reduce((s, r) => s + r.ref.length, 0);
  const noises = new Map(KINDS.map((k) => [k, noiseOf(k, rate, 30, -30)]));
  // A decoder per stream: a resident decoder carries its cepstral mean from one stream to the next, which
  // made the same condition's word errors move by 0.1 with the order the recordings were decoded in.
  const stt = createPocketsphinxStt({ decoder: "per-stream", search: "fast" });
  try {
    const conditions: [NoiseKind | "clean", number][] = [["clean", 0]];
    for (const kind of KINDS) for (const snr of [10, 5]) conditions.push([kind, snr]);
    for (const [kind, snr] of conditions) {
      const errors: Record<Suppressor, number> = { none: 0, speex: 0, rnnoise: 0 };
      for (const r of recordings) {
        const padded = concatPcm([new Int16Array(rate), r.pcm]);
        const noisy =
          kind === "clean"
            ? padded
            : mixAtSnr(padded, noises.get(kind)!, snr + levelDbfs(padded) - levelDbfs(r.pcm));
        for (const denoise of SUPPRESSORS) {
          const text = await transcribe(stt, suppressed(noisy, rate, denoise));
          errors[denoise] += wordErrors(r.ref, text.split(" ").filter(Boolean));
        }
      }
      console.log(
        JSON.stringify({
          figure: "pocketsphinx word error rate",
          noise: kind,
          ...(kind === "clean" ? {} : { snrDb: snr }),
          words,
          none: Number((errors.none / words).toFixed(3)),
          speex: Number((errors.speex / words).toFixed(3)),
          rnnoise: Number((errors.rnnoise / words).toFixed(3)),
        }),
      );
    }
  } finally {
    await stt.close();
  }
}

console.log(`# vad bench: load ${readFileSync("/proc/loadavg", "utf8").trim()}`);
if (part === undefined || part === "cost") cost();
if (part === undefined || part === "vad") vadFigures();
if (part === undefined || part === "wer") await werFigures();
console.log(`# load ${readFileSync("/proc/loadavg", "utf8").trim()}`);
