// The cost of the Redis coordinator on the relay path (not asserted by tests):
//   node --import tsx bench/cluster-relay.bench.ts [--frames 4000] [--rounds 3]
//   (REDIS_URL overrides redis://127.0.0.1:6379)
// The whole app (createApp: gateway, runtime, coordinator, binder, jobs) runs
// once with the in-process coordinator and once with the Redis one; a real
// WebSocket client streams 20 ms PCM frames (16 kHz, 640 bytes) through
// talk.session.appendAudio into an stt-tts session whose STT only counts the
// samples, so the gateway + core relay path is what is measured. Rounds
// alternate backends. Also counted: Redis commands the server issued while
// the frames flowed (heartbeat and lease renewal only, if nothing per frame
// touches Redis).
import { randomBytes } from "node:crypto";
import { benchParseArgs } from "./lib/bench-cli.js";
import { Redis } from "ioredis";
import { pino } from "pino";
import { createApp } from "../src/app.js";
import { TalkClient } from "../src/client/talk-client.js";
import { validateConfig } from "../src/config/load-config.js";
import type { SttProvider, SttStream, SttStreamOptions, TalkProvider } from "../src/core/provider-types.js";
import { createLocalProviders } from "../src/providers/index.js";

const { values } = benchParseArgs(import.meta.url, {
  options: { frames: { type: "string", default: "4000" }, rounds: { type: "string", default: "3" } },
});
const FRAMES = Number(values.frames);
const ROUNDS = Number(values.rounds);
const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const FORMAT = { encoding: "pcm16" as const, sampleRate: 16_000, channels: 1 };

/** STT that only counts samples: the provider's cost is not what this bench is about. */
class CountingStt implements SttProvider {
  readonly kind = "stt" as const;
  readonly id = "counting-stt";
  readonly label = "Counting STT (bench)";
  readonly capabilities = { local: true, streaming: true, inputFormats: [FORMAT] };
  samples = 0;
  async health(): Promise<{ ok: boolean }> {
    return { ok: true };
  }
  startStream(_options: SttStreamOptions): SttStream {
    return {
      write: (pcm) => {
        this.samples += pcm.length;
      },
      finish: async () => ({ text: "" }),
    };
  }
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

async function commandsProcessed(redis: Redis): Promise<number> {
  const info = await redis.info("stats");
  return Number(/total_commands_processed:(\d+)/.exec(info)?.[1] ?? NaN);
}

interface RoundResult {
  framesPerSec: number;
  p50: number;
  p99: number;
  redisCommands: number | undefined;
}

async function round(backend: "in-process" | "redis", probe: Redis): Promise<RoundResult> {
  const keyPrefix = `talkgate-bench:${randomBytes(4).toString("hex")}:`;
  const loaded = validateConfig({
    server: { port: 0 },
    dataDir: `/tmp/talkgate-bench-${process.pid}`,
    log: { level: "silent" },
    // The per-connection rate limit protects the server from one client; here the client is the load.
    gateway: { rateLimit: { requestsPerSecond: 1_000_000, burst: 1_000_000 } },
    talk: { provider: "counting-stt" },
    ...(backend === "redis" ? { redis: { url, keyPrefix } } : {}),
  });
  const stt = new CountingStt();
  const providers: TalkProvider[] = [stt, ...createLocalProviders({ stt: false })];
  const app = await createApp(loaded, { providers, logger: pino({ level: "silent" }) });
  if (app.cluster.coordinator.backend !== backend) throw new Error(`expected the ${backend} coordinator`);
  const { urls } = await app.listen({ port: 0 });
  const client = await TalkClient.connect(`${(urls[0] as string).replace(/^http/, "ws")}/talk`);
  try {
    const { sessionId } = await client.request("talk.session.create", {
      mode: "stt-tts",
      transport: "managed-room",
      inputFormat: FORMAT,
    });
    await client.request("talk.session.startTurn", { sessionId });
    const audioBase64 = Buffer.alloc(640, 1).toString("base64");
    for (let i = 0; i < 200; i++)
      await client.request("talk.session.appendAudio", { sessionId, audioBase64 }); // warm-up

    const before = backend === "redis" ? await commandsProcessed(probe) : 0;
    // Latency: one frame at a time, request -> response.
    const latencies: number[] = [];
    for (let i = 0; i < FRAMES; i++) {
      const t0 = performance.now();
      await client.request("talk.session.appendAudio", { sessionId, audioBase64 });
      latencies.push(performance.now() - t0);
    }
    // Throughput: 32 frames in flight, as a client streaming several calls would.
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < FRAMES) {
          next += 1;
          await client.request("talk.session.appendAudio", { sessionId, audioBase64 });
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    const after = backend === "redis" ? await commandsProcessed(probe) : 0;
    latencies.sort((x, y) => x - y);
    return {
      framesPerSec: FRAMES / elapsed,
      p50: pct(latencies, 50),
      p99: pct(latencies, 99),
      // Minus the two INFO calls of this probe.
      redisCommands: backend === "redis" ? after - before - 1 : undefined,
    };
  } finally {
    await client.close();
    await app.close();
    if (backend === "redis") await deleteKeys(probe, keyPrefix);
  }
}

async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [nextCursor, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
    cursor = nextCursor;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== "0");
}

const probe = new Redis(url);
const results: Record<string, RoundResult[]> = { "in-process": [], redis: [] };
try {
  for (let r = 0; r < ROUNDS; r++) {
    for (const backend of ["in-process", "redis"] as const)
      results[backend]?.push(await round(backend, probe));
  }
} finally {
  probe.disconnect();
}
const median = (xs: number[]): number => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? NaN;
console.log(
  `appendAudio through the gateway, ${FRAMES} frames of 20 ms per phase, ${ROUNDS} rounds (medians):`,
);
for (const [backend, rs] of Object.entries(results)) {
  const cmds = rs.map((x) => x.redisCommands).filter((x): x is number => x !== undefined);
  console.log(
    `  ${backend.padEnd(10)} ${median(rs.map((x) => x.framesPerSec)).toFixed(0)} frames/s (32 in flight; rounds ${rs.map((x) => x.framesPerSec.toFixed(0)).join(", ")}); ` +
      `latency p50 ${median(rs.map((x) => x.p50)).toFixed(3)} ms, p99 ${median(rs.map((x) => x.p99)).toFixed(3)} ms` +
      (cmds.length > 0 ? `; Redis commands during the ${2 * FRAMES} frames: ${cmds.join(", ")}` : ""),
  );
}
process.exit(0);
