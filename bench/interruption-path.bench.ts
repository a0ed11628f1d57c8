/**
 * The interruption path and a relayed call's CPU, this checkout beside a
 * baseline in one process (issue 36: one media leg for every session, the
 * leg alone decides who speaks):
 *
 * 1. Barge-in decision -> sink clear on the local-VAD path: a realtime leg
 *    whose turns are the leg's (`local-vad`, talk.input.turnEnd "talkgate")
 *    over the scripted provider streaming an answer; the caller's speech
 *    (pocketsphinx's goforward.raw, 16 kHz) is confirmed by the leg's gate,
 *    the leg decides and the answer is interrupted. Measured from the leg's
 *    `bargeInDetected` (the decision starts) to the sink's `clear`, with
 *    `--listeners` session subscribers doing a gateway's per-event work
 *    (JSON of each event) as the fan-out the clear must not wait behind.
 * 2. CPU per relayed call: a realtime relay leg (the provider's turns, PCM
 *    16 kHz both ways) through `--call-seconds` of caller frames (20 ms) and
 *    the provider's answer deltas (100 ms), faster than real time; the
 *    process's CPU (user + system) per call.
 *
 * Each trial and each call runs on this checkout and the baseline in turn,
 * in one process, so a shared machine's load falls on both alike.
 *
 *   nice -n 10 node --import tsx bench/interruption-path.bench.ts --baseline <commit or checkout dir>
 *     [--trials 40] [--listeners 8] [--calls 12] [--call-seconds 30]
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { benchParseArgs } from "./lib/bench-cli.js";
import type * as RuntimeModule from "../src/core/session-runtime.js";
import type * as LegModule from "../src/voice/media/media-leg.js";
import type * as FactoryModule from "../src/voice/pipelines/controller-factory.js";
import type * as ScriptedModule from "../src/voice/pipelines/testing/scripted-realtime-provider.js";
import { NOOP_LOGGER } from "../src/core/logger.js";
import type { AudioChunk } from "../src/core/index.js";
import { baselineCheckout } from "./lib/baseline-checkout.js";
import { percentile } from "./lib/turn-figures.js";

const { values } = benchParseArgs(import.meta.url, {
  options: {
    baseline: { type: "string" },
    trials: { type: "string", default: "40" },
    listeners: { type: "string", default: "8" },
    calls: { type: "string", default: "12" },
    "call-seconds": { type: "string", default: "30" },
  },
});

const PCM16 = { encoding: "pcm16", sampleRate: 16_000, channels: 1 } as const;
const FRAME = 320; // 20 ms at 16 kHz
const SPEECH = (() => {
  const raw = readFileSync("/usr/share/pocketsphinx/test/data/goforward.raw");
  return new Int16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2);
})();

interface Checkout {
  name: string;
  createTalkRuntime: typeof RuntimeModule.createTalkRuntime;
  MediaLeg: typeof LegModule.MediaLeg;
  sessionControllerFactory: typeof FactoryModule.sessionControllerFactory;
  ScriptedRealtimeProvider: typeof ScriptedModule.ScriptedRealtimeProvider;
}

async function load(name: string, root: string): Promise<Checkout> {
  const get = async <T>(path: string): Promise<T> =>
    (await import(pathToFileURL(join(root, path)).href)) as T;
  return {
    name,
    createTalkRuntime: (await get<typeof RuntimeModule>("src/core/session-runtime.ts")).createTalkRuntime,
    MediaLeg: (await get<typeof LegModule>("src/voice/media/media-leg.ts")).MediaLeg,
    sessionControllerFactory: (await get<typeof FactoryModule>("src/voice/pipelines/controller-factory.ts"))
      .sessionControllerFactory,
    ScriptedRealtimeProvider: (
      await get<typeof ScriptedModule>("src/voice/pipelines/testing/scripted-realtime-provider.ts")
    ).ScriptedRealtimeProvider,
  };
}

/** 100 ms of the provider's answer (a quiet tone), item `itemId` of response `responseId`. */
function answerDelta(responseId: string, itemId: string) {
  const pcm = new Int16Array(1600);
  for (let i = 0; i < pcm.length; i++) pcm[i] = Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / 16_000));
  return {
    type: "audio_delta" as const,
    responseId,
    itemId,
    data: new Uint8Array(pcm.buffer),
    format: PCM16,
  };
}

/** A sink that keeps nothing: the clear's time is noted. */
function sink(onClear: () => void) {
  return {
    write: (_chunk: AudioChunk, _meta: { turnId: string; itemId: string }) => {},
    clear: () => onClear(),
  };
}

function legOf(c: Checkout, turnTaking: "local-vad" | "provider", onClear: () => void, observer = {}) {
  const runtime = c.createTalkRuntime();
  const session = runtime.createSession({
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    owner: "gateway",
  });
  const provider = new c.ScriptedRealtimeProvider([PCM16]);
  const createController = c.sessionControllerFactory({
    providers: {
      stt: () => undefined,
      tts: () => undefined,
      agent: () => undefined,
      realtime: () => provider,
    },
    options: { persona: "Bench persona." },
    logger: NOOP_LOGGER,
  });
  const leg = new c.MediaLeg({
    session,
    createController,
    adapter: { sink: sink(onClear), legClosed: () => {} },
    format: PCM16,
    turnTaking:
      turnTaking === "local-vad"
        ? { kind: "local-vad", threshold: -45, minSpeechMs: 120, silenceMs: 600 }
        : { kind: "provider" },
    observer,
    faults: "report",
    logger: NOOP_LOGGER,
  });
  return { runtime, session, provider, leg };
}

/** Barge-in decision -> sink clear, ms, over `trials` answers interrupted by the caller's speech. */
async function decisionToClear(c: Checkout, trials: number, listeners: number): Promise<number[]> {
  let detectedAt: number | undefined;
  const samples: number[] = [];
  const { runtime, session, provider, leg } = legOf(
    c,
    "local-vad",
    () => {
      if (detectedAt !== undefined) samples.push(performance.now() - detectedAt);
      detectedAt = undefined;
    },
    { bargeInDetected: () => (detectedAt = performance.now()) },
  );
  // What a gateway does with each event (its JSON line), times the listeners.
  for (let i = 0; i < listeners; i++) session.subscribe((event) => void JSON.stringify(event));
  await leg.start();
  const silence = new Int16Array(FRAME);
  for (let t = 0; t < trials; t++) {
    const responseId = `r${t}`;
    provider.play({ type: "response_started", responseId });
    for (let d = 0; d < 5; d++) provider.play(answerDelta(responseId, `item${t}`));
    for (let i = 0; i < 25; i++) leg.appendAudio(silence, PCM16);
    for (let i = 0; i + FRAME <= SPEECH.length; i += FRAME)
      leg.appendAudio(SPEECH.subarray(i, i + FRAME), PCM16);
    // The endpoint ends the caller's turn; the provider's answer to it ends before the next trial.
    for (let i = 0; i < 60; i++) leg.appendAudio(silence, PCM16);
    provider.play({ type: "response_done", responseId, status: "completed" });
    await new Promise((r) => setImmediate(r));
  }
  await leg.close("completed");
  await runtime.close();
  return samples;
}

/** CPU (user + system) of one relayed call of `seconds`, ms. */
async function relayedCall(c: Checkout, seconds: number): Promise<number> {
  const { runtime, provider, leg } = legOf(c, "provider", () => {});
  const before = process.cpuUsage();
  await leg.start();
  const frame = new Int16Array(FRAME);
  for (let i = 0; i < frame.length; i++) frame[i] = ((i * 7919) % 200) - 100; // line noise
  const frames = seconds * 50;
  const responseId = "r1";
  provider.play({ type: "speech_started" });
  provider.play({ type: "speech_stopped" });
  provider.play({ type: "response_started", responseId });
  for (let f = 0; f < frames; f++) {
    leg.appendAudio(frame, PCM16);
    if (f % 5 === 0) provider.play(answerDelta(responseId, "item1"));
    if (f % 50 === 49) await new Promise((r) => setImmediate(r));
  }
  provider.play({ type: "audio_done", responseId, itemId: "item1" });
  provider.play({ type: "response_done", responseId, status: "completed" });
  await leg.close("completed");
  await runtime.close();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

const checkouts = [await load("this checkout", resolve(import.meta.dirname, ".."))];
if (values.baseline) {
  const base = baselineCheckout(values.baseline);
  checkouts.push(await load("baseline", base.dir));
  console.log(`baseline: ${base.describe} (${base.dir})`);
}
const trials = Number(values.trials);
const listeners = Number(values.listeners);
const calls = Number(values.calls);
const callSeconds = Number(values["call-seconds"]);

const clears = new Map<string, number[]>(checkouts.map((c) => [c.name, []]));
const cpu = new Map<string, number[]>(checkouts.map((c) => [c.name, []]));
// Warm-up: modules, JIT, the VAD.
for (const c of checkouts) {
  await decisionToClear(c, 2, listeners);
  await relayedCall(c, 2);
}
for (let round = 0; round < 4; round++)
  for (const c of checkouts) clears.get(c.name)!.push(...(await decisionToClear(c, trials / 4, listeners)));
for (let n = 0; n < calls; n++)
  for (const c of checkouts) cpu.get(c.name)!.push(await relayedCall(c, callSeconds));

const fmt = (ms: number | undefined) => (ms === undefined ? "-" : ms.toFixed(3));
console.log(`\nbarge-in decision -> sink clear, local-VAD path (${listeners} listeners), ms:`);
for (const c of checkouts) {
  const s = [...clears.get(c.name)!].sort((a, b) => a - b);
  console.log(
    `  ${c.name.padEnd(14)} n=${s.length}  p50 ${fmt(percentile(s, 0.5))}  p95 ${fmt(percentile(s, 0.95))}  max ${fmt(s.at(-1))}`,
  );
}
console.log(`\nCPU per relayed call (${callSeconds} s of audio each way, ${calls} calls), ms:`);
const medians = new Map<string, number>();
for (const c of checkouts) {
  const s = [...cpu.get(c.name)!].sort((a, b) => a - b);
  medians.set(c.name, percentile(s, 0.5)!);
  console.log(`  ${c.name.padEnd(14)} median ${fmt(percentile(s, 0.5))}  p95 ${fmt(percentile(s, 0.95))}`);
}
if (checkouts.length === 2) {
  const ratio = medians.get("this checkout")! / medians.get("baseline")!;
  console.log(`  ratio this/baseline: ${ratio.toFixed(3)}`);
}
