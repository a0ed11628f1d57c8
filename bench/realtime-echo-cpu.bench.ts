/**
 * What talk.input.echoCancellation.realtime costs a realtime phone call per
 * 20 ms frame, beside u-law passthrough (which forwards the carrier's base64
 * as it came and decodes nothing): the input chain (media/echo-guard.ts over
 * the speexdsp canceller, then the barge-in gate; bench/lib/input-chain-cpu.ts
 * on its corpus call) plus the transcoding that giving up passthrough brings:
 * the caller's u-law and the played reference decoded, the cleaned 8 kHz PCM
 * resampled to the provider's 24 kHz and base64-encoded, and the provider's
 * 24 kHz answer resampled to 8 kHz and u-law encoded for the line. CPU time
 * (process.cpuUsage), not wall time.
 *
 *   node --import tsx bench/realtime-echo-cpu.bench.ts [--seconds 20] [--rounds 5]
 */
import { benchArgs, num } from "./lib/bench-args.js";
import { inputChainCost } from "./lib/input-chain-cpu.js";
import { bytesFromPcm16, createResampler, decodeMulaw, encodeMulaw } from "../src/codecs/index.js";

const args = benchArgs({ seconds: "20", rounds: "5" });
const seconds = num(args.seconds, "seconds");
const rounds = num(args.rounds, "rounds");

/** The transcoding of one frame each way, timed over `seconds` of a voiced signal, per 20 ms frame (µs). */
function transcodingUs(): number {
  const frames = seconds * 50;
  const line = new Int16Array(160);
  const answer = new Int16Array(480);
  for (let i = 0; i < 480; i++) answer[i] = Math.round(8000 * Math.sin(i / 5));
  for (let i = 0; i < 160; i++) line[i] = Math.round(6000 * Math.sin(i / 3));
  const callerUlaw = encodeMulaw(line);
  const referenceUlaw = encodeMulaw(line);
  let cpu = 0;
  let sink = 0;
  for (let round = 0; round <= rounds; round++) {
    const up = createResampler({ from: 8000, to: 24000, channels: 1 });
    const down = createResampler({ from: 24000, to: 8000, channels: 1 });
    const before = process.cpuUsage();
    for (let k = 0; k < frames; k++) {
      const caller = decodeMulaw(callerUlaw);
      const reference = decodeMulaw(referenceUlaw);
      const toProvider = Buffer.from(bytesFromPcm16(up.process(caller)).buffer).toString("base64");
      const toLine = encodeMulaw(down.process(answer));
      sink += toProvider.length + toLine.length + reference.length;
    }
    const used = process.cpuUsage(before);
    if (round > 0) cpu += used.user + used.system;
    up.close();
    down.close();
  }
  if (sink === 0) console.log("(nothing encoded)");
  return cpu / (rounds * frames);
}

const chain = inputChainCost({ enabled: true }, rounds);
const gateOnly = inputChainCost({ enabled: false }, rounds);
const noDoubleTalk = inputChainCost({ enabled: true, doubleTalk: false }, rounds);
const transcode = transcodingUs();
console.log("| per 20 ms frame of a realtime call | CPU |");
console.log("|---|---|");
if (chain && gateOnly) {
  console.log(`| echo guard (speexdsp, 300 ms tail) + barge-in gate | ${chain.usPerFrame.toFixed(1)} µs |`);
  console.log(`| of which the gate | ${gateOnly.usPerFrame.toFixed(1)} µs |`);
  if (noDoubleTalk)
    console.log(
      `| of which the double-talk test (the chain without it: ${noDoubleTalk.usPerFrame.toFixed(1)} µs) | ${(chain.usPerFrame - noDoubleTalk.usPerFrame).toFixed(1)} µs |`,
    );
} else console.log("| echo guard | - (libspeexdsp binding not built) |");
console.log(`| transcoding both ways (u-law, 8 <-> 24 kHz, base64) | ${transcode.toFixed(1)} µs |`);
if (chain) {
  const total = chain.usPerFrame + transcode;
  console.log(
    `| total over passthrough | ${total.toFixed(1)} µs (${((total / 20_000) * 100).toFixed(2)} % of a core per call) |`,
  );
}
