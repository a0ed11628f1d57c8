/**
 * Where a relay's CPU goes, as CPU (issue 19): `perf record -e cpu-clock` samples a thread only while it runs
 * on a CPU, so kernel work (syscalls, the loopback TCP stack), V8's collector on its helper threads and each
 * piece of JavaScript are counted for the CPU they use. V8's own `--cpu-prof` samples the main thread's wall
 * time instead: on the capacity bench's single pinned core it charged talkgate's `writeSync` and `writev` with
 * the time the thread waited preempted by V8's concurrent marking (docs/performance.md).
 *
 * It runs bench/telephony-capacity.bench.ts under `perf record -g -k CLOCK_MONOTONIC -C 0` (the relays are
 * pinned to CPU 0) with every node process writing a perf map (`--perf-basic-prof`), reads the windows the
 * capacity bench measured (`--windows-out`) and attributes each sample of each relay's process inside a
 * window to one area: the kernel, V8's collector, the `ws` library, Node's streams and sockets, talkgate's own
 * code by layer (the nearest talkgate frame of the stack), the peer's script, or the rest.
 *
 *   node --import tsx bench/relay-cpu-perf.ts [--calls 100] [--seconds 10] [--shape realistic|worst]
 *     [--peer yes|no] [--real-sample DIR] [--baseline DIR] [--out DIR] [--keep yes]
 *
 * Needs Debian's `linux-perf` (`apt-get install linux-perf`) and a kernel that lets root sample CPU 0.
 * Prints, per relay and level, ms of CPU per second of call in each area, and the relays side by side.
 */
import { spawnSync } from "node:child_process";
import {
  closeSync,
  createReadStream,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { benchArgs, num } from "./lib/bench-args.js";

const args = benchArgs({
  calls: "100",
  seconds: "10",
  "warmup-seconds": "4",
  shape: "realistic",
  peer: "yes",
  "real-sample": "",
  baseline: "",
  out: "",
  keep: "no",
  // yes: read the perf.data and windows.jsonl already in --out instead of running the bench again.
  "analyze-only": "no",
});
const calls = num(args.calls, "calls");
const seconds = num(args.seconds, "seconds");
if (!["realistic", "worst"].includes(args.shape)) throw new Error("--shape must be realistic or worst");
if (spawnSync("perf", ["--version"]).status !== 0)
  throw new Error("perf is not installed: apt-get install linux-perf");

const out = args.out || mkdtempSync(join(tmpdir(), "relay-cpu-perf-"));
mkdirSync(out, { recursive: true });
const data = join(out, "perf.data");
const windowsFile = join(out, "windows.jsonl");
const analyzeOnly = args["analyze-only"] === "yes";
if (analyzeOnly && !args.out)
  throw new Error("--analyze-only needs --out DIR (a directory of an earlier run)");
if (!analyzeOnly) record();

/** Runs the capacity bench under perf record. */
function record(): void {
  rmSync(windowsFile, { force: true });
  const started = Date.now();
  const bench = [
    process.execPath,
    "--import",
    "tsx",
    join(import.meta.dirname, "telephony-capacity.bench.ts"),
    "--calls",
    String(calls),
    "--seconds",
    String(seconds),
    "--shape",
    args.shape,
    "--warmup-seconds",
    args["warmup-seconds"],
    "--cpu-ramp",
    "yes",
    "--peer",
    args.peer,
    "--windows-out",
    windowsFile,
    ...(args["real-sample"] ? ["--real-sample", args["real-sample"]] : []),
    ...(args.baseline ? ["--baseline", args.baseline] : []),
  ];
  console.log(`perf record on CPU 0 around: ${bench.slice(3).join(" ")}`);
  const recorded = spawnSync(
    "perf",
    [
      "record",
      "-g",
      "-e",
      "cpu-clock",
      "-F",
      "1000",
      "-k",
      "CLOCK_MONOTONIC",
      "-C",
      "0",
      "-o",
      data,
      "--",
      ...bench,
    ],
    {
      stdio: ["ignore", "inherit", "inherit"],
      // Every node process (the relays) writes /tmp/perf-<pid>.map so perf can name JIT-compiled functions.
      env: { ...process.env, NODE_OPTIONS: `${process.env["NODE_OPTIONS"] ?? ""} --perf-basic-prof`.trim() },
    },
  );
  removeIsolateLogs(started);
  if (recorded.status !== 0) throw new Error(`perf record exited with ${recorded.status}`);
}

/**
 * `--perf-basic-prof` also makes every node process write an `isolate-0x…-<pid>-v8.log` into its working
 * directory (Node refuses `--logfile` in NODE_OPTIONS): the ones this run left in the checkouts it ran go.
 */
function removeIsolateLogs(since: number): void {
  const dirs = [join(import.meta.dirname, ".."), process.cwd(), args.baseline, args["real-sample"]].filter(
    Boolean,
  );
  for (const dir of new Set(dirs)) {
    for (const name of readdirSync(dir)) {
      if (!/^isolate-0x[0-9a-f]+-\d+-v8\.log$/.test(name)) continue;
      const path = join(dir, name);
      if (statSync(path).mtimeMs >= since) rmSync(path, { force: true });
    }
  }
}

interface Window {
  relay: string;
  shape: string;
  calls: number;
  pid: number | undefined;
  startNs: string;
  endNs: string;
}
const windows = readFileSync(windowsFile, "utf8")
  .split("\n")
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l) as Window)
  .filter((w) => w.pid !== undefined);

/** The area a sample's CPU belongs to, from its stack (leaf first). */
function areaOf(stack: readonly string[]): string {
  const leaf = stack[0] ?? "";
  if (leaf.endsWith("([kernel.kallsyms])")) return "kernel";
  if (stack.some((f) => GC_FRAME.test(f))) return "V8 collector";
  if (stack.some((f) => COMPILER_FRAME.test(f))) return "V8 compiler (JIT)";
  for (const frame of stack) {
    const js = frame.match(/JS:\S*\s+(\S+)/);
    if (!js) continue;
    const where = js[1]!;
    const talkgate = where.match(/\/src\/([a-z-]+)\//);
    if (talkgate) return `talkgate src/${talkgate[1]}`;
    if (where.includes("peer-relay-twilio-sample")) return "peer script";
    if (where.includes("/node_modules/ws/")) return "ws";
    if (/node:(net|internal\/streams|internal\/stream_base_commons|events|buffer)/.test(where))
      return "node streams, sockets, buffers";
    if (where.includes("index.js")) return "real sample script";
  }
  if (/v8::internal::JsonParser|JsonStringifier/.test(stack.join(" "))) return "JSON (no JS frame)";
  return "other (libuv, V8 runtime, compiler, ...)";
}
const GC_FRAME =
  /v8::internal::(Heap::|Scavenger|ScavengerCollector|MarkCompactCollector|MinorMarkCompact|ConcurrentMarking|Sweeper|IncrementalMarking|MarkingVisitor|MainMarkingVisitor|GCTracer|ArrayBufferSweeper)/;

const COMPILER_FRAME =
  /v8::internal::(compiler::|maglev::|baseline::|Compiler::|OptimizingCompileDispatcher|Parser|PreParser|Scanner)/;

/** The talkgate source file of the nearest talkgate frame, for the per-file table. */
function talkgateFileOf(stack: readonly string[]): string | undefined {
  for (const frame of stack) {
    const m = frame.match(/JS:\S*\s+\S*?\/(src\/[\w/.-]+\.ts)/);
    if (m) return m[1];
  }
  return undefined;
}

/** CPU samples (1 ms each at -F 1000) per window and area. */
const tally = new Map<Window, Map<string, number>>();
for (const w of windows) tally.set(w, new Map());
/** The same samples by talkgate file (those whose area is talkgate's own code). */
const files = new Map<Window, Map<string, number>>();
for (const w of windows) files.set(w, new Map());
const byPid = new Map<number, Window[]>();
for (const w of windows) byPid.set(w.pid!, [...(byPid.get(w.pid!) ?? []), w]);

// perf script's output is large (hundreds of MB): written to a file and read as a stream.
const dump = join(out, "perf.script");
const dumpFd = openSync(dump, "w");
const toFile = spawnSync("perf", ["script", "-i", data, "-F", "pid,tid,time,ip,sym,dso", "--ns"], {
  stdio: ["ignore", dumpFd, "ignore"],
});
closeSync(dumpFd);
if (toFile.status !== 0) throw new Error(`perf script exited with ${toFile.status}`);

let current: { window: Window; stack: string[] } | undefined;
const flush = (): void => {
  if (!current) return;
  const area = areaOf(current.stack);
  const t = tally.get(current.window)!;
  t.set(area, (t.get(area) ?? 0) + 1);
  const file = area.startsWith("talkgate ") ? talkgateFileOf(current.stack) : undefined;
  if (file) {
    const f = files.get(current.window)!;
    f.set(file, (f.get(file) ?? 0) + 1);
  }
  current = undefined;
};
for await (const line of createInterface({ input: createReadStream(dump) })) {
  if (line.length === 0) {
    flush();
    continue;
  }
  // A sample's header: its pid right-aligned (a short pid starts the line with spaces); its stack lines
  // start with a tab.
  if (!line.startsWith("\t")) {
    flush();
    const m = line.match(/^\s*(\d+)\/?(\d+)?\s+([\d.]+):/);
    if (!m) continue;
    const pid = Number(m[1]);
    const ns = BigInt(m[3]!.replace(".", ""));
    const window = byPid.get(pid)?.find((w) => ns >= BigInt(w.startNs) && ns <= BigInt(w.endNs));
    if (window) current = { window, stack: [] };
    continue;
  }
  if (current) current.stack.push(line.trim().replace(/^[0-9a-f]+\s+/, ""));
}
flush();

const areas = [...new Set([...tally.values()].flatMap((t) => [...t.keys()]))].sort();
const relays = [...new Set(windows.map((w) => w.relay))];
const levels = [...new Set(windows.map((w) => w.calls))].sort((a, b) => a - b);
for (const level of levels) {
  const cells = relays.map((r) => windows.find((w) => w.relay === r && w.calls === level));
  const perCallSecond = (w: Window | undefined, area?: string): number | undefined => {
    if (!w) return undefined;
    const t = tally.get(w)!;
    const samples = area ? (t.get(area) ?? 0) : [...t.values()].reduce((a, b) => a + b, 0);
    const wallS = Number(BigInt(w.endNs) - BigInt(w.startNs)) / 1e9;
    return samples / wallS / w.calls; // ms of CPU per second of call (1 sample = 1 ms)
  };
  console.log(
    `\n[${args.shape}] ${level} calls: ms of CPU per second of call (perf cpu-clock, whole process)`,
  );
  console.log(`| area | ${relays.join(" | ")} |`);
  console.log(`|---|${relays.map(() => "---").join("|")}|`);
  for (const area of [...areas, undefined]) {
    const values = cells.map((w) => perCallSecond(w, area));
    if (area && values.every((v) => v === undefined || v < 0.01)) continue;
    console.log(
      `| ${area ?? "**all**"} | ${values.map((v) => (v === undefined ? "-" : v.toFixed(2))).join(" | ")} |`,
    );
  }
}
for (const w of windows.filter((x) => files.get(x)!.size > 0)) {
  const wallS = Number(BigInt(w.endNs) - BigInt(w.startNs)) / 1e9;
  const top = [...files.get(w)!].sort((a, b) => b[1] - a[1]).slice(0, 12);
  console.log(
    `\n${w.relay} at ${w.calls} calls, its own code by file (nearest talkgate frame), ms per call-second:`,
  );
  console.log(top.map(([file, n]) => `  ${(n / wallS / w.calls).toFixed(3)}  ${file}`).join("\n"));
}
if (args.keep !== "yes" && !args.out) rmSync(out, { recursive: true, force: true });
else console.log(`\nperf data and script in ${out}`);
