/**
 * The echo canceller's cost per call (src/codecs/echo-canceller.ts,
 * libspeexdsp's MDF filter and preprocessor): CPU time per 20 ms frame at the
 * line rates and several tail lengths, and the calls one core could cancel
 * for, with the echo return loss enhancement reached on real speech through a
 * phone echo path (delay, loss, u-law) so cost and effect are read together.
 * CPU time (process.cpuUsage), not wall time: a shared machine's load moves
 * it far less.
 *
 * The last rows are a phone leg's whole echo step (core's EchoGuard: the
 * canceller plus the residual test, without and with the double-talk test),
 * at 8 kHz with the default 300 ms tail.
 *
 *   node --import tsx bench/echo-canceller.bench.ts [--seconds 8]
 */
import { benchArgs, num } from "./lib/bench-args.js";
import { createEchoCanceller } from "../src/codecs/echo-canceller.js";
import { EchoGuard, resolveEchoCancellation } from "../src/voice/media/echo-guard.js";
import { decodeMulaw, encodeMulaw } from "../src/codecs/mulaw.js";
import { loadSpeech } from "../src/codecs/testing/audio-tools.js";

const args = benchArgs({ seconds: "8", delay: "120", loss: "12" });
const seconds = num(args.seconds, "seconds");
const delayMs = num(args.delay, "delay");
const lossDb = num(args.loss, "loss");

function energy(pcm: Int16Array, from: number): number {
  let sum = 0;
  for (let i = from; i < pcm.length; i++) sum += pcm[i]! * pcm[i]!;
  return sum / Math.max(1, pcm.length - from);
}

console.log(
  `echo path: ${delayMs} ms delay, ${lossDb} dB echo return loss, u-law; ${seconds} s of real speech per run`,
);
console.log(
  "| rate | tail | CPU per 20 ms frame | share of a core per call | calls per core | ERLE after 4 s |",
);
console.log("|---|---|---|---|---|---|");
for (const rate of [8000, 16000]) {
  const far = loadSpeech("librivox/sense_and_sensibility_01_austen_64kb-0870.wav", rate).subarray(
    0,
    rate * seconds,
  );
  const gain = 10 ** (-lossDb / 20);
  const delayed = new Int16Array(far.length);
  for (let i = (rate * delayMs) / 1000; i < far.length; i++)
    delayed[i] = Math.round(far[i - (rate * delayMs) / 1000]! * gain);
  const mic = decodeMulaw(encodeMulaw(delayed));
  for (const tailMs of [64, 128, 300]) {
    const canceller = createEchoCanceller({ sampleRate: rate, tailMs });
    const step = canceller.frameSamples;
    const out = new Int16Array(mic.length);
    const before = process.cpuUsage();
    let frames = 0;
    for (let at = 0; at + step <= mic.length; at += step, frames++) {
      canceller.played(far.subarray(at, at + step));
      out.set(canceller.process(mic.subarray(at, at + step)), at);
    }
    const used = process.cpuUsage(before);
    canceller.close();
    const perFrameUs = (used.user + used.system) / frames;
    const share = perFrameUs / 20_000;
    const erle = 10 * Math.log10(energy(mic, rate * 4) / Math.max(1, energy(out, rate * 4)));
    console.log(
      `| ${rate} | ${tailMs} ms | ${perFrameUs.toFixed(0)} us | ${(share * 100).toFixed(2)}% | ${Math.floor(1 / share)} | ${erle.toFixed(1)} dB |`,
    );
  }
}

/** A phone leg's echo step as the media leg runs it: EchoGuard (canceller + residual test), 8 kHz, 300 ms. */
function guardRow(doubleTalk: boolean, residualVad: boolean, print: boolean): void {
  const rate = 8000;
  const far = loadSpeech("librivox/sense_and_sensibility_01_austen_64kb-0870.wav", rate).subarray(
    0,
    rate * seconds,
  );
  const gain = 10 ** (-lossDb / 20);
  const delay = (rate * delayMs) / 1000;
  const delayed = new Int16Array(far.length);
  for (let i = delay; i < far.length; i++) delayed[i] = Math.round(far[i - delay]! * gain);
  const mic = decodeMulaw(encodeMulaw(delayed));
  const guard = new EchoGuard(
    (o) => createEchoCanceller(o),
    resolveEchoCancellation({ doubleTalk, residualVad }),
    rate,
  );
  const out = new Int16Array(mic.length);
  const step = rate / 50;
  // The recording played over and over in one call (ten times, 70 s): a few hundred frames read the JIT's warm-up.
  const before = process.cpuUsage();
  let frames = 0;
  for (let round = 0; round < 10; round++)
    for (let at = 0; at + step <= mic.length; at += step, frames++)
      out.set(guard.process(mic.subarray(at, at + step), far.subarray(at, at + step)), at);
  const used = process.cpuUsage(before);
  guard.close();
  if (!print) return;
  const perFrameUs = (used.user + used.system) / frames;
  const share = perFrameUs / 20_000;
  const erle = 10 * Math.log10(energy(mic, rate * 4) / Math.max(1, energy(out, rate * 4)));
  const what = !doubleTalk
    ? "+ residual test, no double-talk test"
    : residualVad
      ? "+ residual and double-talk tests, the residual detector (the default)"
      : "+ residual and double-talk tests, no residual detector";
  console.log(
    `| ${rate} | 300 ms ${what} (a phone leg's EchoGuard) | ${perFrameUs.toFixed(0)} us | ${(share * 100).toFixed(2)}% | ${Math.floor(1 / share)} | ${erle.toFixed(1)} dB |`,
  );
}

// Each once unprinted first: the optimizing compiler's warm-up is not a call's steady cost.
// The residual detector (Silero) needs the double-talk test's coherence: without it, it is never asked.
const guardRows = [
  [false, false],
  [true, false],
  [true, true],
] as const;
for (const [doubleTalk, residualVad] of guardRows) guardRow(doubleTalk, residualVad, false);
for (const [doubleTalk, residualVad] of guardRows) guardRow(doubleTalk, residualVad, true);
