/**
 * pocketsphinx STT cost and accuracy per decoder mode and search preset, on
 * the Debian pocketsphinx-testdata recordings that come with a reference
 * transcript (5 LibriVox sentences, "go forward ten meters", "go somewhere
 * and do something", a TIDIGITS number string: 86 words, 37.6 s).
 *
 * For each configuration: CPU of the decoder processes (children of this
 * process, from /proc: live ones' utime+stime, exited ones' through cutime+
 * cstime) per second of audio, split into model load (a stream with no audio
 * on a fresh provider) and decoding; and the word error rate against the
 * references (Levenshtein over words, no normalization: "mister" vs the
 * decoder's "mr" counts as an error in every configuration alike).
 *
 * With --memory: instead, the PSS of resident decoder processes (from
 * /proc/<pid>/smaps_rollup) after 1 and after 3 concurrent streams, with the
 * full dictionary and with the one restricted to the language model's words.
 *
 * Run: node --import tsx bench/pocketsphinx.bench.ts [--reps 3] [--memory]
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { benchParseArgs } from "./lib/bench-cli.js";
import { PCM16_16K } from "../src/core/talk-types.js";
import {
  createPocketsphinxStt,
  type PocketsphinxDecoderMode,
  type PocketsphinxSttProvider,
  type SphinxSearch,
} from "../src/providers/pocketsphinx/pocketsphinx-stt.js";
import { referencePcm, STT_REFERENCES, wordErrors } from "./lib/stt-references.js";

const { values } = benchParseArgs(import.meta.url, {
  options: { reps: { type: "string", default: "3" }, memory: { type: "boolean", default: false } },
});
const reps = Number(values.reps);
const TICK = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/** CPU seconds of this process's children: live ones plus the exited ones it reaped. */
function childrenCpu(): number {
  const fields = (pid: number | string): string[] => {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  };
  const self = fields("self");
  let ticks = Number(self[13]) + Number(self[14]);
  let live: string[] = [];
  try {
    live = execFileSync("pgrep", ["-P", String(process.pid)], { encoding: "utf8" }).split("\n");
  } catch {
    // none
  }
  for (const pid of live.filter(Boolean)) {
    try {
      const f = fields(pid);
      ticks += Number(f[11]) + Number(f[12]);
    } catch {
      // exited meanwhile
    }
  }
  return ticks / TICK;
}

async function transcribe(stt: PocketsphinxSttProvider, pcm: Int16Array): Promise<string> {
  const stream = stt.startStream({ format: PCM16_16K, signal: new AbortController().signal });
  for (let i = 0; i < pcm.length; i += 320) stream.write(pcm.subarray(i, i + 320));
  return (await stream.finish()).text;
}

const recordings = STT_REFERENCES.map(([path, ref]) => ({
  path,
  ref: ref.split(" "),
  pcm: referencePcm(path),
}));
const audioSeconds = recordings.reduce((s, r) => s + r.pcm.length / 16_000, 0);
const words = recordings.reduce((s, r) => s + r.ref.length, 0);

async function measure(decoder: PocketsphinxDecoderMode, search: SphinxSearch): Promise<void> {
  const stt = createPocketsphinxStt({ decoder, search });
  try {
    // Model load: one empty stream on a fresh provider (resident: spawns and loads; per-stream: the same).
    let cpu0 = childrenCpu();
    await transcribe(stt, new Int16Array(0));
    const load = childrenCpu() - cpu0;
    const decodeCpu: number[] = [];
    let errors = 0;
    const hyps: string[] = [];
    for (let rep = 0; rep < reps; rep++) {
      cpu0 = childrenCpu();
      for (const r of recordings) {
        const text = await transcribe(stt, r.pcm);
        if (rep === 0) {
          errors += wordErrors(r.ref, text.split(" ").filter(Boolean));
          hyps.push(text);
        }
      }
      // Per-stream decoders load the models for every recording: take that out to compare decoding alone.
      const loads = decoder === "per-stream" ? load * recordings.length : 0;
      decodeCpu.push(childrenCpu() - cpu0 - loads);
    }
    decodeCpu.sort((a, b) => a - b);
    console.log(
      JSON.stringify({
        decoder,
        search,
        modelLoadCpuS: Number(load.toFixed(2)),
        decodeCpuPerAudioS: Number((decodeCpu[0]! / audioSeconds).toFixed(3)),
        decodeCpuPerAudioSMedian: Number((decodeCpu[Math.floor(reps / 2)]! / audioSeconds).toFixed(3)),
        wordErrorRate: Number((errors / words).toFixed(3)),
        errors,
        words,
      }),
    );
    if (process.env["BENCH_HYPS"]) for (const h of hyps) console.log(`  ${h}`);
  } finally {
    await stt.close();
  }
}

/** PSS in MB of this process's resident decoder children. */
function decoderPss(): number[] {
  let pids: string[] = [];
  try {
    pids = execFileSync("pgrep", ["-P", String(process.pid), "-f", "sphinx-decoder.py"], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean);
  } catch {
    // none
  }
  return pids.map((pid) => {
    const line = /^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
    return Math.round(Number(line?.[1] ?? 0) / 1024);
  });
}

async function measureMemory(lmOnlyDict: boolean, streams: number): Promise<void> {
  const stt = createPocketsphinxStt({ lmOnlyDict });
  try {
    await Promise.all(Array.from({ length: streams }, () => transcribe(stt, recordings[0]!.pcm)));
    const pss = decoderPss();
    const total = pss.reduce((a, b) => a + b, 0);
    console.log(JSON.stringify({ lmOnlyDict, decoders: pss.length, pssMB: pss, totalPssMB: total }));
  } finally {
    await stt.close();
  }
}

if (values.memory) {
  for (const lmOnlyDict of [false, true]) for (const n of [1, 3]) await measureMemory(lmOnlyDict, n);
  process.exit(0);
}

console.log(
  `# pocketsphinx bench: ${recordings.length} recordings, ${audioSeconds.toFixed(1)} s, ${words} words, ${reps} reps, load ${readFileSync("/proc/loadavg", "utf8").trim()}`,
);
for (const search of ["full", "fast"] as const) {
  for (const decoder of ["resident", "per-stream"] as const) await measure(decoder, search);
}
console.log(`# load ${readFileSync("/proc/loadavg", "utf8").trim()}`);
