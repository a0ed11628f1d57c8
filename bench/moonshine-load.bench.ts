/**
 * What the default recognizer costs a process the first time it recognizes
 * (docs/performance.md, "Local recognizers"): the Moonshine model's thread
 * starts, loads onnxruntime, the tokenizer and both sessions, and decodes
 * goforward.raw (2.6 s); then the same recording again, for the decode alone.
 * CPU of the whole process (the thread included) from process.cpuUsage(), RSS
 * from process.memoryUsage(). Each round runs in a fresh process: the load is
 * a per-process cost.
 *
 *   node --import tsx bench/moonshine-load.bench.ts [--rounds 3]
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { benchParseArgs } from "./lib/bench-cli.js";
import { defaultMoonshineModelDir, MoonshineModel } from "../src/providers/moonshine/moonshine-model.js";

const { values } = benchParseArgs(import.meta.url, {
  options: { rounds: { type: "string", default: "3" }, child: { type: "boolean" } },
});

async function once(): Promise<void> {
  const raw = readFileSync("/usr/share/pocketsphinx/test/data/goforward.raw");
  const pcm = new Int16Array(raw.buffer, raw.byteOffset, raw.length / 2);
  const audio = (): Float32Array => Float32Array.from(pcm, (s) => s / 32768);
  const cpuMs = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const rss0 = process.memoryUsage().rss;
  const c0 = cpuMs();
  const t0 = performance.now();
  const model = new MoonshineModel(defaultMoonshineModelDir()!);
  await model.transcribe(audio());
  const c1 = cpuMs();
  const wall = performance.now() - t0;
  const rss = process.memoryUsage().rss - rss0;
  await model.transcribe(audio());
  const c2 = cpuMs();
  await model.close();
  console.log(
    JSON.stringify({ firstCpuMs: c1 - c0, firstWallMs: wall, decodeCpuMs: c2 - c1, rssMB: rss / 1e6 }),
  );
}

if (values.child) {
  await once();
} else {
  const rows: { firstCpuMs: number; firstWallMs: number; decodeCpuMs: number; rssMB: number }[] = [];
  for (let i = 0; i < Number(values.rounds); i++) {
    const out = execFileSync(process.execPath, [
      ...process.execArgv,
      fileURLToPath(import.meta.url),
      "--child",
    ]);
    rows.push(JSON.parse(out.toString().trim().split("\n").pop()!) as (typeof rows)[number]);
  }
  const span = (k: keyof (typeof rows)[number], digits = 0): string => {
    const v = rows.map((r) => r[k]);
    return `${Math.min(...v).toFixed(digits)}-${Math.max(...v).toFixed(digits)}`;
  };
  console.log(`Moonshine, first recognition in a process (${rows.length} processes):`);
  console.log(
    `  load + first decode: ${span("firstCpuMs")} ms CPU, ${span("firstWallMs")} ms wall, +${span("rssMB")} MB RSS`,
  );
  console.log(`  a later decode of the same 2.6 s: ${span("decodeCpuMs")} ms CPU`);
}
