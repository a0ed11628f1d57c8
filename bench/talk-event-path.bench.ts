/**
 * What one Talk event costs on its whole path in a server (issue 19): the sequencer's envelope, its JSON line,
 * the replay ring, the session's JSONL log on disk and the runtime's listeners (metrics, usage ledger, the
 * cluster binder), measured as CPU of this process per event.
 *
 * The app is the real one on its embedded defaults (`createApp`, a temporary data dir), and the events are what a
 * relayed phone call emits most: `input.audio.appended` (five a second all call long) and, inside a turn,
 * `output.audio.delta` (one per 200 ms of answer). Sessions are interleaved as the relay's are, so the
 * sequencer and the listeners see many sessions' events in turn rather than one hot loop.
 *
 *   node --import tsx bench/talk-event-path.bench.ts [--sessions 100] [--events 200000] [--rounds 5]
 *
 * Prints, per round and as medians: µs of CPU per event on the whole path, and the envelope alone (the
 * sequencer with the same inputs, no log), so a change to either shows in the same run.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchParseArgs } from "./lib/bench-cli.js";
import { createApp } from "../src/app.js";
import { validateConfig } from "../src/config/load-config.js";
import { EventSequencer } from "../src/core/event-sequencer.js";
import type { CorrelationState } from "../src/core/event-sequencer.js";
import type { TalkSession } from "../src/core/session-types.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    sessions: { type: "string", default: "100" },
    events: { type: "string", default: "200000" },
    rounds: { type: "string", default: "5" },
  },
});
const sessionCount = positive("sessions");
const ULAW = { encoding: "g711_ulaw", sampleRate: 8000, channels: 1 } as const;
const eventCount = positive("events");
const rounds = positive("rounds");

function positive(name: keyof typeof values): number {
  const n = Number(values[name]);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer`);
  return n;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? Number.NaN;
}

function cpuMicros(): number {
  const u = process.cpuUsage();
  return u.user + u.system;
}

const dataDir = mkdtempSync(join(tmpdir(), "talkgate-event-bench-"));
const app = await createApp(validateConfig({ dataDir, log: { level: "warn" } }));

function openSessions(): { session: TalkSession; turnId: string }[] {
  return Array.from({ length: sessionCount }, (_, i) => {
    const session = app.runtime.createSession({
      mode: "realtime",
      transport: "gateway-relay",
      brain: "agent-consult",
      owner: "gateway",
      provider: "openai",
      source: "telephony",
      metadata: { surface: "phone", carrier: "bench", callSid: `CA${i}` },
    });
    return { session, turnId: session.startTurn().id };
  });
}

/** The whole path: every event through `session.emit`, as the pipelines emit them. */
function wholePath(): number {
  const calls = openSessions();
  const before = cpuMicros();
  for (let i = 0; i < eventCount; i++) {
    const call = calls[i % sessionCount]!;
    if (i % 3 === 2) {
      call.session.emit({
        type: "output.audio.delta",
        turnId: call.turnId,
        itemId: "item_bench",
        parentId: "resp_bench",
        payload: { format: ULAW, bytes: 1600, durationMs: 200 },
      });
    } else {
      call.session.emit({ type: "input.audio.appended", payload: { bytes: 1600, durationMs: 200 } });
    }
  }
  const perEvent = (cpuMicros() - before) / eventCount;
  for (const call of calls) void call.session.close("bench");
  return perEvent;
}

/** The envelope alone: one sequencer per session, the same inputs, nothing written. */
function envelopeOnly(): number {
  const state: CorrelationState = {
    activeCaptureId: undefined,
    activeCaptureTurnId: undefined,
    acceptsOutput: () => true,
    isCancelledItem: () => false,
  };
  const sequencers = Array.from(
    { length: sessionCount },
    (_, i) =>
      new EventSequencer({
        sessionId: `bench-${i}`,
        mode: "realtime",
        transport: "gateway-relay",
        brain: "agent-consult",
        provider: "openai",
        source: "telephony",
      }),
  );
  let kept = 0;
  const before = cpuMicros();
  for (let i = 0; i < eventCount; i++) {
    const sequencer = sequencers[i % sessionCount]!;
    const event =
      i % 3 === 2
        ? sequencer.sequence(
            {
              type: "output.audio.delta",
              turnId: "turn-bench",
              itemId: "item_bench",
              parentId: "resp_bench",
              payload: { format: ULAW, bytes: 1600, durationMs: 200 },
            },
            state,
          )
        : sequencer.sequence(
            { type: "input.audio.appended", payload: { bytes: 1600, durationMs: 200 } },
            state,
          );
    if (event) kept += 1;
  }
  const perEvent = (cpuMicros() - before) / eventCount;
  if (kept !== eventCount) throw new Error(`the sequencer dropped ${eventCount - kept} events`);
  return perEvent;
}

const whole: number[] = [];
const envelope: number[] = [];
console.log(`${sessionCount} sessions, ${eventCount} events a round, ${rounds} rounds (the first warms up)`);
for (let round = 0; round <= rounds; round++) {
  const w = wholePath();
  const e = envelopeOnly();
  if (round === 0) continue;
  whole.push(w);
  envelope.push(e);
  console.log(`round ${round}: whole path ${w.toFixed(2)} µs/event, envelope ${e.toFixed(2)} µs/event`);
}
console.log(`| figure (median of ${rounds}) | µs of CPU per event |`);
console.log(`|---|---|`);
console.log(
  `| whole path (emit: envelope, JSON, replay, JSONL log, listeners) | ${median(whole).toFixed(2)} |`,
);
console.log(`| envelope alone (EventSequencer.sequence) | ${median(envelope).toFixed(2)} |`);
console.log(
  JSON.stringify({ bench: "talk-event-path", wholeMicros: median(whole), envelopeMicros: median(envelope) }),
);
await app.close();
rmSync(dataDir, { recursive: true, force: true });
