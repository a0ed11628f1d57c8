/**
 * The talker-to-echo grid (issue 40): the turn-taking corpus's speakerphone
 * calls with the caller's level set against the echo their own phone returns,
 * from 10 dB under it to 10 dB over it, at echo return losses of 3 to 20 dB.
 * The base corpus (turn-corpus.ts) keeps the caller near the answer's own
 * level (-20 dBFS), so even at its 6 dB ERL the caller stood about 6 dB over
 * the echo; a speakerphone in a car or a kitchen returns the assistant about
 * as loud as the caller, or louder.
 *
 * A cell is (ERL, TER): every call of a cell has its echo `ERL` dB under the
 * answer as played and the caller's active level `TER` dB over that echo's
 * (both measured the same way, activeLevelDb, the echo on the answer sent
 * through this call's own response). Cells differ in nothing else: the n-th
 * call of every cell has the same recordings, pause, onset, delay and
 * response, so a row reads the caller's level and a column the line's loss.
 * The caller is recorded speech only (pocketsphinx-testdata, cycled through
 * by seed: seeds 1-4 at 4 calls a cell use each recording at least once);
 * every other call is two recordings with a pause between them (the endpoint's
 * premature cut-offs). Echo-only calls are per ERL: no caller, no TER.
 *
 * The caller's absolute level follows: the answer is -20 dBFS active, so at
 * 20 dB ERL and -10 dB TER the caller speaks at about -50 dBFS, under the
 * telephony gate's -45 dBFS threshold for most of their frames (the printed
 * tables name each cell's level).
 */
import {
  activeLevelDb,
  atLevel,
  espeak,
  lineHiss,
  noise,
  RATE,
  RECORDINGS,
  recording,
  rng,
  trim,
  type Rng,
} from "./corpus-audio.js";
import { lineResponse, roomResponse } from "../../test/support/echo-path.js";
import { ANSWER, bed, place, TAIL_MS, type CorpusCall, type CorpusEcho } from "./turn-corpus.js";

export const GRID_ERLS_DB = [3, 6, 10, 20] as const;
export const GRID_TERS_DB = [-10, -6, -3, 0, 3, 6, 10] as const;

export interface GridOptions {
  seed: number;
  /** Interruption calls per cell. */
  perCell: number;
  /** Minutes of echo-only answer per echo return loss (the self-interruption figure's exposure). */
  echoMinutes: number;
  /** The grid's echo return losses and talker-to-echo ratios, dB. Default GRID_ERLS_DB, GRID_TERS_DB. */
  erls?: readonly number[];
  ters?: readonly number[];
  /**
   * Echo-only calls per ERL and noise kind where the caller's room gets noisy while the answer plays (a
   * vacuum, a street, a room of talkers): noise switching on 3-12 s into the call (GridOptions.noiseStepDb against the echo's level),
   * for the rest of it. Default 0 (none).
   */
  noiseSteps?: number;
  /** The noise steps' level against the echo's, dB. Default -6. */
  noiseStepDb?: number;
}

/** The noises a noise-step call switches on: the corpus's three and white noise (a fan, a vacuum, a hiss). */
export const NOISE_STEP_KINDS = ["white", "pink", "street", "babble"] as const;

/** Rough length of ANSWER as the local TTS speaks it, s: sizes the echo-only set. */
const ANSWER_SECONDS = 22.8;

export function buildGrid(options: GridOptions): CorpusCall[] {
  const { seed, perCell, echoMinutes } = options;
  const erls = options.erls ?? GRID_ERLS_DB;
  const ters = options.ters ?? GRID_TERS_DB;
  for (const erl of erls) if (!(erl >= 0 && erl <= 40)) throw new Error(`grid ERL ${erl} dB: must be 0-40`);
  for (const ter of ters)
    if (!(ter >= -30 && ter <= 30)) throw new Error(`grid TER ${ter} dB: must be -30..30`);
  const calls: CorpusCall[] = [];
  const echoCalls = Math.max(1, Math.ceil((echoMinutes * 60) / ANSWER_SECONDS));
  for (const erl of erls)
    for (let i = 0; i < echoCalls; i++) {
      const r = rng(seed, "grid-echo", i);
      const echo = { ...situationEcho(r, i), lossDb: erl };
      const hangUpMs = 40_000;
      calls.push({
        id: `grid-echo-erl${erl}-${i}`,
        kind: "echo-only",
        echo,
        track: bed(r, hangUpMs),
        hangUpMs,
      });
    }
  for (const erl of erls)
    for (const kind of NOISE_STEP_KINDS)
      for (let i = 0; i < (options.noiseSteps ?? 0); i++)
        calls.push(noiseStep(seed, erl, kind, i, options.noiseStepDb ?? -6));
  for (let j = 0; j < perCell; j++) {
    const situation = gridSituation(seed, perCell, j);
    for (const erl of erls)
      for (const ter of ters) {
        const echo = { ...situation.echo, lossDb: erl };
        const level = echoLevelDb(echo) + ter;
        const parts = situation.recordings.map((p) => atLevel(trim(recording(p)), level, activeLevelDb));
        const gap = Math.round((situation.pauseMs / 1000) * RATE);
        const pcm = new Float64Array(parts.reduce((n, p) => n + p.length, 0) + (parts.length - 1) * gap);
        let at = 0;
        for (const p of parts) {
          pcm.set(p, at);
          at += p.length + gap;
        }
        const onsetMs = situation.onsetMs;
        const endMs = onsetMs + Math.round((pcm.length / RATE) * 1000);
        const hangUpMs = endMs + TAIL_MS;
        const track = bed(rng(seed, "grid-bed", j, erl, ter), hangUpMs);
        place(track, pcm, onsetMs);
        const pausesMs = parts.length > 1 ? [situation.pauseMs] : [];
        const label = situation.recordings.map(nameOf).join(` + ${situation.pauseMs} ms + `);
        calls.push({
          id: `grid-erl${erl}-ter${ter}-${j}`,
          kind: "interruption",
          echo,
          terDb: ter,
          speech: { onsetMs, endMs, label, pausesMs },
          track,
          hangUpMs,
        });
      }
  }
  return calls;
}

/** An echo-only call whose near end gets noisy at a random time in the answer (GridOptions.noiseSteps). */
function noiseStep(
  seed: number,
  erl: number,
  kind: (typeof NOISE_STEP_KINDS)[number],
  i: number,
  levelDb: number,
): CorpusCall {
  const r = rng(seed, "grid-noise-step", erl, kind, i);
  const echo = { ...situationEcho(r, i), lossDb: erl };
  const hangUpMs = 15_000;
  const track = bed(r, hangUpMs);
  const startMs = Math.round(3000 + 9000 * r());
  const n = Math.round(((hangUpMs - startMs) / 1000) * RATE);
  const level = echoLevelDb(echo) + levelDb;
  const pcm = kind === "white" ? lineHiss(r, n, level) : noise(kind, r, n, level);
  place(track, pcm, startMs);
  return {
    id: `grid-noise-${kind}-erl${erl}-${i}`,
    kind: "noisy-echo",
    echo,
    noiseStartMs: startMs,
    track,
    hangUpMs,
  };
}

interface Situation {
  recordings: string[];
  pauseMs: number;
  onsetMs: number;
  echo: CorpusEcho;
}

/** The n-th call of every cell: its recordings (cycled by seed), pause, onset and echo path. */
function gridSituation(seed: number, perCell: number, j: number): Situation {
  const k = (seed - 1) * perCell + j;
  const r = rng(seed, "grid-call", j);
  const first = RECORDINGS[k % RECORDINGS.length]!;
  const paused = k % 2 === 1;
  const recordings = paused ? [first, RECORDINGS[(k + 5) % RECORDINGS.length]!] : [first];
  return {
    recordings,
    pauseMs: paused ? Math.round(250 + 750 * r()) : 0,
    onsetMs: Math.round(2000 + 4000 * r()),
    echo: situationEcho(r, j),
  };
}

function situationEcho(r: Rng, i: number): CorpusEcho {
  return {
    delayMs: Math.round(20 + 230 * r()),
    lossDb: 0,
    response: i % 2 === 0 ? "line" : "room",
    responseSeed: Math.floor(r() * 0xffff_ffff),
  };
}

function nameOf(path: string): string {
  return path
    .split("/")
    .pop()!
    .replace(/\.(raw|wav)$/, "");
}

const responseLevels = new Map<string, number>();

/**
 * The active level of the answer's echo on this path, dBFS: the answer sent through the path's response
 * at its loss (the delay changes nothing). The response has unit energy, but speech is not white, so a
 * room's tail moves the level by a dB or two: measured, not assumed.
 */
export function echoLevelDb(echo: CorpusEcho): number {
  const key = echo.response === "line" ? "line" : `room-${echo.responseSeed}`;
  let level = responseLevels.get(key);
  if (level === undefined) {
    const taps = echo.response === "line" ? lineResponse() : roomResponse(echo.responseSeed);
    level = activeLevelDb(convolve(answerSamples(), taps));
    responseLevels.set(key, level);
  }
  return level - echo.lossDb;
}

let answer: Float64Array | undefined;
function answerSamples(): Float64Array {
  answer ??= espeak(ANSWER);
  return answer;
}

function convolve(x: Float64Array, taps: Float64Array): Float64Array {
  const nonZero: number[] = [];
  for (let k = 0; k < taps.length; k++) if (taps[k] !== 0) nonZero.push(k);
  const out = new Float64Array(x.length);
  for (let i = 0; i < x.length; i++) {
    let y = 0;
    for (const k of nonZero) if (i >= k) y += taps[k]! * x[i - k]!;
    out[i] = y;
  }
  return out;
}
