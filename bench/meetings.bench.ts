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
 * Run: npm run bench:meetings -- --seconds 40 --max-bots 3
 * The bot camera: `--camera card` (each bot's page asks the room for a camera,
 * `video=on`, and the bot sends its card), against `--camera off` (default).
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { TalkEvent } from "../src/core/talk-events.js";
import { speechWav, startMeetingsHarness } from "../test/integration/meetings-harness.js";

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "40" },
    "max-bots": { type: "string", default: "3" },
    camera: { type: "string", default: "off" },
    // Extra Chromium flags for the bots, space-separated (meetings.chromiumArgs).
    "bot-flags": { type: "string", default: "" },
  },
});
const seconds = Number(values.seconds);
const maxBots = Number(values["max-bots"]);
if (!(seconds >= 10) || !(maxBots >= 1)) throw new Error("--seconds >= 10 and --max-bots >= 1");
const camera = values.camera;
if (camera !== "off" && camera !== "card") throw new Error("--camera off|card");
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

function botRoot(botId: string): number {
  const line = processTable().find(
    (p) => p.args.includes(`talkgate-bot-${botId}-`) && !p.args.includes("--type="),
  );
  if (!line) throw new Error(`no browser for bot ${botId}`);
  return line.pid;
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

async function step(bots: number): Promise<void> {
  const h = await startMeetingsHarness({
    aloneTimeoutMs: 600_000,
    utteranceSilenceMs: SILENCE_MS,
    maxBots: 8,
    chromiumArgs: botFlags,
  });
  try {
    const room = `bench-${bots}`;
    await h.participant(room, "Alice", speechWav(h.dir, "goforward.raw", 2.5));
    await h.participant(room, "Bob", speechWav(h.dir, "something.raw", 3.5));
    const ended = new Map<string, number>();
    const latencies: number[] = [];
    let measuring = false;
    h.app.runtime.subscribeAll((e: TalkEvent) => {
      if (e.type === "turn.ended" && e.turnId) ended.set(e.turnId, Date.parse(e.timestamp));
      if (e.type === "transcript.done" && e.turnId && measuring && (e.payload as { text?: string }).text) {
        const end = ended.get(e.turnId);
        if (end !== undefined) latencies.push(Date.parse(e.timestamp) - end + SILENCE_MS);
      }
    });
    const ids: string[] = [];
    for (let i = 0; i < bots; i++) {
      const res = await h.post({
        meetingUrl: camera === "card" ? `${h.roomUrl(room)}?video=on` : h.roomUrl(room),
        botName: `Bot${i + 1}`,
        mode: "transcribe",
        camera,
      });
      ids.push(res.body.id);
    }
    for (const id of ids)
      await h.waitFor(id, (s) => s.state === "in_call" && s.participants.includes("Alice"));
    await sleep(5000); // capture and decoders settle
    const roots = ids.map(botRoot);
    const cpu0 = roots.map((r) => cpuTicks(tree(r)));
    // The server: this Node process (capture sockets, Opus decode, VAD, floor) and its pocketsphinx children.
    const serverCpu = (): number =>
      cpuTicks([process.pid], true) +
      cpuTicks(
        processTable()
          .filter((p) => p.ppid === process.pid && p.args.includes("pocketsphinx"))
          .map((p) => p.pid),
      );
    const node0 = cpuTicks([process.pid]);
    const srv0 = serverCpu();
    const load0 = readFileSync("/proc/loadavg", "utf8").split(" ")[0];
    const t0 = Date.now();
    measuring = true;
    const mem: { pss: number; rss: number }[] = [];
    while (Date.now() - t0 < seconds * 1000) {
      await sleep(5000);
      for (const r of roots) mem.push(memoryMb(tree(r)));
    }
    measuring = false;
    const wall = (Date.now() - t0) / 1000;
    const cpuShare = roots.map((r, i) => (cpuTicks(tree(r)) - cpu0[i]!) / TICK / wall);
    const serverShare = (serverCpu() - srv0) / TICK / wall;
    const nodeShare = (cpuTicks([process.pid]) - node0) / TICK / wall;
    const load1 = readFileSync("/proc/loadavg", "utf8").split(" ")[0];
    const pss = mem.map((m) => m.pss);
    const rss = mem.map((m) => m.rss);
    const serverMem = memoryMb([process.pid]);
    const sttMem = memoryMb(
      processTable()
        .filter((p) => p.ppid === process.pid && p.args.includes("pocketsphinx"))
        .map((p) => p.pid),
    );
    console.log(
      JSON.stringify({
        bots,
        camera,
        botFlags,
        chromiumPerBotPssMb: {
          mean: Math.round(pss.reduce((a, b) => a + b, 0) / pss.length),
          max: Math.round(Math.max(...pss)),
        },
        chromiumPerBotRssMb: { max: Math.round(Math.max(...rss)) },
        chromiumPerBotCpuCores: cpuShare.map((c) => Number(c.toFixed(3))),
        serverProcessPssMb: Math.round(serverMem.pss),
        sttDecodersPssMb: Math.round(sttMem.pss),
        serverCpuCoresAllBots: Number(serverShare.toFixed(3)),
        // The split: this Node process (capture sockets, Opus decode, VAD, floor, the rest of the harness,
        // which also drives the participant browsers over CDP) and the STT decoder processes.
        serverNodeCpuCores: Number(nodeShare.toFixed(3)),
        sttCpuCores: Number((serverShare - nodeShare).toFixed(3)),
        loadAverage: [load0, load1],
        captions: latencies.length,
        captionLatencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95) },
      }),
    );
  } finally {
    await h.close();
  }
}

console.log(
  `# meetings bench: ${seconds}s per step, 2 speaking participants + 1..${maxBots} bots, camera ${camera}, ${execFileSync("nproc", { encoding: "utf8" }).trim()} cores, load ${execFileSync("cat", ["/proc/loadavg"], { encoding: "utf8" }).trim()}`,
);
for (let bots = 1; bots <= maxBots; bots++) await step(bots);
