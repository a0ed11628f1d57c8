/**
 * The cost of sending a phone caller's audio to a realtime provider, alone:
 * `--calls` OpenAI Realtime sessions (the real `connectOpenAiRealtime`, over
 * loopback WebSockets) each given one 20 ms u-law frame every 20 ms, as the
 * relay gives them, with `inputAppendMs` 0 (one append per frame, as before),
 * 60 (the default of talk.input.providerAppendMs) and 100 (LiveKit Agents'
 * piece). The provider stand-in (bench/lib/realtime-load-provider.ts) runs in
 * a child process, so the figure is this process's CPU only: the session's
 * work, ws framing and the socket writes, plus the shared frame timer. Rounds
 * alternate the settings so a shared machine's load falls on all alike.
 *
 *   node --import tsx bench/provider-append.bench.ts [--calls 100] [--seconds 5] [--rounds 3]
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { connectOpenAiRealtime } from "../src/providers/openai-realtime/openai-realtime-session.js";
import type { RealtimeVoiceSession } from "../src/core/provider-types.js";
import { ULAW_8K } from "../src/core/talk-types.js";
import { benchArgs, num, sleep } from "./lib/bench-args.js";

const args = benchArgs({ calls: "100", seconds: "5", rounds: "3", child: "" });
const SETTINGS = [0, 60, 100];

if (args.child === "provider") {
  // The stand-in, alone in this process: prints its port, runs until the parent ends it.
  const { RealtimeLoadProvider } = await import("./lib/realtime-load-provider.js");
  const { LatencyLog } = await import("./lib/frame-stamp.js");
  const provider = new RealtimeLoadProvider(new LatencyLog(), new LatencyLog());
  console.log(`port ${await provider.listen()}`);
} else {
  await main();
}

async function startProvider(): Promise<{ port: number; stop: () => void }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", fileURLToPath(import.meta.url), "--child", "provider"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      const m = /port (\d+)/.exec(String(chunk));
      if (m) resolve(Number(m[1]));
    });
    child.once("exit", (code) => reject(new Error(`provider stand-in exited (${code})`)));
  });
  return { port, stop: () => child.kill() };
}

async function openSessions(port: number, calls: number, appendMs: number): Promise<RealtimeVoiceSession[]> {
  return Promise.all(
    Array.from({ length: calls }, () =>
      connectOpenAiRealtime(
        { apiKey: "sk-bench", url: `ws://127.0.0.1:${port}/v1/realtime` },
        {
          instructions: "bench",
          tools: [],
          inputFormat: ULAW_8K,
          outputFormat: ULAW_8K,
          signal: new AbortController().signal,
          inputAppendMs: appendMs,
        },
        () => {},
      ),
    ),
  );
}

/** CPU of this process per frame given to a session, µs, over `seconds` of 50 frames/s per session. */
async function measure(sessions: RealtimeVoiceSession[], seconds: number): Promise<number> {
  const frame = new Uint8Array(160).fill(0xff);
  const base64 = Buffer.from(frame).toString("base64");
  let frames = 0;
  const tick = (): void => {
    for (const s of sessions) s.appendAudio(frame, base64);
    frames += sessions.length;
  };
  // Warm-up second (JIT), then the window.
  let timer = setInterval(tick, 20);
  await sleep(1000);
  clearInterval(timer);
  frames = 0;
  const cpu0 = process.cpuUsage();
  timer = setInterval(tick, 20);
  await sleep(seconds * 1000);
  clearInterval(timer);
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / frames;
}

async function main(): Promise<void> {
  const calls = num(args.calls, "calls");
  const seconds = num(args.seconds, "seconds");
  const rounds = num(args.rounds, "rounds");
  const provider = await startProvider();
  const results = new Map<number, number[]>(SETTINGS.map((ms) => [ms, []]));
  try {
    for (let round = 0; round < rounds; round++) {
      // Rotated each round: no setting always runs first.
      const order = SETTINGS.map((_, i) => SETTINGS[(i + round) % SETTINGS.length]!);
      for (const appendMs of order) {
        const sessions = await openSessions(provider.port, calls, appendMs);
        const perFrame = await measure(sessions, seconds);
        await Promise.all(sessions.map((s) => s.close()));
        results.get(appendMs)!.push(perFrame);
        console.log(
          `round ${round + 1}: inputAppendMs ${appendMs}: ${perFrame.toFixed(2)} µs of CPU per frame`,
        );
        await sleep(500);
      }
    }
  } finally {
    provider.stop();
  }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(results.get(0)!);
  console.log(
    `\n${calls} sessions, one 20 ms u-law frame each every 20 ms, ${rounds} rounds of ${seconds} s`,
  );
  console.log(
    "| inputAppendMs | appends a second per call | µs of CPU per frame (median) | / every frame on its own |",
  );
  console.log("|---|---|---|---|");
  for (const ms of SETTINGS) {
    const m = median(results.get(ms)!);
    const perSecond = ms === 0 ? 50 : 1000 / ms;
    console.log(`| ${ms} | ${perSecond.toFixed(1)} | ${m.toFixed(2)} | ${(m / base).toFixed(2)}x |`);
  }
  console.log(
    JSON.stringify({
      bench: "provider-append",
      calls,
      usPerFrame: Object.fromEntries(SETTINGS.map((ms) => [ms, Number(median(results.get(ms)!).toFixed(2))])),
    }),
  );
}
