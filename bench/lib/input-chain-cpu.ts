/**
 * CPU of one call's input chain per 20 ms frame: the parts a phone leg runs on
 * every caller frame before STT (media/echo-guard.ts over the codecs' speexdsp
 * canceller when talk.input.echoCancellation is on, then the speech gate:
 * WebRTC VAD and its energy gate), with the same classes the leg builds, fed a
 * corpus-like call (the answer as the reference, its echo through a room
 * response at 10 dB ERL plus a real interruption, after u-law) as fast as they
 * take it. Timed with process.cpuUsage(), which a busy shared machine inflates
 * less than wall time.
 */
import { createEchoCanceller, echoCancellerAvailable } from "../../src/codecs/echo-canceller.js";
import { decodeMulaw, encodeMulaw } from "../../src/codecs/mulaw.js";
import { EchoGuard, resolveEchoCancellation } from "../../src/voice/media/echo-guard.js";
import { SpeechGate } from "../../src/voice/media/speech-gate.js";
import type { ChainModules } from "./onset-latency.js";
import { EchoPath, roomResponse } from "../../test/support/echo-path.js";
import { activeLevelDb, atLevel, espeak, recording, RECORDINGS, trim } from "./corpus-audio.js";
import { ANSWER, SPEECH_LEVEL_DB } from "./turn-corpus.js";

const FRAME = 160;

/** This checkout's classes. */
const own: ChainModules = {
  name: "change",
  EchoGuard,
  resolveEchoCancellation,
  SpeechGate,
  createEchoCanceller,
};

export interface InputChainCost {
  /** CPU per 20 ms frame, microseconds. */
  usPerFrame: number;
  frames: number;
}

/** The mic and reference frames of the timed call (the same for every chain measured). */
function frames(): { mic: Int16Array[]; reference: Int16Array[] } {
  const answer = espeak(ANSWER);
  const speech = atLevel(trim(recording(RECORDINGS[0])), SPEECH_LEVEL_DB, activeLevelDb);
  const path = new EchoPath({ delayMs: 120, lossDb: 10, response: roomResponse(1) });
  const mic: Int16Array[] = [];
  const reference: Int16Array[] = [];
  for (let at = 0; at + FRAME <= answer.length; at += FRAME) {
    const played = Int16Array.from(answer.subarray(at, at + FRAME), Math.round);
    path.playedPcm(played);
    const echo = path.next();
    const pcm = new Int16Array(FRAME);
    for (let i = 0; i < FRAME; i++) {
      const v = speech[at + i - 5 * 8000] ?? 0; // the caller speaks from 5 s on
      pcm[i] = Math.max(-32768, Math.min(32767, Math.round(echo[i]! + v)));
    }
    mic.push(decodeMulaw(encodeMulaw(pcm)));
    reference.push(played);
  }
  return { mic, reference };
}

type EchoSetting = Record<string, unknown> | undefined;

/**
 * The chain's cost with `echoCancellation` as configured (undefined or `enabled: false`: off), the gate at
 * the telephony defaults (-45 dBFS, 120 ms onset, 800 ms silence); `rounds` timed passes over the call
 * (fresh state each) after one warm-up pass. `modules`: another checkout's classes (a baseline).
 */
export function inputChainCost(
  echoCancellation: EchoSetting,
  rounds = 5,
  modules?: ChainModules,
): InputChainCost | undefined {
  return interleavedChainCosts([{ id: "chain", echoCancellation, modules }], rounds).get("chain");
}

/**
 * Several chains' costs with their rounds interleaved (chain A, chain B, A, B, ...), so a shared machine's
 * load falls on each alike.
 */
export function interleavedChainCosts(
  chains: readonly { id: string; echoCancellation: EchoSetting; modules?: ChainModules | undefined }[],
  rounds = 5,
): Map<string, InputChainCost | undefined> {
  const out = new Map<string, InputChainCost | undefined>();
  const runnable = chains.filter((c) => {
    const off = c.echoCancellation?.["enabled"] === false;
    if (!off && !echoCancellerAvailable()) {
      out.set(c.id, undefined);
      return false;
    }
    return true;
  });
  const { mic, reference } = frames();
  const cpu = new Map<string, number>(runnable.map((c) => [c.id, 0]));
  // Round 0 warms the JIT up and is not counted.
  for (let round = 0; round <= rounds; round++)
    for (const c of runnable) {
      const m = c.modules ?? own;
      const off = c.echoCancellation?.["enabled"] === false;
      const ec = off ? undefined : m.resolveEchoCancellation(c.echoCancellation ?? {});
      const guard = ec
        ? new m.EchoGuard((o) => m.createEchoCanceller({ ...o, frameMs: 20 }), ec, 8000)
        : undefined;
      const gate = new m.SpeechGate({ threshold: -45, minSpeechMs: 120, silenceMs: 800 });
      const before = process.cpuUsage();
      for (let k = 0; k < mic.length; k++) {
        const heard = guard ? guard.process(mic[k]!, reference[k]) : mic[k]!;
        if (heard.length > 0) gate.process(heard);
      }
      const used = process.cpuUsage(before);
      if (round > 0) cpu.set(c.id, cpu.get(c.id)! + used.user + used.system);
      guard?.close();
      gate.close();
    }
  for (const c of runnable)
    out.set(c.id, { usPerFrame: cpu.get(c.id)! / (rounds * mic.length), frames: rounds * mic.length });
  return out;
}
