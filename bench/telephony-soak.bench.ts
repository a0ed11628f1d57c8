/**
 * Soak: calls held for minutes on one server process, read every
 * --sample-seconds, to show that memory stays flat and the relay keeps up.
 *
 * Relay phase: --calls realtime calls against the stand-in realtime provider
 * (bench/lib/realtime-load-provider.ts), stamped 20 ms frames both ways at
 * 50 frames/s, marks echoed, and barge-ins all along (each call once per
 * --barge-in-seconds, spread evenly: provider speech_started -> the relay's
 * clear, response.cancel and truncate -> speech_stopped -> a new answer).
 * Every frame is counted in the window it was sent in, on arrival too, so a
 * frame is lost only if it never arrives (deltas sent after speech_started
 * and before the relay's cancel belong to an interrupted answer and are not
 * counted). Server pinned to CPU 0 as in the capacity bench (--pin no: not).
 *
 * stt-tts phase: --stt-calls calls through the embedded local engines
 * (speech gate, pocketsphinx, local agent, espeak-ng), each caller saying a
 * pocketsphinx-testdata recording once per --speech-seconds and playing the
 * answers at 1x (bench/lib/speech-load-calls.ts). The server is not pinned:
 * its pocketsphinx decoders are processes of their own.
 *
 * At each window's end the server's RSS and V8 heap are read after a full GC
 * (over IPC; the GC pause falls in a gap between windows whose frames count
 * for loss but not for latency). Verdicts: RSS and heap growth from the first
 * reading at or after minute min(2, minutes/2) to the last < 5%; no frame
 * lost; the tail steady: the last window's p99 at most --tail-factor times
 * the first steady window's, or --tail-slack-ms above it where that is more.
 *
 *   npm run bench:soak -- [--minutes 10] [--calls 500] [--stt-calls 100] [--phase relay|stt-tts|both]
 *     [--sample-seconds 30] [--barge-in-seconds 15] [--speech-seconds 15] [--tail-factor 1.5] [--tail-slack-ms 2]
 *     [--replay-limit N] [--heap-snapshots yes]
 * Figures and what they showed: docs/notes/performance-history.md, "Soak". On a shared machine run it under `chrt -r 10`.
 */
import { readFileSync, rmSync } from "node:fs";
import { benchArgs, fmt, num, sleep } from "./lib/bench-args.js";
import { cpuSince, processTree, readProcessCpu, readProcessWithChildrenCpu } from "./lib/process-cpu.js";
import { sessionLogLatencies } from "./lib/session-log-latency.js";
import { SpeechLoad } from "./lib/speech-load-calls.js";
import { freePort, spawnTelephonyServer, type BenchServer } from "./lib/spawn-telephony-server.js";
import { TelephonyLoad, type LoadCall } from "./lib/twilio-load-calls.js";
import { WindowedLatencyLog, type LatencyWindow, type WindowFigures } from "./lib/windowed-latency-log.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../test/support/twilio-stream-client.js";

const args = benchArgs({
  minutes: "10",
  calls: "500",
  "stt-calls": "100",
  phase: "both",
  "sample-seconds": "30",
  "barge-in-seconds": "15",
  "speech-seconds": "15",
  "tail-factor": "1.5",
  "tail-slack-ms": "2",
  "heap-snapshots": "no",
  // Events each session keeps for replay (runtime.replayLimit); empty: the config's default (1,000).
  "replay-limit": "",
});
const minutes = num(args.minutes, "minutes");
const sampleMs = num(args["sample-seconds"], "sample-seconds") * 1000;
const windows = Math.max(2, Math.round((minutes * 60_000) / sampleMs));
/** Memory growth is measured from here (minutes after the calls were all up). */
const warmMinutes = Math.min(2, minutes / 2);
const tailFactor = num(args["tail-factor"], "tail-factor");
const tailSlackMs = num(args["tail-slack-ms"], "tail-slack-ms");
const snapshots = args["heap-snapshots"] === "yes";
const replayNote = args["replay-limit"] ? `; runtime.replayLimit ${args["replay-limit"]} events` : "";
const serverArgs = args["replay-limit"]
  ? ["--replay-limit", String(num(args["replay-limit"], "replay-limit"))]
  : [];
if (!["relay", "stt-tts", "both"].includes(args.phase))
  throw new Error("--phase must be relay, stt-tts or both");
if (args.webhook !== undefined)
  throw new Error("the soak reads the server's own memory: it spawns the server");

const pick = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const MB = (bytes: number): string => (bytes / 1048576).toFixed(1);
const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

interface MemoryReading {
  minute: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** RSS of the server and every process below it (pocketsphinx decoders, espeak-ng). */
  treeRss: number;
  /** The IPC round trip around two full GCs: the pause the reading costs the server. */
  gcMs: number;
}

interface Verdict {
  rule: string;
  ok: boolean;
  detail: string;
}

async function readMemory(server: BenchServer, minute: number): Promise<MemoryReading> {
  const t0 = performance.now();
  const m = await server.memory();
  return {
    minute,
    rss: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    treeRss: treeRss(server.child.pid!),
    gcMs: performance.now() - t0,
  };
}

function treeRss(pid: number): number {
  let total = 0;
  for (const member of processTree(pid)) total += rssOf(member);
  return total;
}

function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0; // Gone since the tree was read.
  }
}

/** Growth of RSS and heap from the first reading at or after the warm-up to the last. */
function memoryVerdicts(readings: MemoryReading[]): Verdict[] {
  const base = readings.find((r) => r.minute >= warmMinutes - 1e-9);
  const end = readings.at(-1);
  if (!base || !end || base === end)
    return [{ rule: "memory", ok: false, detail: "too few readings after the warm-up" }];
  const rule = (name: string, a: number, b: number): Verdict => {
    const growth = (b - a) / a;
    return {
      rule: `${name} growth minute ${base.minute.toFixed(1)} -> ${end.minute.toFixed(1)} < 5%`,
      ok: growth < 0.05,
      detail: `${MB(a)} -> ${MB(b)} MB (${growth >= 0 ? "+" : ""}${pct(growth)})`,
    };
  };
  return [rule("RSS", base.rss, end.rss), rule("V8 heap used", base.heapUsed, end.heapUsed)];
}

async function snapshot(server: BenchServer, label: string): Promise<void> {
  if (!snapshots) return;
  const path = await new Promise<string>((resolve) => {
    server.child.once("message", (m) => resolve((m as { snapshot: string }).snapshot));
    server.child.send("snapshot");
  });
  console.log(`heap snapshot (${label}): ${path}`);
}

function printVerdicts(phase: string, verdicts: Verdict[]): void {
  for (const v of verdicts) console.log(`${phase}: ${v.ok ? "PASS" : "FAIL"} ${v.rule}: ${v.detail}`);
}

/**
 * Stops the server and returns its own barge_in_to_clear figures (from its session logs), then removes the logs
 * (tens of MB over a long run) unless heap snapshots were kept there.
 */
async function closeServer(server: BenchServer): Promise<number[]> {
  await server.close();
  const inRelay = sessionLogLatencies(server.dataDir, "barge_in_to_clear");
  if (server.dataDir && !snapshots) rmSync(server.dataDir, { recursive: true, force: true });
  return inRelay;
}

// ---------------------------------------------------------------------------------------------------------------
// Relay phase

/** Barge-ins spread evenly: each call once per period, one cycle at a time per call. */
class BargeIns {
  started = 0;
  /** speech_started with no clear at the caller, or no response.cancel at the provider, within 30 s. */
  missedClear = 0;
  missedCancel = 0;
  /** Barge-ins whose clear and cancel took over 2 s. */
  late = 0;
  /** Turns that found no answer playing and started one instead. */
  restarted = 0;
  /** Cycles skipped because the call's previous one had not finished. */
  skipped = 0;
  readonly #load: TelephonyLoad;
  readonly #busy = new Set<number>();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(load: TelephonyLoad) {
    this.#load = load;
  }

  start(periodMs: number): void {
    const t0 = performance.now();
    const interval = periodMs / this.#load.calls.length;
    let due = 0;
    this.#timer = setInterval(() => {
      const now = Math.floor((performance.now() - t0) / interval);
      for (; due < now; due++) void this.#cycle(this.#load.calls[due % this.#load.calls.length]!);
    }, 20);
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#stopped = true;
    while (this.#busy.size > 0) await sleep(20);
  }

  async #cycle(call: LoadCall): Promise<void> {
    const { provider } = this.#load;
    const conn = provider.byCall.get(call.idx);
    if (!conn || this.#busy.has(call.idx) || this.#stopped) {
      this.skipped++;
      return;
    }
    this.#busy.add(call.idx);
    if (!conn.responseId) {
      // No answer playing (a cancel that came after a previous cycle gave up on it): this turn starts one.
      provider.startResponse(conn);
      this.restarted++;
      this.#busy.delete(call.idx);
      return;
    }
    this.started++;
    const clears = call.clears;
    provider.speechStarted(conn);
    const start = performance.now();
    // Late is counted as missed, but the cycle waits on (up to 30 s) so the call's next answer follows the cancel.
    while ((conn.responseId || call.clears === clears) && performance.now() - start < 30_000) await sleep(20);
    if (call.clears === clears) this.missedClear++;
    if (conn.responseId) this.missedCancel++;
    if (performance.now() - start > 2000) this.late++;
    // The caller goes on talking a little, then stops; the provider answers again.
    await sleep(400);
    provider.speechStopped(conn);
    provider.startResponse(conn);
    this.#busy.delete(call.idx);
  }
}

async function relayPhase(): Promise<Verdict[]> {
  const calls = num(args.calls, "calls");
  const providerPort = await freePort();
  const server = await spawnTelephonyServer(
    providerPort,
    args.pin !== "no",
    args["data-dir"],
    undefined,
    undefined,
    serverArgs,
  );
  const inbound = new WindowedLatencyLog();
  const outbound = new WindowedLatencyLog();
  const load = new TelephonyLoad({
    webhookUrl: `http://127.0.0.1:${server.port}/telephony/twilio/voice?mode=realtime`,
    providerPort,
    inbound,
    outbound,
  });
  const pid = server.child.pid!;
  const bargeIns = new BargeIns(load);
  const readings: MemoryReading[] = [];
  const p99s: number[] = [];
  const tally: Tally = { lostIn: 0, lostOut: 0, lostInGaps: 0, extra: 0 };
  let short = 0;
  let closed = 0;
  let inRelay: number[] = [];
  try {
    await load.start();
    const t0 = performance.now();
    await load.addCalls(calls);
    load.flow(true, true);
    console.log(
      `\nrelay soak: talkgate server pid ${pid}${server.pinned ? " pinned to CPU 0" : " (not pinned)"}; ${calls} realtime calls up in ${((performance.now() - t0) / 1000).toFixed(1)} s, 50 frames/s each way, marks echoed, a barge-in per call every ${args["barge-in-seconds"]} s; ${windows} windows of ${sampleMs / 1000} s; memory after a full GC at each window's end${replayNote}`,
    );
    console.log(
      "| minute | RSS MB | heap used / total MB | external MB | GC pause ms | server CPU | frames in sent/arrived | frames out sent/arrived | lost | in p50 / p99 / p99.9 ms | out p50 / p99 / p99.9 ms | barge-ins (clear p50 / p99 ms) |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|---|---|");
    const start = performance.now();
    readings.push(await readMemory(server, 0));
    bargeIns.start(num(args["barge-in-seconds"], "barge-in-seconds") * 1000);
    let gap: { in: LatencyWindow; out: LatencyWindow } | undefined;
    for (let w = 0; w < windows; w++) {
      const win = { in: inbound.roll(), out: outbound.roll() };
      // Taken with this window, once its last frames had time to arrive too.
      const previousGap = gap;
      const bargeFrom = load.bargeIn.length;
      const cpu0 = readProcessCpu(pid);
      const w0 = performance.now();
      await sleep(sampleMs);
      const cpu = cpuSince(cpu0, readProcessCpu(pid));
      const wall = (performance.now() - w0) / 1000;
      // The frames sent while the server collects its garbage count for loss, not for latency.
      gap = { in: inbound.roll(), out: outbound.roll() };
      const minute = (performance.now() - start) / 60_000;
      const mem = await readMemory(server, minute);
      readings.push(mem);
      await sleep(1500);
      await arrivals(win.in, win.out, ...(previousGap ? [previousGap.in, previousGap.out] : []));
      if (previousGap) account(tally, inbound.take(previousGap.in), outbound.take(previousGap.out), true);
      const fi = inbound.take(win.in);
      const fo = outbound.take(win.out);
      account(tally, fi, fo, false);
      // Caller frames go out on the generator's clock without pauses (answers pause for barge-ins).
      if (fi.sent < 0.95 * calls * 50 * wall) short++;
      p99s.push(Math.max(fi.p99, fo.p99));
      const barge = load.bargeIn.slice(bargeFrom).sort((a, b) => a - b);
      const bp = (q: number): string => fmt(pick(barge, q));
      const share = cpu ? ((cpu.user + cpu.system) / wall) * 100 : NaN;
      console.log(
        `| ${minute.toFixed(1)} | ${MB(mem.rss)} | ${MB(mem.heapUsed)} / ${MB(mem.heapTotal)} | ${MB(mem.external)} | ${mem.gcMs.toFixed(0)} | ${share.toFixed(0)}% | ${fi.sent}/${fi.arrived} | ${fo.sent}/${fo.arrived} | ${Math.max(0, fi.sent - fi.arrived) + Math.max(0, fo.sent - fo.arrived)} | ${fmt(fi.p50)} / ${fmt(fi.p99)} / ${fmt(fi.p999)} | ${fmt(fo.p50)} / ${fmt(fo.p99)} / ${fmt(fo.p999)} | ${barge.length} (${bp(0.5)} / ${bp(0.99)}) |`,
      );
      if (w === 0 || w === windows - 1) await snapshot(server, w === 0 ? "first window" : "last window");
    }
    load.flow(false, false);
    inbound.stop();
    outbound.stop();
    await bargeIns.stop();
    if (gap) await arrivals(gap.in, gap.out);
    if (gap) account(tally, inbound.take(gap.in), outbound.take(gap.out), true);
    closed = load.closedCalls;
  } finally {
    load.flow(false, false);
    await load.close();
    inRelay = await closeServer(server);
  }
  const lost = tally.lostIn + tally.lostOut;
  const steadyAt = readings.findIndex((r) => r.minute >= warmMinutes - 1e-9);
  // readings[0] is taken before the first window: window i ends at readings[i + 1].
  const firstSteady = p99s[Math.max(0, steadyAt - 1)] ?? NaN;
  const lastP99 = p99s.at(-1) ?? NaN;
  const tailLimit = Math.max(firstSteady * tailFactor, firstSteady + tailSlackMs);
  const verdicts: Verdict[] = [
    ...memoryVerdicts(readings),
    {
      rule: "frames lost = 0",
      ok: lost === 0 && closed === 0,
      detail: `${lost} lost (caller -> provider ${tally.lostIn}, provider -> caller ${tally.lostOut}; ${tally.lostInGaps} of them sent during a memory reading)${tally.extra > 0 ? `, ${tally.extra} more arrived than sent (audio of interrupted answers passed on)` : ""}, ${closed} call sockets closed, ${load.provider.discarded} deltas of interrupted answers not counted`,
    },
    {
      rule: `tail steady (last window p99 <= max(${tailFactor} x, +${tailSlackMs} ms) the first steady window's)`,
      ok: lastP99 <= tailLimit,
      detail: `first steady ${fmt(firstSteady)} ms, last ${fmt(lastP99)} ms, limit ${fmt(tailLimit)} ms; worst window ${fmt(Math.max(...p99s))} ms`,
    },
    {
      rule: "barge-ins answered",
      ok: bargeIns.missedClear === 0 && bargeIns.missedCancel === 0 && bargeIns.late === 0,
      detail: `${bargeIns.started} barge-ins (the relay's own part, provider event in -> clear written: p50 ${fmt(pick(inRelay, 0.5))}, p99 ${fmt(pick(inRelay, 0.99))}, max ${fmt(inRelay.at(-1) ?? NaN)} ms), ${bargeIns.missedClear} without clear and ${bargeIns.missedCancel} without response.cancel, ${bargeIns.late} answered after 2 s, ${bargeIns.skipped} skipped (previous cycle of the call still running), ${bargeIns.restarted} turns restarting a cancelled answer instead`,
    },
    {
      rule: "load applied",
      ok: short === 0,
      detail: `${short} of ${windows} windows where the generator sent under 95% of 50 frames/s per call (the level was not applied)`,
    },
  ];
  printVerdicts("relay", verdicts);
  console.log(
    JSON.stringify({
      bench: "telephony-soak",
      phase: "relay",
      calls,
      minutes,
      readings: readings.map((r) => ({ minute: +r.minute.toFixed(2), rss: r.rss, heapUsed: r.heapUsed })),
      p99s,
      lost,
      pass: verdicts.every((v) => v.ok),
    }),
  );
  return verdicts;
}

/**
 * Waits for a closed window's frames to arrive, up to 10 s: a stalled server (a loaded machine) can hold them
 * for seconds, which is latency, not loss. What has not arrived by then counts as lost.
 */
async function arrivals(...ws: LatencyWindow[]): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (ws.some((w) => w.arrived < w.sent) && performance.now() < deadline) await sleep(50);
}

interface Tally {
  lostIn: number;
  lostOut: number;
  /** Of those, lost in the gaps around memory readings. */
  lostInGaps: number;
  extra: number;
}

function account(tally: Tally, fi: WindowFigures, fo: WindowFigures, gap: boolean): void {
  const lostIn = Math.max(0, fi.sent - fi.arrived);
  const lostOut = Math.max(0, fo.sent - fo.arrived);
  tally.lostIn += lostIn;
  tally.lostOut += lostOut;
  if (gap) tally.lostInGaps += lostIn + lostOut;
  tally.extra += Math.max(0, fi.arrived - fi.sent) + Math.max(0, fo.arrived - fo.sent);
}

// ---------------------------------------------------------------------------------------------------------------
// stt-tts phase

async function sttTtsPhase(): Promise<Verdict[]> {
  const calls = num(args["stt-calls"], "stt-calls");
  const speechEveryMs = num(args["speech-seconds"], "speech-seconds") * 1000;
  // Nothing listens there: stt-tts calls never reach a realtime provider.
  const server = await spawnTelephonyServer(
    await freePort(),
    false,
    args["data-dir"],
    undefined,
    undefined,
    serverArgs,
  );
  const pid = server.child.pid!;
  const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
  const load = new SpeechLoad({
    webhookUrl: `http://127.0.0.1:${server.port}/telephony/twilio/voice?mode=stt-tts`,
    speech,
    speechEveryMs,
  });
  const readings: MemoryReading[] = [];
  let answers = 0;
  let closed = 0;
  try {
    load.start();
    const t0 = performance.now();
    await load.addCalls(calls);
    console.log(
      `\nstt-tts soak: talkgate server pid ${pid} (not pinned: pocketsphinx decoders run beside it); ${calls} stt-tts calls up in ${((performance.now() - t0) / 1000).toFixed(1)} s, each caller says "go forward ten meters" (${(speech.byteLength / 8000).toFixed(1)} s, pocketsphinx-testdata) once every ${speechEveryMs / 1000} s and plays the answers at 1x; ${windows} windows of ${sampleMs / 1000} s; memory after a full GC at each window's end${replayNote}`,
    );
    console.log(
      "| minute | server RSS MB | heap used / total MB | external MB | RSS with decoders MB | processes | GC pause ms | CPU (tree) | utterances | answers (speech end -> first audio p50 / p99 s) | unanswered | clears | answer audio s |",
    );
    console.log("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    const start = performance.now();
    readings.push(await readMemory(server, 0));
    for (let w = 0; w < windows; w++) {
      const before = {
        utterances: load.utterances,
        unanswered: load.unanswered,
        clears: load.clears,
        received: load.framesReceived,
      };
      load.answerLatency = [];
      const cpu0 = readProcessWithChildrenCpu(pid);
      const w0 = performance.now();
      await sleep(sampleMs);
      const cpu = cpuSince(cpu0, readProcessWithChildrenCpu(pid));
      const wall = (performance.now() - w0) / 1000;
      const lat = load.answerLatency.sort((a, b) => a - b);
      answers += lat.length;
      const minute = (performance.now() - start) / 60_000;
      const mem = await readMemory(server, minute);
      readings.push(mem);
      const q = (p: number): string => (lat.length ? (pick(lat, p) / 1000).toFixed(2) : "-");
      const share = cpu ? ((cpu.user + cpu.system) / wall) * 100 : NaN;
      console.log(
        `| ${minute.toFixed(1)} | ${MB(mem.rss)} | ${MB(mem.heapUsed)} / ${MB(mem.heapTotal)} | ${MB(mem.external)} | ${MB(mem.treeRss)} | ${processTree(pid).size} | ${mem.gcMs.toFixed(0)} | ${share.toFixed(0)}% | ${load.utterances - before.utterances} | ${lat.length} (${q(0.5)} / ${q(0.99)}) | ${load.unanswered - before.unanswered} | ${load.clears - before.clears} | ${(((load.framesReceived - before.received) * 20) / 1000).toFixed(0)} |`,
      );
      if (w === 0 || w === windows - 1) await snapshot(server, w === 0 ? "first window" : "last window");
    }
    closed = load.closedCalls;
  } finally {
    load.close();
    await closeServer(server);
  }
  const verdicts: Verdict[] = [
    ...memoryVerdicts(readings),
    {
      rule: "calls held",
      ok: closed === 0,
      detail: `${closed} call sockets closed by the server; ${load.utterances} utterances, ${answers} answered, ${load.unanswered} still unanswered when the caller spoke again`,
    },
  ];
  printVerdicts("stt-tts", verdicts);
  console.log(
    JSON.stringify({
      bench: "telephony-soak",
      phase: "stt-tts",
      calls,
      minutes,
      readings: readings.map((r) => ({
        minute: +r.minute.toFixed(2),
        rss: r.rss,
        heapUsed: r.heapUsed,
        treeRss: r.treeRss,
      })),
      utterances: load.utterances,
      answers,
      pass: verdicts.every((v) => v.ok),
    }),
  );
  return verdicts;
}

const results: Verdict[] = [];
if (args.phase !== "stt-tts") results.push(...(await relayPhase()));
if (args.phase !== "relay") results.push(...(await sttTtsPhase()));
console.log(`\nsoak: ${results.every((v) => v.ok) ? "every rule passed" : "some rules failed (see above)"}`);
process.exit(0);
