/**
 * Meetings figures (issue 7), with the local test meeting on this machine:
 *
 * 1. per bot, in a 3-participant meeting (2 Chromium participants speaking
 *    real recordings in a loop + the bot): resident memory of the bot's
 *    Chromium process tree (PSS, so shared pages are not counted twice; RSS
 *    too) and its CPU share, plus the server process (capture socket, Opus
 *    decode, VAD, pocketsphinx children) over the same window;
 * 2. caption latency, participant speech end -> transcript.done: the floor
 *    ends a turn when the VAD has heard `utteranceSilenceMs` of silence, so
 *    speech end = turn.ended - utteranceSilenceMs; p50/p95;
 * 3. bots per worker: the same meeting with 1..--max-bots bots (a short ramp:
 *    2 cores shared with other work), caption latency per step.
 *
 * 4. issue 41: the bot's browser headed on Xvfb (default, `--browser headed`,
 *    `--display shared|per-bot`) against headless (`--browser headless`), or both
 *    side by side in one run (`--compare`: headless, then headed, 1 bot each; the
 *    Xvfb process counted with the headed bot); and time to join the Google Meet
 *    simulator (`--sim-joins N`: POST to the lobby, and the host's admission to
 *    the call, recording notice accepted, N bots one after another).
 *
 * 5. flag variants side by side (`--variant 'label=--flag --flag=value'`, repeated;
 *    `--rounds N`): 1 bot per step, the variants interleaved round by round so
 *    the machine's load moves alike for each; a summary line per variant at the
 *    end (median Chromium CPU and PSS, the Xvfb share, captions seen).
 *    `--baseline <commit|dir>` (bench/lib/baseline-checkout.ts) adds the variant
 *    `baseline`: that checkout's own harness, bot and capture script, default
 *    flags, interleaved with this checkout's variants (`this=` when none is given).
 * 7. the server's share of a bot: the server process's CPU over the meeting before
 *    any bot joins (`--server-baseline-seconds`, default 15: the test room's
 *    signalling, the harness driving the participants), subtracted from its CPU
 *    with the bots, per bot (`serverCpuCoresPerBot`); the window's memory
 *    sampling (ps, the browsers' smaps: `benchSamplingCores`) is taken out too;
 *    the summary's `medianBotInAllCores` is the bot's Chromium, its Xvfb share
 *    and that.
 * 6. `--profile-seconds N`: after each step's window, the first bot's page
 *    under V8's sampling profiler for N s, its top functions by self time
 *    (`firstBotPageProfile`, in cores of that thread's wall time).
 *    `--trace-seconds N`: the first bot's browser under Chromium's tracing for
 *    N s, each thread's CPU time by the origin of the tasks it ran (the
 *    `src_file:src_func` a task was posted from), `firstBotTrace`, in cores:
 *    where the renderer's native time ("(program)" to V8) goes.
 *
 * Run: npm run bench:meetings -- --seconds 40 --max-bots 3
 *      npm run bench:meetings -- --compare --seconds 40 --sim-joins 5
 * The bot camera: `--camera card` (each bot's page asks the room for a camera,
 * `video=on`, and the bot sends its card) or `--camera url` (a page served
 * here, a clock that changes every second, shown through the screencast),
 * against `--camera off` (default); `--camera-fps N` (meetings.camera.fps).
 * `--participant-video` (the participants send their fake camera, so the bot
 * receives video), `--receive-video` (meetings.receiveVideo: the bot accepts it).
 * CPU is process CPU time (utime + stime from /proc, summed over the bot
 * browser's processes) divided by the window: other load on the machine
 * slows a run but adds little to it.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { benchParseArgs } from "./lib/bench-cli.js";
import type { Page } from "puppeteer-core";
import type { TalkEvent } from "../src/core/talk-events.js";
import { speechWav, startMeetingsHarness } from "../test/integration/meetings-harness.js";
import { baselineCheckout } from "./lib/baseline-checkout.js";

/** The test meeting's harness of one checkout: this one, or a baseline's. */
interface HarnessModule {
  speechWav: typeof speechWav;
  startMeetingsHarness: typeof startMeetingsHarness;
}
const THIS_CHECKOUT: HarnessModule = { speechWav, startMeetingsHarness };

const { values } = benchParseArgs(import.meta.url, {
  options: {
    seconds: { type: "string", default: "40" },
    "max-bots": { type: "string", default: "3" },
    camera: { type: "string", default: "off" },
    // Extra Chromium flags for the bots, space-separated (meetings.chromiumArgs).
    "bot-flags": { type: "string", default: "" },
    "camera-fps": { type: "string", default: "2" },
    "participant-video": { type: "boolean", default: false },
    "receive-video": { type: "boolean", default: false },
    browser: { type: "string", default: "headed" },
    display: { type: "string", default: "shared" },
    compare: { type: "boolean", default: false },
    "sim-joins": { type: "string", default: "0" },
    variant: { type: "string", multiple: true, default: [] },
    // After the window: the first bot's page profiled this long (V8 sampling), its top functions by self time.
    "profile-seconds": { type: "string", default: "0" },
    // After the window: the first bot's browser traced this long, its thread time by thread and task origin.
    "trace-seconds": { type: "string", default: "0" },
    "server-baseline-seconds": { type: "string", default: "15" },
    rounds: { type: "string", default: "1" },
    // A commit or checkout directory whose own bot runs as the variant "baseline" beside this one's.
    baseline: { type: "string" },
  },
});
if (values.browser !== "headed" && values.browser !== "headless")
  throw new Error("--browser headed|headless");
if (values.display !== "shared" && values.display !== "per-bot") throw new Error("--display shared|per-bot");
const simJoins = Number(values["sim-joins"]);
const seconds = Number(values.seconds);
const maxBots = Number(values["max-bots"]);
if (!(seconds >= 10) || !(maxBots >= 1)) throw new Error("--seconds >= 10 and --max-bots >= 1");
const camera = values.camera;
if (camera !== "off" && camera !== "card" && camera !== "url") throw new Error("--camera off|card|url");
const cameraFps = Number(values["camera-fps"]);
const participantVideo = values["participant-video"];
const receiveVideo = values["receive-video"];

/** camera url: a page whose clock changes every second (a status board's worth of change). */
async function cameraPageServer(): Promise<{ origin: string; close(): void }> {
  const server = createServer((_req, res) => {
    res.setHeader("content-type", "text/html");
    res.end(`<!doctype html><body style="margin:0;background:#123;color:#fff;font:48px sans-serif">
<div id=t style="padding:40px"></div><script>setInterval(()=>{t.textContent=new Date().toISOString().slice(11,19)},1000)</script>`);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
}
const botFlags = values["bot-flags"] ? values["bot-flags"].split(" ") : [];
const SILENCE_MS = 600;
const TICK = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

function processTable(): { pid: number; ppid: number; args: string }[] {
  return execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" })
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l)!;
      return { pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! };
    });
}

/** A process and all its descendants. */
function tree(root: number): number[] {
  const table = processTable();
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const p of table) if (p.ppid === out[i]) out.push(p.pid);
  return out;
}

/** A Chromium process's kind: browser, renderer, gpu-process, or the utility's service (audio, network, ...). */
function kindOf(args: string): string {
  const type = /--type=(\S+)/.exec(args)?.[1];
  if (!type) return "browser";
  if (type === "utility")
    return /--utility-sub-type=(\S+)/.exec(args)?.[1]?.replace(/\.mojom\..*/, "") ?? "utility";
  return type;
}

/** CPU ticks by process kind over a process tree (where Chromium spends). */
function cpuByKind(pids: number[]): Map<string, number> {
  const args = new Map(processTable().map((p) => [p.pid, p.args]));
  const out = new Map<string, number>();
  for (const pid of pids) {
    const kind = kindOf(args.get(pid) ?? "");
    out.set(kind, (out.get(kind) ?? 0) + cpuTicks([pid]));
  }
  return out;
}

function botRoot(botId: string): number {
  const line = processTable().find(
    // The browser process itself: not a helper (--type=) and not its crash handler (which names the profile too).
    (p) =>
      p.args.includes(`--user-data-dir=`) &&
      p.args.includes(`talkgate-bot-${botId}-`) &&
      !p.args.includes("--type=") &&
      !p.args.includes("crashpad"),
  );
  if (!line) throw new Error(`no browser for bot ${botId}`);
  return line.pid;
}

/** CPU ticks by thread name over the renderer processes of a tree (where the renderer spends: main, compositor, audio, WebRTC). */
function rendererThreads(pids: number[]): Map<string, number> {
  const args = new Map(processTable().map((p) => [p.pid, p.args]));
  const out = new Map<string, number>();
  for (const pid of pids) {
    if (kindOf(args.get(pid) ?? "") !== "renderer") continue;
    let tids: string[] = [];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
        // Thread names as Chromium sets them, numbered pools folded ("ThreadPoolForeg", "WebRTC_W").
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/[0-9]+$/, "");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        out.set(name, (out.get(name) ?? 0) + Number(fields[11]) + Number(fields[12]));
      } catch {
        // exited
      }
    }
  }
  return out;
}

/** utime + stime (and, with `reaped`, the CPU of exited children it waited for: short-lived pocketsphinx runs). */
function cpuTicks(pids: number[], reaped = false): number {
  let total = 0;
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      total += Number(fields[11]) + Number(fields[12]);
      if (reaped) total += Number(fields[13]) + Number(fields[14]);
    } catch {
      // exited
    }
  }
  return total;
}

/**
 * The CPU seconds a synchronous piece of this bench costs this process: its main thread's run time
 * (schedstat, in ns: the body runs on it alone) and what the children it started and reaped took (ps).
 * The server's share of a bot is this process's CPU, so the bench's own sampling is taken out of it.
 */
function selfCost(body: () => void): number {
  const mainThread = (): number =>
    Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1e9;
  const reaped = (): number => {
    const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[13]) + Number(fields[14])) / TICK;
  };
  const main0 = mainThread();
  const reaped0 = reaped();
  body();
  return mainThread() - main0 + (reaped() - reaped0);
}

function memoryMb(pids: number[]): { pss: number; rss: number } {
  let pss = 0;
  let rss = 0;
  for (const pid of pids) {
    try {
      const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
      pss += Number(/^Pss:\s+(\d+)/m.exec(text)?.[1] ?? 0);
      rss += Number(/^Rss:\s+(\d+)/m.exec(text)?.[1] ?? 0);
    } catch {
      // exited
    }
  }
  return { pss: pss / 1024, rss: rss / 1024 };
}

const percentile = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Xvfb servers started by this process (through their watchdog shells). */
function xvfbPids(): number[] {
  return processTable()
    .filter((p) => p.args.includes("Xvfb -displayfd") && !p.args.startsWith("/bin/sh"))
    .filter((p) => tree(process.pid).includes(p.pid))
    .map((p) => p.pid);
}

interface StepFigures {
  cpu: number;
  pss: number;
  /** The Xvfb server's CPU over the window (headed; one bot per step, so all of it is that bot's share). */
  xvfb: number;
  captions: number;
  alive: boolean;
  load: [string, string];
  /** The server process's CPU per bot: with the bots, less the same meeting without them (see step()). */
  serverPerBot: number;
}

/**
 * `use` with the first bot's meeting page, through a second DevTools client on
 * its browser (its DevToolsActivePort); undefined when the browser cannot be
 * found. Runs after the CPU window: what `use` measures costs CPU itself.
 */
async function onBotPage<T>(root: number, use: (page: Page) => Promise<T>): Promise<T | undefined> {
  const args = processTable().find((p) => p.pid === root)?.args ?? "";
  const dir = /--user-data-dir=(\S+)/.exec(args)?.[1];
  if (!dir) return undefined;
  const [port] = readFileSync(`${dir}/DevToolsActivePort`, "utf8").split("\n");
  const { default: puppeteer } = await import("puppeteer-core");
  const browser = await puppeteer.connect({ browserURL: `http://127.0.0.1:${port}`, defaultViewport: null });
  try {
    const pages = await browser.pages();
    return await use(pages.find((p) => !p.url().startsWith("about:")) ?? pages[0]!);
  } finally {
    await browser.disconnect();
  }
}

/** The `count` largest of `us` (µs of CPU by name over `seconds`), each as its share of a core. */
function topShares(us: Map<string, number>, seconds: number, count: number): Record<string, number> {
  return Object.fromEntries(
    [...us]
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([k, v]) => [k, Number((v / (seconds * 1e6)).toFixed(4))]),
  );
}

/**
 * The bot page's JavaScript by self time: V8's sampling profiler on the
 * meeting page for `seconds`; "(program)" and "(garbage collector)" are V8's
 * own buckets.
 */
async function profileBotPage(root: number, seconds: number): Promise<Record<string, number>> {
  const self = await onBotPage(root, async (page) => {
    const cdp = await page.createCDPSession();
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 1000 });
    await cdp.send("Profiler.start");
    await sleep(seconds * 1000);
    const { profile } = await cdp.send("Profiler.stop");
    await cdp.detach();
    const byFunction = new Map<string, number>();
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const deltas = profile.timeDeltas ?? [];
    (profile.samples ?? []).forEach((id, i) => {
      const f = byId.get(id)?.callFrame;
      if (!f) return;
      const where = f.url ? `${f.url.replace(/^.*\//, "").slice(0, 30)}:${f.lineNumber + 1}` : "";
      const key = `${f.functionName || "(anonymous)"} ${where}`.trim();
      byFunction.set(key, (byFunction.get(key) ?? 0) + (deltas[i] ?? 0));
    });
    byFunction.delete("(idle)");
    return byFunction;
  });
  return self ? topShares(self, seconds, 15) : {};
}

/** A trace event as Chromium's JSON trace writes it (the fields read here). */
interface TraceEvent {
  ph: string;
  name: string;
  pid: number;
  tid: number;
  ts?: number;
  dur?: number;
  tdur?: number;
  args?: { name?: string; src_file?: string; src_func?: string };
}

/**
 * The first bot's browser traced for `seconds`: the thread time (`tdur`) of
 * every top-level slice, summed by process kind, thread and the place its task
 * was posted from, in cores. A task's origin says which subsystem's work it is
 * (a WebSocket send, an audio render callback, a paint) where V8's profiler
 * says only "(program)".
 */
async function traceBotBrowser(root: number, seconds: number): Promise<Record<string, number>> {
  const kinds = new Map<number, string>();
  for (const p of processTable()) kinds.set(p.pid, /--type=(\S+)/.exec(p.args)?.[1] ?? "browser");
  const raw = await onBotPage(root, async (page) => {
    await page.tracing.start({
      categories: ["toplevel", "disabled-by-default-devtools.timeline", "mojom", "ipc"],
    });
    await sleep(seconds * 1000);
    return Buffer.from((await page.tracing.stop()) ?? new Uint8Array());
  });
  if (!raw) return {};
  if (process.env.MEETINGS_TRACE_OUT) writeFileSync(process.env.MEETINGS_TRACE_OUT, raw);
  const events = (JSON.parse(raw.toString("utf8")) as { traceEvents: TraceEvent[] }).traceEvents;
  const threads = new Map<string, string>();
  for (const e of events)
    if (e.ph === "M" && e.name === "thread_name") threads.set(`${e.pid}:${e.tid}`, e.args?.name ?? "?");
  // Top-level slices only (a slice inside another's span on its thread is part of it). Chromium wraps each
  // task in a bare "RunTask" whose nested slice says where the task was posted from: a top-level slice is
  // named by the first origin inside it (itself included), else by its own name (a message pump's callback).
  interface Top {
    thread: string;
    name: string;
    origin: string | undefined;
    tdur: number;
  }
  const tops: Top[] = [];
  const open = new Map<string, { end: number; top: Top }>();
  const slices = events.filter((e) => e.ph === "X" && e.dur !== undefined).sort((a, b) => a.ts! - b.ts!);
  for (const e of slices) {
    const thread = `${e.pid}:${e.tid}`;
    const origin = e.args?.src_file
      ? `${e.args.src_file.replace(/^.*\//, "")}:${e.args.src_func ?? "?"}`
      : undefined;
    const current = open.get(thread);
    if (current && current.end > e.ts!) {
      current.top.origin ??= origin;
      continue;
    }
    const top: Top = {
      thread: `${kinds.get(e.pid) ?? "?"} ${threads.get(thread) ?? e.tid}`,
      name: e.name,
      origin,
      tdur: e.tdur ?? 0,
    };
    tops.push(top);
    open.set(thread, { end: e.ts! + e.dur!, top });
  }
  const sums = new Map<string, number>();
  for (const t of tops) {
    if (!t.tdur) continue;
    const key = `${t.thread} ${t.origin ?? t.name}`;
    sums.set(key, (sums.get(key) ?? 0) + t.tdur);
  }
  return topShares(sums, seconds, 30);
}

async function step(
  bots: number,
  browser = values.browser as "headed" | "headless",
  flags: string[] = botFlags,
  label?: string,
  checkout: HarnessModule = THIS_CHECKOUT,
): Promise<StepFigures> {
  const pageServer = camera === "url" ? await cameraPageServer() : undefined;
  const { speechWav, startMeetingsHarness } = checkout;
  const h = await startMeetingsHarness({
    browser,
    display: values.display,
    aloneTimeoutMs: 600_000,
    utteranceSilenceMs: SILENCE_MS,
    maxBots: 8,
    chromiumArgs: flags,
    receiveVideo,
    camera: { fps: cameraFps, urlOrigins: pageServer ? [pageServer.origin] : [] },
  });
  try {
    const room = `bench-${bots}`;
    const video = participantVideo ? { video: "on" } : undefined;
    await h.participant(room, "Alice", speechWav(h.dir, "goforward.raw", 2.5), video);
    await h.participant(room, "Bob", speechWav(h.dir, "something.raw", 3.5), video);
    // The server process without any bot first: the test room's signalling for the participants, the harness
    // driving their pages over CDP and this bench's own polling run in it too, and are not a bot's share.
    const withoutBotsSeconds = Number(values["server-baseline-seconds"]);
    const idle0 = cpuTicks([process.pid], true);
    const idleT0 = Date.now();
    await sleep(withoutBotsSeconds * 1000);
    const serverWithoutBots = (cpuTicks([process.pid], true) - idle0) / TICK / ((Date.now() - idleT0) / 1000);
    const ended = new Map<string, number>();
    const latencies: number[] = [];
    let measuring = false;
    const done = new Map<string, number>();
    const typesSeen = new Map<string, number>();
    // A turn's transcript.done and turn.ended come in either order: the latency is counted once both are in.
    const pair = (turnId: string): void => {
      const end = ended.get(turnId);
      const at = done.get(turnId);
      if (end === undefined || at === undefined) return;
      latencies.push(at - end + SILENCE_MS);
      ended.delete(turnId);
      done.delete(turnId);
    };
    h.app.runtime.subscribeAll((e: TalkEvent) => {
      typesSeen.set(e.type, (typesSeen.get(e.type) ?? 0) + 1);
      if (!measuring || !e.turnId) return;
      if (e.type === "turn.ended") ended.set(e.turnId, Date.parse(e.timestamp));
      else if (e.type === "transcript.done" && (e.payload as { text?: string }).text)
        done.set(e.turnId, Date.parse(e.timestamp));
      else return;
      pair(e.turnId);
    });
    const ids: string[] = [];
    for (let i = 0; i < bots; i++) {
      const res = await h.post({
        meetingUrl: camera !== "off" ? `${h.roomUrl(room)}?video=on` : h.roomUrl(room),
        botName: `Bot${i + 1}`,
        mode: "transcribe",
        camera,
        ...(pageServer ? { cameraUrl: `${pageServer.origin}/board` } : {}),
      });
      ids.push(res.body.id);
    }
    for (const id of ids)
      await h.waitFor(id, (s) => s.state === "in_call" && s.participants.includes("Alice"));
    await sleep(5000); // capture and decoders settle
    const roots = ids.map(botRoot);
    const cpu0 = roots.map((r) => cpuTicks(tree(r)));
    const kinds0 = cpuByKind(tree(roots[0]!));
    const threads0 = rendererThreads(tree(roots[0]!));
    // The server: this Node process (capture sockets, Opus decode, VAD, floor) and its pocketsphinx children.
    const serverCpu = (): number =>
      cpuTicks([process.pid], true) +
      cpuTicks(
        processTable()
          .filter((p) => p.ppid === process.pid && p.args.includes("pocketsphinx"))
          .map((p) => p.pid),
      );
    const xvfb = xvfbPids();
    const xvfb0 = cpuTicks(xvfb);
    const node0 = cpuTicks([process.pid]);
    const srv0 = serverCpu();
    const load0 = readFileSync("/proc/loadavg", "utf8").split(" ")[0];
    const t0 = Date.now();
    measuring = true;
    const mem: { pss: number; rss: number }[] = [];
    // The sampling's own CPU (its ps children, reading the browsers' smaps) is this process's, not the bot's.
    let samplingSeconds = 0;
    while (Date.now() - t0 < seconds * 1000) {
      await sleep(5000);
      samplingSeconds += selfCost(() => {
        for (const r of roots) mem.push(memoryMb(tree(r)));
      });
    }
    measuring = false;
    const wall = (Date.now() - t0) / 1000;
    // A bot that ended inside the window (its browser gone) voids the step's figures: say which and why.
    const alive = roots.map((r) => processTable().some((p) => p.pid === r));
    const botStates = await Promise.all(
      ids.map(async (id) => {
        const st = await h.status(id);
        return { state: st.state, subCode: st.subCode, message: st.message };
      }),
    );
    const xvfbShare = (cpuTicks(xvfb) - xvfb0) / TICK / wall;
    const cpuShare = roots.map((r, i) => (cpuTicks(tree(r)) - cpu0[i]!) / TICK / wall);
    const kinds1 = cpuByKind(tree(roots[0]!));
    const threads1 = rendererThreads(tree(roots[0]!));
    const firstBotRendererThreads = Object.fromEntries(
      [...threads1]
        .map(([k, t]) => [k, Number(((t - (threads0.get(k) ?? 0)) / TICK / wall).toFixed(3))] as const)
        .filter(([, c]) => c >= 0.005)
        .sort((a, b) => b[1] - a[1]),
    );
    const firstBotByKind = Object.fromEntries(
      [...kinds1].map(([k, t]) => [k, Number(((t - (kinds0.get(k) ?? 0)) / TICK / wall).toFixed(3))]),
    );
    const serverShare = ((serverCpu() - srv0) / TICK - samplingSeconds) / wall;
    const nodeShare = ((cpuTicks([process.pid]) - node0) / TICK - samplingSeconds) / wall;
    const load1 = readFileSync("/proc/loadavg", "utf8").split(" ")[0];
    const pss = mem.map((m) => m.pss);
    const rss = mem.map((m) => m.rss);
    const pageProfile =
      Number(values["profile-seconds"]) > 0
        ? await profileBotPage(roots[0]!, Number(values["profile-seconds"]))
        : undefined;
    const botTrace =
      Number(values["trace-seconds"]) > 0
        ? await traceBotBrowser(roots[0]!, Number(values["trace-seconds"]))
        : undefined;
    const serverMem = memoryMb([process.pid]);
    const sttMem = memoryMb(
      processTable()
        .filter((p) => p.ppid === process.pid && p.args.includes("pocketsphinx"))
        .map((p) => p.pid),
    );
    console.log(
      JSON.stringify({
        ...(label !== undefined ? { variant: label } : {}),
        bots,
        browser,
        display: browser === "headed" ? values.display : "none",
        xvfbProcesses: xvfb.length,
        xvfbCpuCores: Number(xvfbShare.toFixed(3)),
        xvfbPssMb: Math.round(memoryMb(xvfb).pss),
        camera,
        cameraFps,
        participantVideo,
        receiveVideo,
        botFlags: flags,
        chromiumPerBotPssMb: {
          mean: Math.round(pss.reduce((a, b) => a + b, 0) / pss.length),
          max: Math.round(Math.max(...pss)),
        },
        chromiumPerBotRssMb: { max: Math.round(Math.max(...rss)) },
        chromiumPerBotCpuCores: cpuShare.map((c) => Number(c.toFixed(3))),
        // The first bot's Chromium CPU by process kind (browser, renderer, gpu-process, audio, network...).
        firstBotCpuByKind: firstBotByKind,
        // Its renderer by thread (CrRendererMain: page scripts, style, layout, paint; Compositor; audio; WebRTC).
        firstBotRendererThreads,
        serverProcessPssMb: Math.round(serverMem.pss),
        sttDecodersPssMb: Math.round(sttMem.pss),
        serverCpuCoresAllBots: Number(serverShare.toFixed(3)),
        // The split: this Node process (capture sockets, Opus decode, VAD, floor, the rest of the harness,
        // which also drives the participant browsers over CDP) and the STT decoder processes.
        serverNodeCpuCores: Number(nodeShare.toFixed(3)),
        // The same process over the same meeting before any bot joined, and what the bots added, per bot.
        serverCpuCoresWithoutBots: Number(serverWithoutBots.toFixed(3)),
        serverCpuCoresPerBot: Number(((serverShare - serverWithoutBots) / bots).toFixed(3)),
        benchSamplingCores: Number((samplingSeconds / wall).toFixed(4)),
        sttCpuCores: Number((serverShare - nodeShare).toFixed(3)),
        loadAverage: [load0, load1],
        browsersAliveAtEnd: alive,
        ...(alive.every(Boolean) ? {} : { botStates }),
        captions: latencies.length,
        eventTypes: Object.fromEntries(typesSeen),
        captionLatencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
        ...(pageProfile ? { firstBotPageProfile: pageProfile } : {}),
        ...(botTrace ? { firstBotTrace: botTrace } : {}),
      }),
    );
    return {
      cpu: cpuShare[0]!,
      pss: pss.reduce((a, b) => a + b, 0) / pss.length,
      xvfb: xvfbShare,
      captions: latencies.length,
      alive: alive.every(Boolean),
      load: [load0!, load1!],
      serverPerBot: (serverShare - serverWithoutBots) / bots,
    };
  } finally {
    await h.close();
    pageServer?.close();
  }
}

console.log(
  `# meetings bench: ${seconds}s per step, 2 speaking participants + 1..${maxBots} bots, camera ${camera}, ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores, load ${execFileSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).trim()}`,
);
/** Time to join the Google Meet simulator: POST to the lobby, admission to in_call (recording notice accepted). */
async function simJoinTimes(n: number): Promise<void> {
  const { startMeetSimulator } = await import("../test/support/meet-simulator.js");
  const sim = await startMeetSimulator();
  const h = await startMeetingsHarness({
    browser: values.browser as "headed" | "headless",
    display: values.display,
    googleMeet: { testOrigins: [sim.origin] },
    aloneTimeoutMs: 600_000,
  });
  const toLobby: number[] = [];
  const toCall: number[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const meeting = sim.meeting(`bench-join-${i}`, { consent: true });
      const t0 = Date.now();
      const res = await h.post({
        meetingUrl: `${sim.origin}/${meeting.code}`,
        botName: "Notetaker",
        mode: "transcribe",
      });
      await h.waitFor(res.body.id, (s) => s.state === "in_waiting_room", {
        within: 60_000,
        what: "the lobby",
      });
      const t1 = Date.now();
      meeting.admit();
      await h.waitFor(res.body.id, (s) => s.state === "in_call", { within: 60_000, what: "the call" });
      toLobby.push(t1 - t0);
      toCall.push(Date.now() - t1);
      meeting.end();
      await h.waitFor(res.body.id, (s) => s.state === "ended" || s.state === "fatal", {
        within: 30_000,
        what: "end",
      });
    }
  } finally {
    await h.close();
    await sim.close();
  }
  console.log(
    JSON.stringify({
      simJoins: n,
      browser: values.browser,
      // Launch, page load, name typed, devices set, "Ask to join" (disabled for its first 1.5 s) -> lobby.
      postToLobbyMs: { p50: percentile(toLobby, 50), max: Math.max(...toLobby) },
      // Admitted -> recording notice seen and accepted -> in the call (polls of 200 ms).
      admittedToInCallMs: { p50: percentile(toCall, 50), max: Math.max(...toCall) },
    }),
  );
}

interface Variant {
  label: string;
  flags: string[];
  checkout?: HarnessModule;
  describe?: string;
}

/** `label=--flag --flag=value`: a named set of extra bot flags (empty after `=`: the defaults). */
function parseVariant(text: string): Variant {
  const at = text.indexOf("=");
  if (at <= 0) throw new Error(`--variant label=flags, got ${text}`);
  const flags = text.slice(at + 1).trim();
  return { label: text.slice(0, at), flags: flags ? flags.split(/\s+/) : [] };
}

/** The baseline checkout's harness, loaded from its own tree (its src, its capture script). */
async function baselineVariant(baseline: string): Promise<Variant> {
  const { dir, describe } = baselineCheckout(baseline);
  const checkout = (await import(
    pathToFileURL(join(dir, "test", "integration", "meetings-harness.ts")).href
  )) as HarnessModule;
  return { label: "baseline", flags: [], checkout, describe };
}

const variants = (values.variant ?? []).map(parseVariant);
if (values.baseline !== undefined) {
  if (variants.length === 0) variants.push({ label: "this", flags: [] });
  variants.unshift(await baselineVariant(values.baseline));
}
if (variants.length > 0) {
  const rounds = Number(values.rounds);
  const seen = new Map<string, StepFigures[]>(variants.map((v) => [v.label, []]));
  for (let r = 0; r < rounds; r++)
    for (const v of variants)
      seen.get(v.label)!.push(await step(1, undefined, v.flags, v.label, v.checkout ?? THIS_CHECKOUT));
  const median = (xs: number[]): number => percentile(xs, 50);
  for (const v of variants) {
    const runs = seen.get(v.label)!;
    console.log(
      JSON.stringify({
        summary: v.label,
        ...(v.describe ? { checkout: v.describe } : {}),
        flags: v.flags,
        rounds: runs.length,
        chromiumCpuCores: runs.map((x) => Number(x.cpu.toFixed(3))),
        medianCpuCores: Number(median(runs.map((x) => x.cpu)).toFixed(3)),
        // The bot's whole share: its Chromium and the Xvfb it draws on (1 bot per step).
        medianWithXvfbCores: Number(median(runs.map((x) => x.cpu + x.xvfb)).toFixed(3)),
        medianPssMb: Math.round(median(runs.map((x) => x.pss))),
        // The server's share of the bot (capture, decode, VAD, recognizer), and the bot in all with it.
        serverPerBotCores: runs.map((x) => Number(x.serverPerBot.toFixed(3))),
        medianBotInAllCores: Number(median(runs.map((x) => x.cpu + x.xvfb + x.serverPerBot)).toFixed(3)),
        loadAverages: runs.map((x) => x.load),
        captions: runs.map((x) => x.captions),
        botsAliveAtEnd: runs.map((x) => x.alive),
      }),
    );
  }
} else if (values.compare) {
  await step(1, "headless");
  await step(1, "headed");
} else for (let bots = 1; bots <= maxBots; bots++) await step(bots);
if (simJoins > 0) await simJoinTimes(simJoins);
