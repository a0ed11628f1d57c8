/**
 * The double-talk measure's cost (src/codecs/echo-coherence.ts): CPU time per 20 ms frame of a phone leg's
 * EchoCoherence (8 kHz, the 21 lags a 300 ms tail gives) over real speech, the reference against its echo with a
 * caller over it, reading the explained fraction around the echo's delay every frame, as the guard does at most
 * (the fraction beyond chance it reads only where the strict bounds hold a frame). With --baseline, another
 * checkout's class on the same frames in the same process, the two taking turns (A B B A) round after round, so a
 * shared machine's load falls on both; the figure is each one's median round and the ratio.
 *
 *   node --import tsx bench/echo-coherence.bench.ts [--seconds 20] [--rounds 9] [--baseline <commit or checkout dir>]
 */
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { benchParseArgs } from "./lib/bench-cli.js";
import { baselineCheckout } from "./lib/baseline-checkout.js";
import { loadSpeech } from "../src/codecs/testing/audio-tools.js";
import { phoneLine } from "../src/codecs/testing/phone-line.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    seconds: { type: "string", default: "20" },
    rounds: { type: "string", default: "9" },
    baseline: { type: "string" },
  },
  strict: true,
});
const positive = (v: string | undefined, name: string): number => {
  const n = Number(v);
  if (Number.isFinite(n) && n > 0) return n;
  console.error(`echo-coherence.bench.ts: --${name} must be a positive number, got ${v}`);
  process.exit(2);
};
const seconds = positive(values.seconds, "seconds");
const rounds = Math.round(positive(values.rounds, "rounds"));

const RATE = 8000;
const FRAME = 160;
/** The canceller's lags for the default 300 ms tail (echo-canceller.ts: the tail in frames, plus five). */
const MAX_LAG_FRAMES = 20;

interface Coherence {
  frame(reference: Int16Array, output: Int16Array): void;
  explainedWithin(from: number, to: number): number;
}
type CoherenceClass = new (options: { sampleRate: number; maxLagFrames: number }) => Coherence;

async function coherenceOf(root: string): Promise<CoherenceClass> {
  const url = pathToFileURL(join(root, "src", "codecs", "echo-coherence.ts")).href;
  return ((await import(url)) as { EchoCoherence: CoherenceClass }).EchoCoherence;
}

// The reference looped to the length asked, its echo (120 ms, 10 dB down, a line's response, u-law) with a caller
// over it from the middle on: what a canceller's output holds during double talk, at the measure's full cost.
const recording = loadSpeech("librivox/sense_and_sensibility_01_austen_64kb-0870.wav", RATE);
const length = Math.floor((RATE * seconds) / FRAME) * FRAME;
const reference = new Int16Array(length);
for (let i = 0; i < length; i++) reference[i] = recording[i % recording.length]!;
const caller = loadSpeech("goforward.raw", RATE);
const output = phoneLine(reference, 120, 10, { pcm: caller, at: Math.floor(length / 2) });

/** CPU time per frame, microseconds, for one pass of `Coherence` over the frames. */
function pass(Coherence: CoherenceClass): number {
  const coherence = new Coherence({ sampleRate: RATE, maxLagFrames: MAX_LAG_FRAMES });
  let sink = 0;
  const started = process.cpuUsage();
  for (let at = 0; at + FRAME <= length; at += FRAME) {
    coherence.frame(reference.subarray(at, at + FRAME), output.subarray(at, at + FRAME));
    sink += coherence.explainedWithin(4, 8);
  }
  const used = process.cpuUsage(started);
  if (!Number.isFinite(sink)) throw new Error("the measure read a non-finite value");
  return (used.user + used.system) / (length / FRAME);
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

const chains: { name: string; Coherence: CoherenceClass; times: number[] }[] = [
  { name: "this checkout", Coherence: await coherenceOf(resolve(import.meta.dirname, "..")), times: [] },
];
if (values.baseline) {
  const base = baselineCheckout(values.baseline);
  chains.push({ name: `baseline (${base.describe})`, Coherence: await coherenceOf(base.dir), times: [] });
}
// One pass each to warm the JIT, then the rounds, the order turned every other round.
for (const chain of chains) pass(chain.Coherence);
for (let round = 0; round < rounds; round++)
  for (const chain of round % 2 === 0 ? chains : [...chains].reverse())
    chain.times.push(pass(chain.Coherence));

console.log(
  `echo coherence: ${seconds} s of speech, 8 kHz, ${MAX_LAG_FRAMES + 1} lags, the explained fraction read every frame; ` +
    `${rounds} rounds`,
);
for (const chain of chains)
  console.log(
    `${chain.name}: CPU per 20 ms frame, median ${median(chain.times).toFixed(2)} us ` +
      `(rounds ${Math.min(...chain.times).toFixed(2)}-${Math.max(...chain.times).toFixed(2)})`,
  );
if (chains.length === 2)
  console.log(`ratio this / baseline: ${(median(chains[0]!.times) / median(chains[1]!.times)).toFixed(3)}`);
