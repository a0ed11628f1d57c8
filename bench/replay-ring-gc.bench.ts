/**
 * What a session's replay ring costs the collector (issue 19): the rings of
 * many relayed calls, filled with the events a relayed call emits (caller
 * audio appended and provider deltas, about five a second, as the session
 * log of a soak call shows), built by the real SessionEventChannel. Two
 * ways, side by side in one process: the ring as it is (ReplayBuffer, the
 * event objects) and each event kept as its JSON line instead (the line the
 * channel serializes anyway), an idea for a smaller old generation that
 * this bench measured and turned down (docs/performance.md). Printed: heap
 * used per call after a full collection, and the time of a full
 * (mark-compact) collection of the whole heap: the work each major GC of a
 * loaded relay does for the rings.
 *
 *   node --import tsx bench/replay-ring-gc.bench.ts [--calls 250] [--events 600] [--rounds 7]
 */
import { benchParseArgs } from "./lib/bench-cli.js";
import type { CorrelationState } from "../src/core/event-sequencer.js";
import { NOOP_LOGGER } from "../src/core/logger.js";
import { SessionEventChannel } from "../src/core/session-event-channel.js";
import { fullGc } from "./lib/full-gc.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    calls: { type: "string", default: "250" },
    events: { type: "string", default: "600" },
    rounds: { type: "string", default: "7" },
  },
  strict: true,
});
const calls = Number(values.calls);
const perCall = Number(values.events);
const rounds = Number(values.rounds);

const correlation: CorrelationState = {
  activeCaptureId: undefined,
  activeCaptureTurnId: undefined,
  acceptsOutput: () => true,
  isCancelledItem: () => false,
};
const format = { encoding: "g711_ulaw", sampleRate: 8000, channels: 1 } as const;

/** One call's events through a real channel; `keep` receives each line as the runtime's listeners do. */
function fillCall(keep: ((line: string) => void) | undefined): SessionEventChannel {
  const channel = new SessionEventChannel({
    id: crypto.randomUUID(),
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    source: "telephony",
    replayLimit: keep ? 1 : perCall,
    logger: NOOP_LOGGER,
  });
  if (keep) channel.subscribe((_event, line) => keep(line!));
  let turnId = crypto.randomUUID();
  for (let i = 0; i < perCall; i++) {
    if (i % 120 === 0) turnId = crypto.randomUUID();
    if (i % 2 === 0)
      channel.publish(
        { type: "input.audio.appended", payload: { bytes: 1600, durationMs: 200 } },
        correlation,
      );
    else
      channel.publish(
        {
          type: "output.audio.delta",
          turnId,
          itemId: `item_${i >> 6}`,
          parentId: `resp_${i >> 6}`,
          payload: { format, bytes: 1600 + (i % 7) * 160, durationMs: 200 + (i % 7) * 20 },
        },
        correlation,
      );
  }
  return channel;
}

function measure(
  label: string,
  build: () => unknown,
): { label: string; perCallKB: number; fullGcMs: number } {
  fullGc();
  fullGc();
  const before = process.memoryUsage().heapUsed;
  const held = build();
  fullGc();
  fullGc();
  const heap = process.memoryUsage().heapUsed - before;
  const times: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    fullGc();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  if (!held) throw new Error("nothing held");
  return { label, perCallKB: heap / calls / 1024, fullGcMs: times[times.length >> 1]! };
}

const empty = measure("nothing held (the bench's own heap)", () => [1]);
const objects = measure("ReplayBuffer: the event objects (as it is)", () =>
  Array.from({ length: calls }, () => fillCall(undefined)),
);
const lines = measure("each event's JSON line (not kept)", () =>
  Array.from({ length: calls }, () => {
    const kept: string[] = [];
    const channel = fillCall((line) => kept.push(line));
    return { channel, kept };
  }),
);

console.log(`replay-ring-gc: ${calls} calls x ${perCall} relay events, full GC median of ${rounds}`);
console.log("| rings | heap per call, KB | full GC, ms | full GC over the empty heap's, ms |");
console.log("|---|---|---|---|");
for (const r of [empty, objects, lines])
  console.log(
    `| ${r.label} | ${r.perCallKB.toFixed(1)} | ${r.fullGcMs.toFixed(1)} | ${(r.fullGcMs - empty.fullGcMs).toFixed(1)} |`,
  );
console.log(
  `lines / objects: heap ${(lines.perCallKB / objects.perCallKB).toFixed(2)}x, the rings' part of a full GC ${((lines.fullGcMs - empty.fullGcMs) / (objects.fullGcMs - empty.fullGcMs)).toFixed(2)}x`,
);
