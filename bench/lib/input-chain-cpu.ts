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
import { EchoPath, roomResponse } from "../../test/support/echo-path.js";
import { activeLevelDb, atLevel, espeak, recording, RECORDINGS, trim } from "./corpus-audio.js";
import { ANSWER, SPEECH_LEVEL_DB } from "./turn-corpus.js";

const FRAME = 160;

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

/**
 * The chain's cost with `echoCancellation` as configured (undefined: off), the gate at the telephony
 * defaults (-45 dBFS, 120 ms onset, 800 ms silence); `rounds` timed passes over the call
 * (fresh state each) after one warm-up pass.
 */
export function inputChainCost(
  echoCancellation:
    { enabled?: boolean; tailMs?: number; denoise?: boolean; doubleTalk?: boolean } | undefined,
  rounds = 5,
): InputChainCost | undefined {
  const ec = echoCancellation?.enabled === false ? undefined : resolveEchoCancellation(echoCancellation);
  if (ec && !echoCancellerAvailable()) return undefined;
  const { mic, reference } = frames();
  let cpu = 0;
  // Round 0 warms the JIT up and is not counted.
  for (let round = 0; round <= rounds; round++) {
    const guard = ec ? new EchoGuard((o) => createEchoCanceller({ ...o, frameMs: 20 }), ec, 8000) : undefined;
    const gate = new SpeechGate({ threshold: -45, minSpeechMs: 120, silenceMs: 800 });
    const before = process.cpuUsage();
    for (let k = 0; k < mic.length; k++) {
      const heard = guard ? guard.process(mic[k]!, reference[k]) : mic[k]!;
      if (heard.length > 0) gate.process(heard);
    }
    const used = process.cpuUsage(before);
    if (round > 0) cpu += used.user + used.system;
    guard?.close();
    gate.close();
  }
  return { usPerFrame: cpu / (rounds * mic.length), frames: rounds * mic.length };
}
