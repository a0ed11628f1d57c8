/**
 * Cluster figures on loopback against the local Redis (not asserted by tests):
 *   node --import tsx bench/cluster.bench.ts   (REDIS_URL overrides redis://127.0.0.1:6379)
 * 1. cross-worker command latency: sendCommand on B -> handler runs on A -> reply on B
 * 2. event fan-out: A publishes, a subscriber on B receives; events/s and publish->delivery delay
 */
import { randomBytes, randomUUID } from "node:crypto";
import { Redis } from "ioredis";
import { RedisCoordinator } from "../src/cluster/redis-coordinator.js";
import type { TalkEvent } from "../src/core/talk-events.js";

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const keyPrefix = `talkgate-bench:${randomBytes(4).toString("hex")}:`;

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
const ms = (n: number): string => n.toFixed(3);

const a = new RedisCoordinator({ redisUrl: url, keyPrefix, workerId: "bench-a" });
const b = new RedisCoordinator({ redisUrl: url, keyPrefix, workerId: "bench-b" });
await Promise.all([a.start(), b.start()]);
try {
  const sid = `bench-${randomUUID()}`;
  await a.claim(sid);
  let handlerAt = 0;
  a.onCommand(() => {
    handlerAt = performance.now();
    return true;
  });
  for (let i = 0; i < 100; i++) await b.sendCommand(sid, { verb: "cancelOutput" }); // warm-up
  const toHandler: number[] = [];
  const roundTrip: number[] = [];
  for (let i = 0; i < 1000; i++) {
    const t0 = performance.now();
    await b.sendCommand(sid, { verb: "cancelTurn", params: { reason: "bench" } });
    roundTrip.push(performance.now() - t0);
    toHandler.push(handlerAt - t0);
  }
  toHandler.sort((x, y) => x - y);
  roundTrip.sort((x, y) => x - y);
  console.log(
    `cancel B->A handler (1000 commands): p50 ${ms(pct(toHandler, 50))} ms, p99 ${ms(pct(toHandler, 99))} ms`,
  );
  console.log(
    `cancel round trip B->A->B:        p50 ${ms(pct(roundTrip, 50))} ms, p99 ${ms(pct(roundTrip, 99))} ms`,
  );

  const N = 20_000;
  const esid = `bench-events-${randomUUID()}`;
  await a.claim(esid);
  const sentAt = new Float64Array(N + 1);
  const delays: number[] = [];
  let done!: () => void;
  const finished = new Promise<void>((r) => (done = r));
  b.subscribeEvents(esid, 0, (e) => {
    delays.push(performance.now() - (sentAt[e.seq] ?? 0));
    if (e.seq === N) done();
  });
  await new Promise((r) => setTimeout(r, 200));
  const base = {
    id: "",
    type: "transcript.delta",
    sessionId: esid,
    turnId: "t",
    timestamp: new Date().toISOString(),
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    payload: { role: "assistant", text: "word" },
  };
  const t0 = performance.now();
  // Paced in bursts of 100 per tick, like a busy session, rather than one synchronous flood.
  for (let seq = 1; seq <= N; seq++) {
    sentAt[seq] = performance.now();
    a.publishEvent({ ...base, id: `e${seq}`, seq } as TalkEvent);
    if (seq % 100 === 0) await new Promise((r) => setImmediate(r));
  }
  await finished;
  const elapsed = (performance.now() - t0) / 1000;
  delays.sort((x, y) => x - y);
  console.log(
    `event fan-out A->B (${N} events): ${Math.round(N / elapsed)} events/s, delay p50 ${ms(pct(delays, 50))} ms, p99 ${ms(pct(delays, 99))} ms`,
  );

  // Delay at a steady, realistic rate (one session's captions and metrics): 2000 events, ~1 per ms.
  const P = 2000;
  const psid = `bench-paced-${randomUUID()}`;
  await a.claim(psid);
  const pacedSent = new Float64Array(P + 1);
  const pacedDelays: number[] = [];
  let pacedDone!: () => void;
  const pacedFinished = new Promise<void>((r) => (pacedDone = r));
  b.subscribeEvents(psid, 0, (e) => {
    pacedDelays.push(performance.now() - (pacedSent[e.seq] ?? 0));
    if (e.seq === P) pacedDone();
  });
  await new Promise((r) => setTimeout(r, 200));
  for (let seq = 1; seq <= P; seq++) {
    pacedSent[seq] = performance.now();
    a.publishEvent({ ...base, sessionId: psid, id: `p${seq}`, seq } as TalkEvent);
    await new Promise((r) => setTimeout(r, 1));
  }
  await pacedFinished;
  pacedDelays.sort((x, y) => x - y);
  console.log(
    `event delay at ~1000 events/s (${P} events): p50 ${ms(pct(pacedDelays, 50))} ms, p99 ${ms(pct(pacedDelays, 99))} ms`,
  );
} finally {
  await Promise.allSettled([a.close(), b.close()]);
  const r = new Redis(url);
  let cursor = "0";
  do {
    const [next, keys] = await r.scan(cursor, "MATCH", `${keyPrefix}*`, "COUNT", 500);
    cursor = next;
    if (keys.length) await r.unlink(...keys);
  } while (cursor !== "0");
  r.disconnect();
}
