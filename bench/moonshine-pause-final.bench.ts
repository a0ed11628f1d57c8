/**
 * Moonshine's final text of a turn, two ways, on the same audio: the words decoded at the caller's pause
 * (SttStream.pause, 200 ms after the speech, final since the leg's gate heard no voice after it) beside a
 * decode at the turn's end of the speech with the line's noise after it (the fixed endpoint's 800 ms more,
 * as before the pause signals). Every pocketsphinx-testdata recording with a transcript
 * (bench/lib/stt-references.ts recordingTranscripts), over a u-law phone line, in pink noise at each SNR;
 * prints word errors and decodes per way.
 *
 *   node --import tsx bench/moonshine-pause-final.bench.ts [--snrs 40,30,20] [--seed 1]
 */
import { benchParseArgs } from "./lib/bench-cli.js";
import { decodeMulaw, encodeMulaw } from "../src/codecs/mulaw.js";
import { createResampler } from "../src/codecs/resampler.js";
import { PCM16_16K } from "../src/core/talk-types.js";
import { createMoonshineStt } from "../src/providers/moonshine/moonshine-stt.js";
import { activeLevelDb, pinkNoise, recording, RECORDINGS, rng, trim } from "./lib/corpus-audio.js";
import { recordingTranscripts, transcriptWords, wordErrors } from "./lib/stt-references.js";

const { values } = benchParseArgs(import.meta.url, {
  options: { snrs: { type: "string", default: "40,30,20" }, seed: { type: "string", default: "1" } },
});
const snrs = values.snrs.split(",").map(Number);
if (snrs.some((s) => !Number.isFinite(s))) throw new Error("--snrs: numbers, dB");
const transcripts = recordingTranscripts();

/** 8 kHz float samples -> u-law -> 16 kHz PCM16, as a call's audio reaches the recognizer. */
function overLine(pcm: Float64Array): Int16Array {
  const i16 = Int16Array.from(pcm, (s) => Math.max(-32768, Math.min(32767, Math.round(s))));
  const up = createResampler({ from: 8000, to: 16_000 });
  return up.process(decodeMulaw(encodeMulaw(i16)));
}

const stt = createMoonshineStt({ partialIntervalMs: 500 });
const ways = {
  pause: { errors: 0, words: 0, decodes: 0 },
  end: { errors: 0, words: 0, decodes: 0 },
};
let same = 0;
let calls = 0;

async function decode(audio: Int16Array, way: "pause" | "end", speechEnd: number): Promise<string> {
  const before = stt.stats?.decodes ?? 0;
  const partials: string[] = [];
  const stream = stt.startStream({
    format: PCM16_16K,
    signal: new AbortController().signal,
    onPartial: (t) => partials.push(t),
  });
  const write = async (from: number, to: number): Promise<void> => {
    for (let i = from; i < to; i += 320) {
      stream.write(audio.subarray(i, Math.min(to, i + 320)));
      await new Promise((r) => setImmediate(r));
    }
  };
  const pauseAt = speechEnd + 3200; // 200 ms after the speech
  await write(0, pauseAt);
  if (way === "pause") {
    stream.pause?.();
    // The leg's endpoint comes 600 ms later: the decode asked at the pause is done by then.
    await new Promise((r) => setTimeout(r, 600));
  }
  await write(pauseAt, audio.length);
  const { text } = await stream.finish();
  ways[way].decodes += (stt.stats?.decodes ?? 0) - before;
  return text;
}

for (const path of RECORDINGS) {
  const name = path
    .split("/")
    .pop()!
    .replace(/\.(raw|wav)$/, "");
  const reference = transcripts.get(name);
  if (!reference) continue;
  const speech = trim(recording(path));
  const level = activeLevelDb(speech);
  for (const snr of snrs) {
    const r = rng("pause-final", values.seed, name, snr);
    // 300 ms of line before the speech and 1 s after it (200 ms to the pause, 800 more to the endpoint).
    const lead = 2400;
    const pcm = pinkNoise(r, lead + speech.length + 8000, level - snr);
    for (let i = 0; i < speech.length; i++) pcm[lead + i]! += speech[i]!;
    const audio = overLine(pcm);
    const speechEnd = (lead + speech.length) * 2;
    const ref = transcriptWords(reference);
    const atPause = await decode(audio, "pause", speechEnd);
    const atEnd = await decode(audio, "end", speechEnd);
    ways.pause.errors += wordErrors(ref, transcriptWords(atPause));
    ways.end.errors += wordErrors(ref, transcriptWords(atEnd));
    ways.pause.words += ref.length;
    ways.end.words += ref.length;
    if (atPause === atEnd) same++;
    calls++;
  }
}
await stt.close();
const pct = (w: { errors: number; words: number }): string => ((100 * w.errors) / w.words).toFixed(1);
console.log(
  `${calls} turns (${calls / snrs.length} recordings x SNR ${snrs.join(", ")} dB, pink noise, u-law): the same text ${same}`,
);
console.log(
  `| final text | word errors | decodes |\n|---|---|---|\n| the words at the pause (now) | ${ways.pause.errors} of ${ways.pause.words} (${pct(ways.pause)}%) | ${ways.pause.decodes} |\n| decoded at the turn's end (before) | ${ways.end.errors} of ${ways.end.words} (${pct(ways.end)}%) | ${ways.end.decodes} |`,
);
