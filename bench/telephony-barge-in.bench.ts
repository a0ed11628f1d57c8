/**
 * Barge-in latency: the realtime provider reports caller speech
 * (input_audio_buffer.speech_started) while an answer streams, and the relay
 * must send Twilio `clear` at once. Timed in the load generator from sending
 * speech_started to receiving clear (both sockets on loopback, one clock),
 * with background calls streaming 50 frames/s each way. Goal: p99 < 5 ms.
 *
 *   node --import tsx bench/telephony-barge-in.bench.ts [--calls 50] [--rounds 300]
 */
import { benchArgs, fmt, num, sleep } from "./lib/bench-args.js";
import { benchTarget } from "./lib/bench-target.js";
import { sessionLogLatencies } from "./lib/session-log-latency.js";

const args = benchArgs({ calls: "50", rounds: "300" });
const calls = num(args.calls, "calls");
const rounds = num(args.rounds, "rounds");
const target = await benchTarget(args);
const { load } = target;
try {
  await load.addCalls(calls);
  load.flow(true, true);
  await sleep(1000);
  let missed = 0;
  for (let r = 0; r < rounds; r++) {
    const call = load.calls[r % load.calls.length]!;
    const conn = load.provider.byCall.get(call.idx)!;
    const clears = call.clears;
    const cancels = load.provider.cancels;
    load.provider.speechStarted(conn);
    const deadline = performance.now() + 1000;
    // Polled with a timer, not spun: the latency is taken when `clear` arrives (TelephonyLoad), and a spinning
    // generator would compete with the relay for the CPU (and, under `chrt`, be throttled by the kernel).
    while (call.clears === clears && performance.now() < deadline) await sleep(1);
    if (call.clears === clears) missed++;
    // The relay sends `clear` before it cancels the provider's response: the next answer starts only after
    // that cancel arrived, as a provider would not answer before the caller's speech ended.
    while (load.provider.cancels === cancels && performance.now() < deadline) await sleep(1);
    // The caller stops, the provider answers again: the next round on this call interrupts a new answer.
    load.provider.speechStopped(conn);
    load.provider.startResponse(conn);
    await sleep(20);
  }
  const sorted = [...load.bargeIn].sort((a, b) => a - b);
  const pick = (values: number[], q: number): number =>
    values[Math.min(values.length - 1, Math.floor(q * values.length))] ?? NaN;
  const p = (q: number) => pick(sorted, q);
  // The relay's own share, as it measured it (latency.metrics barge_in_to_clear: provider event in -> clear
  // written), read from the spawned server's session logs; the rest of the end-to-end figure is the sockets
  // and the two processes' wake-ups.
  const inRelay = sessionLogLatencies(target.server?.dataDir, "barge_in_to_clear");
  console.log(`telephony barge-in: ${target.describe}; ${calls} calls streaming 50 frames/s each way`);
  console.log("| figure | result |");
  console.log("|---|---|");
  console.log(
    `| provider speech_started -> Twilio clear, ${sorted.length} barge-ins | p50 ${fmt(p(0.5))} ms, p99 ${fmt(p(0.99))} ms, max ${fmt(sorted.at(-1) ?? NaN)} ms (goal p99 < 5 ms) |`,
  );
  if (inRelay.length > 0)
    console.log(
      `| the relay's own part (latency.metrics barge_in_to_clear), ${inRelay.length} barge-ins | p50 ${fmt(pick(inRelay, 0.5))} ms, p99 ${fmt(pick(inRelay, 0.99))} ms, max ${fmt(inRelay.at(-1) ?? NaN)} ms |`,
    );
  console.log(`| barge-ins without a clear within 1 s | ${missed} |`);
  console.log(`| response.cancel received by the provider | ${load.provider.cancels} |`);
  console.log(
    JSON.stringify({
      bench: "telephony-barge-in",
      p50: p(0.5),
      p99: p(0.99),
      n: sorted.length,
      missed,
      relayP99: pick(inRelay, 0.99),
    }),
  );
} finally {
  load.flow(false, false);
  await target.close();
}
process.exit(0);
