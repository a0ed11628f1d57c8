/**
 * The two local recognizers side by side on the Debian pocketsphinx-testdata
 * recordings that come with a reference transcript (5 LibriVox sentences, "go
 * forward ten meters", "go somewhere and do something", a TIDIGITS number
 * string: 85 words, 37.6 s): word errors wideband and through a u-law phone
 * line (16 kHz -> 8 kHz u-law -> 16 kHz, as a call reaches the recognizer),
 * and CPU per second of audio (this process and its live children, from
 * /proc: pocketsphinx's resident decoders are processes, Moonshine's model a
 * thread), with the model load measured apart (one short stream first).
 *
 *   node --import tsx bench/local-stt.bench.ts [--reps 3] [--stt pocketsphinx,moonshine]
 *
 * Word errors: Levenshtein over lowercase words; "Mr." is read "mister" and
 * hyphens split words, for both alike.
 */
import { benchParseArgs } from "./lib/bench-cli.js";
import { decodeMulaw, encodeMulaw } from "../src/codecs/mulaw.js";
import { createResampler } from "../src/codecs/resampler.js";
import type { SttProvider } from "../src/core/provider-types.js";
import { PCM16_16K } from "../src/core/talk-types.js";
import { createMoonshineStt } from "../src/providers/moonshine/moonshine-stt.js";
import { createPocketsphinxStt } from "../src/providers/pocketsphinx/pocketsphinx-stt.js";
import { readProcessTreeCpu } from "./lib/process-cpu.js";
import { referencePcm, STT_REFERENCES, wordErrors } from "./lib/stt-references.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    reps: { type: "string", default: "3" },
    stt: { type: "string", default: "pocketsphinx,moonshine" },
  },
  strict: true,
});
const reps = Number(values.reps);
if (!Number.isInteger(reps) || reps < 1) throw new Error("--reps must be a positive integer");

const RECOGNIZERS: Record<string, () => SttProvider> = {
  pocketsphinx: () => createPocketsphinxStt({ maxIdleDecoders: 1 }),
  moonshine: () => createMoonshineStt({ partialIntervalMs: 0 }),
};

function overPhoneLine(pcm: Int16Array): Int16Array {
  const down = createResampler({ from: 16_000, to: 8000 });
  const up = createResampler({ from: 8000, to: 16_000 });
  return up.process(decodeMulaw(encodeMulaw(down.process(pcm))));
}

const words = (text: string): string[] =>
  text
    .toLowerCase()
    .replace(/\bmr\./g, "mister")
    .match(/[a-z0-9']+/g) ?? [];

async function transcribe(stt: SttProvider, pcm: Int16Array): Promise<string> {
  const stream = stt.startStream({ format: PCM16_16K, signal: new AbortController().signal });
  for (let i = 0; i < pcm.length; i += 320) stream.write(pcm.subarray(i, i + 320));
  return (await stream.finish()).text;
}

const cpuNow = (): number => {
  const c = readProcessTreeCpu(process.pid);
  return c ? c.user + c.system : Number.NaN;
};

const inputs = {
  wideband: STT_REFERENCES.map(([path, ref]) => ({ pcm: referencePcm(path), ref: ref.split(" ") })),
  "phone line": STT_REFERENCES.map(([path, ref]) => ({
    pcm: overPhoneLine(referencePcm(path)),
    ref: ref.split(" "),
  })),
};
const audioSeconds = inputs.wideband.reduce((s, x) => s + x.pcm.length / 16_000, 0);
const refWords = inputs.wideband.reduce((s, x) => s + x.ref.length, 0);

console.log(`| recognizer | audio | word errors | WER | load CPU, s | CPU per s of audio, ms | real time |`);
console.log(`|---|---|---|---|---|---|---|`);
const rows: Record<string, unknown>[] = [];
for (const id of values.stt.split(",")) {
  const make = RECOGNIZERS[id];
  if (!make) throw new Error(`--stt: unknown recognizer "${id}" (${Object.keys(RECOGNIZERS).join(", ")})`);
  const stt = make();
  const c0 = cpuNow();
  await transcribe(stt, inputs.wideband[0]!.pcm.subarray(0, 16_000)); // loads the model
  const loadCpu = cpuNow() - c0;
  for (const [name, set] of Object.entries(inputs)) {
    let errors = 0;
    const c1 = cpuNow();
    const t1 = performance.now();
    for (let r = 0; r < reps; r++)
      for (const { pcm, ref } of set) {
        const text = await transcribe(stt, pcm);
        if (r === 0) errors += wordErrors(ref, words(text));
      }
    const cpu = (cpuNow() - c1) / reps;
    const wall = (performance.now() - t1) / 1000 / reps;
    const row = {
      recognizer: id,
      audio: name,
      wordErrors: errors,
      wer: errors / refWords,
      loadCpuS: loadCpu,
      cpuMsPerAudioS: (cpu * 1000) / audioSeconds,
      realTimeFactor: wall / audioSeconds,
    };
    rows.push(row);
    console.log(
      `| ${id} | ${name} | ${errors} / ${refWords} | ${(row.wer * 100).toFixed(1)}% | ${loadCpu.toFixed(2)} | ${row.cpuMsPerAudioS.toFixed(1)} | ${row.realTimeFactor.toFixed(3)} |`,
    );
  }
  await stt.close?.();
}
console.log(`(${audioSeconds.toFixed(1)} s of audio, ${refWords} words, ${reps} reps for the CPU)`);
console.log(JSON.stringify({ bench: "local-stt", rows }));
