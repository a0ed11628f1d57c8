/**
 * What Talk API clients that never read cost the server's memory: five
 * clients each ask for talk.speak answers (256 KiB of audio, about 350 KB of
 * JSON each) and never read one. The server (the whole app, createApp, in a
 * process of its own with a TTS that answers at once, so only the queues
 * grow) is sampled for RSS (/proc/<pid>/status) before, at its peak while
 * the clients ask (paced: 10 requests per client every 250 ms), and 5 s
 * after they are done. Two configurations side by side
 * in one run: the slow-reader bounds of issue 38 at their defaults
 * (gateway.maxBufferedBytesPerClient 32 MiB, gateway.maxBufferedBytesTotal
 * 64 MiB, a cut socket terminated) and with those two bounds off (1 TiB:
 * only the per-socket 32 MiB, as before). Each with five tokens (one client
 * each) and with one token for all five.
 *
 *   node --import tsx bench/slow-readers.bench.ts [--requests 200] [--rounds 1] [--peer-root DIR]
 *
 * `--peer-root`: a checkout of the code before the bounds (e.g. `git worktree
 * add --detach /tmp/peer <commit>` with this checkout's node_modules linked
 * in), run as a third server: its slow readers are closed (a closing
 * handshake behind the unread queue) rather than cut.
 *
 * Linux only (/proc).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import WebSocket from "ws";
import type { createApp as CreateApp } from "../src/app.js";
import type { validateConfig as ValidateConfig } from "../src/config/load-config.js";
import { benchArgs, num, sleep } from "./lib/bench-args.js";

const CLIENTS = 5;
const TIB = 1024 ** 4;

interface Bounds {
  perClient: number;
  total: number;
  /** Another checkout's sources to run instead of this one's (a peer: the code before issue 38). */
  root?: string;
}

/** The server: the whole app, five write tokens, a TTS that answers 256 KiB at once. */
async function serve(bounds: Bounds): Promise<void> {
  const src = bounds.root ? join(bounds.root, "src") : join(import.meta.dirname, "..", "src");
  const { createApp } = (await import(join(src, "app.ts"))) as { createApp: typeof CreateApp };
  const { validateConfig } = (await import(join(src, "config", "load-config.ts"))) as {
    validateConfig: typeof ValidateConfig;
  };
  const { pino } = await import("pino");
  const audio = new Uint8Array(256 * 1024).fill(7);
  const tts = {
    kind: "tts" as const,
    id: "instant-tts",
    label: "instant",
    capabilities: { streaming: true, local: true },
    health: async () => ({ ok: true }),
    async *synthesize() {
      // Both shapes of a chunk, so a peer checkout from before typed audio (chunk.data) reads it too.
      const format = { encoding: "pcm16" as const, sampleRate: 16_000, channels: 1 };
      yield { kind: "pcm" as const, samples: new Int16Array(audio.buffer), format, data: audio };
    },
  };
  const loaded = validateConfig({
    server: { host: "127.0.0.1", port: 0 },
    auth: {
      tokens: Array.from({ length: CLIENTS }, (_, i) => ({
        name: `client${i}`,
        token: `slow-reader-token-${i}-0123456789`,
        scopes: ["write"],
      })),
    },
    dataDir: mkdtempSync(join(tmpdir(), "talkgate-slow-readers-")),
    // The code before issue 38 has no such keys (its config refuses unknown ones).
    ...(bounds.root
      ? {}
      : { gateway: { maxBufferedBytesPerClient: bounds.perClient, maxBufferedBytesTotal: bounds.total } }),
  });
  const app = await createApp(loaded, { providers: [tts], logger: pino({ level: "error" }) });
  const { port } = await app.gateway.listen();
  console.log(JSON.stringify({ port }));
}

async function main(): Promise<void> {
  const args = benchArgs({ requests: "200", rounds: "1", "peer-root": "" });
  const requests = Math.trunc(num(args.requests, "requests"));
  const rounds = Math.trunc(num(args.rounds, "rounds"));
  const configs = [
    { name: "bounds on (defaults)", bounds: { perClient: 32 * 1024 ** 2, total: 64 * 1024 ** 2 } },
    { name: "bounds off (per socket only)", bounds: { perClient: TIB, total: TIB } },
    ...(args["peer-root"]
      ? [{ name: "before issue 38 (peer)", bounds: { perClient: TIB, total: TIB, root: args["peer-root"] } }]
      : []),
  ];
  const rows: string[] = [];
  for (let r = 0; r < rounds; r++) {
    for (const tokens of [CLIENTS, 1]) {
      // Interleaved: each scenario runs both configurations back to back.
      for (const config of configs) {
        const f = await measure(config.bounds, tokens, requests);
        rows.push(
          `| ${config.name} | ${tokens} | ${mb(f.idle)} | ${mb(f.peak)} | +${mb(f.peak - f.idle)} | ${mb(f.after)} | ${mb(f.queuedPeak)} | ${f.cuts} |`,
        );
      }
    }
  }
  console.log(`slow readers: ${CLIENTS} never-reading /talk clients, ${requests} talk.speak requests each`);
  console.log(
    "| server | tokens | RSS idle MB | RSS peak MB | growth MB | RSS 5 s after MB | queued peak MB | cut (by bound) |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  for (const row of rows) console.log(row);
}

const peakOf = (a: number, b: number): number => (Number.isNaN(a) ? b : Number.isNaN(b) ? a : Math.max(a, b));

const mb = (bytes: number): string => (Number.isNaN(bytes) ? "-" : (bytes / 1024 ** 2).toFixed(0));

function rss(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : NaN;
}

/** The slow-reader figures of /metrics (absent before issue 38: NaN and "-"). */
async function scrape(port: number): Promise<{ queued: number; cuts: string }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const queued = Number(/^talkgate_ws_queued_bytes (\S+)$/m.exec(text)?.[1] ?? NaN);
  const cuts = [...text.matchAll(/^talkgate_ws_slow_consumers_total\{limit="([^"]+)"\} (\S+)$/gm)].map(
    (m) => `${m[2]} ${m[1]}`,
  );
  return { queued, cuts: cuts.join(", ") || "-" };
}

async function start(bounds: Bounds): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", import.meta.filename, "--serve", JSON.stringify(bounds)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: child.stdout! });
  for await (const line of lines) {
    if (line.startsWith("{")) return { child, port: (JSON.parse(line) as { port: number }).port };
  }
  throw new Error("the server exited before it listened");
}

async function measure(
  bounds: Bounds,
  tokens: number,
  requests: number,
): Promise<{ idle: number; peak: number; after: number; queuedPeak: number; cuts: string }> {
  const { child, port } = await start(bounds);
  const pid = child.pid!;
  const sockets: WebSocket[] = [];
  try {
    await sleep(3000);
    const idle = rss(pid);
    for (let i = 0; i < CLIENTS; i++) {
      const token = `slow-reader-token-${i % tokens}-0123456789`;
      const ws = new WebSocket(`ws://127.0.0.1:${port}/talk`, {
        headers: { authorization: `Bearer ${token}` },
      });
      ws.on("error", () => {});
      await new Promise((resolve, reject) => {
        ws.once("open", resolve);
        ws.once("error", reject);
      });
      // Never reads: its TCP socket is paused, so the kernel's buffers fill and then the server's queue grows.
      (ws as unknown as { _socket: { pause(): void } })._socket.pause();
      sockets.push(ws);
    }
    let peak = idle;
    let queuedPeak = NaN;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rss(pid));
    }, 50);
    // Paced (10 requests per client every 250 ms, within the rate limit), so what grows is the queues,
    // not the answers being built at once.
    for (let sent = 0; sent < requests; sent += 10) {
      for (const ws of sockets)
        for (let i = sent; i < Math.min(requests, sent + 10); i++)
          if (ws.readyState === WebSocket.OPEN)
            ws.send(
              JSON.stringify({ type: "req", id: `s${i}`, method: "talk.speak", params: { text: "hi" } }),
            );
      await sleep(250);
      queuedPeak = peakOf(queuedPeak, (await scrape(port)).queued);
    }
    await sleep(1000);
    queuedPeak = peakOf(queuedPeak, (await scrape(port)).queued);
    await sleep(5000);
    clearInterval(sampler);
    const after = rss(pid);
    const { cuts } = await scrape(port);
    return { idle, peak, after, queuedPeak, cuts };
  } finally {
    for (const ws of sockets) ws.terminate();
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
  }
}

if (process.argv.includes("--serve")) {
  await serve(JSON.parse(process.argv[process.argv.indexOf("--serve") + 1]!) as Bounds);
} else {
  await main();
}
