import { describe, expect, it } from "vitest";
import { decodeMulaw, encodeMulaw } from "../../src/codecs/mulaw.js";
import { activeLevelDb, espeak, lineHiss, rng } from "../../bench/lib/corpus-audio.js";
import { buildGrid, NOISE_STEP_KINDS } from "../../bench/lib/talker-echo-grid.js";
import {
  ANSWER,
  buildCorpus,
  corpusDigest,
  SPEECH_LEVEL_DB,
  type CorpusCall,
} from "../../bench/lib/turn-corpus.js";
import { EchoPath, lineResponse, roomResponse } from "../support/echo-path.js";

/**
 * The turn-taking bench's corpus (bench/lib/turn-corpus.ts) is the same for
 * the same seed, and what it claims about each call holds when measured: the
 * echo path returns the answer after the asked delay and at the asked echo
 * return loss, the caller's speech starts at its onset, noise sits at its SNR.
 */

function power(x: ArrayLike<number>, from = 0, to = x.length): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += x[i]! * x[i]!;
  return sum / Math.max(1, to - from);
}

/** Sends `input` through `path` 20 ms at a time (as PCM, or as u-law like a phone line), returns the echo. */
function throughPath(path: EchoPath, input: Float64Array, ulaw: boolean): Float64Array {
  const out = new Float64Array(input.length);
  for (let at = 0; at + 160 <= input.length; at += 160) {
    const frame = Int16Array.from(input.subarray(at, at + 160), Math.round);
    if (ulaw) path.played(encodeMulaw(frame));
    else path.playedPcm(frame);
    out.set(path.next(), at);
  }
  return out;
}

/** The lag (samples) at which `echo` best matches `input`, by cross-correlation over 0..maxLag. */
function measuredLag(input: Float64Array, echo: Float64Array, maxLag: number): number {
  let best = 0;
  let bestCorr = -Infinity;
  for (let lag = 0; lag <= maxLag; lag++) {
    let corr = 0;
    for (let i = 0; i + lag < echo.length; i++) corr += input[i]! * echo[i + lag]!;
    if (corr > bestCorr) [best, bestCorr] = [lag, corr];
  }
  return best;
}

describe("the echo path", () => {
  const input = lineHiss(rng("echo-path-test"), 8000 * 3, -20);

  it.each([
    ["line", 20, 6, false],
    ["line", 120, 15, true],
    ["room", 250, 25, false],
    ["room", 80, 10, true],
  ] as const)(
    "a %s response returns the answer after %i ms at %i dB ERL (u-law: %s)",
    (kind, delayMs, lossDb, ulaw) => {
      const response = kind === "line" ? lineResponse() : roomResponse(7);
      const path = new EchoPath({ delayMs, lossDb, response });
      const echo = throughPath(path, input, ulaw);
      expect(measuredLag(input, echo, 8 * 300) / 8).toBe(delayMs);
      // ERL over the span where the echo is fully present (after the delay and the response's length).
      const from = delayMs * 8 + response.length;
      const erl =
        10 * Math.log10(power(input, from - delayMs * 8, input.length - delayMs * 8) / power(echo, from));
      expect(erl).toBeGreaterThan(lossDb - 0.5);
      expect(erl).toBeLessThan(lossDb + 0.5);
    },
  );

  it("the legacy 3-tap line of the speakerphone tests is kept when no response is given", () => {
    const path = new EchoPath({ delayMs: 0, lossDb: 0 });
    path.playedPcm([1000, ...new Array<number>(159).fill(0)]);
    expect(Array.from(path.next().subarray(0, 4))).toEqual([1000, 350, -150, 0]);
  });

  it("u-law on the way back keeps the echo within a fraction of a dB", () => {
    const pcm = Int16Array.from(input, Math.round);
    const round = decodeMulaw(encodeMulaw(pcm));
    expect(Math.abs(10 * Math.log10(power(round) / power(pcm)))).toBeLessThan(0.1);
  });
});

describe("the turn-taking corpus", () => {
  const corpus = buildCorpus({ seed: 11, minutes: 0.5 });

  it("is the same for the same seed and different for another", () => {
    expect(corpusDigest(buildCorpus({ seed: 11, minutes: 0.5 }))).toBe(corpusDigest(corpus));
    expect(corpusDigest(buildCorpus({ seed: 12, minutes: 0.5 }))).not.toBe(corpusDigest(corpus));
  }, 60_000);

  it("has every kind of call, with echo paths in the asked ranges", () => {
    const kinds = new Set(corpus.map((c) => c.kind));
    expect([...kinds].sort()).toEqual([
      "backchannel",
      "echo-only",
      "interruption",
      "noisy-echo",
      "noisy-interruption",
    ]);
    for (const c of corpus) {
      expect(c.echo.delayMs).toBeGreaterThanOrEqual(20);
      expect(c.echo.delayMs).toBeLessThanOrEqual(250);
      expect(c.echo.lossDb).toBeGreaterThanOrEqual(6);
      expect(c.echo.lossDb).toBeLessThanOrEqual(25);
      expect(c.track.length).toBe(Math.round((c.hangUpMs / 1000) * 8000));
    }
  });

  it("the caller's speech starts at its onset and ends at its end", () => {
    const spoken = corpus.filter(
      (c): c is CorpusCall & { speech: NonNullable<CorpusCall["speech"]> } => !!c.speech,
    );
    expect(spoken.length).toBeGreaterThan(0);
    for (const c of spoken.filter((s) => !s.noise)) {
      const on = Math.round(c.speech.onsetMs * 8);
      const end = Math.round(c.speech.endMs * 8);
      const before = 10 * Math.log10(power(c.track, on - 400, on) / 32768 ** 2);
      const during = 10 * Math.log10(power(c.track, on, end) / 32768 ** 2);
      const after = 10 * Math.log10(power(c.track, end + 80, end + 480) / 32768 ** 2);
      expect(before).toBeLessThan(-60); // only the line's hiss
      expect(after).toBeLessThan(-60);
      expect(during).toBeGreaterThan(SPEECH_LEVEL_DB - 12);
    }
  });

  it("noise sits at its SNR below the speech level", () => {
    for (const c of corpus.filter((x) => x.kind === "noisy-echo")) {
      const level = 10 * Math.log10(power(c.track) / 32768 ** 2);
      expect(Math.abs(level - (SPEECH_LEVEL_DB - c.noise!.snrDb))).toBeLessThan(0.5);
    }
  });
});

describe("the grid's noise steps (--noise-steps)", () => {
  const steps = buildGrid({
    seed: 1,
    perCell: 0,
    echoMinutes: 0,
    erls: [6],
    noiseSteps: 1,
    noiseStepDb: -6,
  }).filter((c) => c.noiseStartMs !== undefined);

  it("switches each noise on mid-call, 6 dB under the echo, with nothing before it but the line's hiss", () => {
    expect(steps.map((c) => c.id)).toEqual(NOISE_STEP_KINDS.map((k) => `grid-noise-${k}-erl6-0`));
    const answer = espeak(ANSWER);
    for (const c of steps) {
      expect(c.kind).toBe("noisy-echo");
      expect(c.speech).toBeUndefined();
      const at = Math.round(c.noiseStartMs! * 8);
      expect(c.noiseStartMs!).toBeGreaterThanOrEqual(3000);
      expect(c.noiseStartMs!).toBeLessThanOrEqual(12_000);
      expect(10 * Math.log10(power(c.track.subarray(0, at)) / 32768 ** 2)).toBeLessThan(-60);
      const response = c.echo.response === "line" ? lineResponse() : roomResponse(c.echo.responseSeed);
      const echo = throughPath(new EchoPath({ delayMs: c.echo.delayMs, lossDb: 6, response }), answer, false);
      const level = 10 * Math.log10(power(c.track.subarray(at)) / 32768 ** 2);
      // The noise's mean power against the echo's active level (babble's own pauses read a dB or two under).
      expect(Math.abs(level - (activeLevelDb(echo) - 6))).toBeLessThan(2.5);
    }
  }, 60_000);
});

describe("the talker-to-echo grid (issue 40)", () => {
  const grid = buildGrid({ seed: 3, perCell: 2, echoMinutes: 0.5, erls: [3, 20], ters: [-10, 0, 10] });

  it("is the same for the same seed", () => {
    const again = buildGrid({ seed: 3, perCell: 2, echoMinutes: 0.5, erls: [3, 20], ters: [-10, 0, 10] });
    expect(corpusDigest(again)).toBe(corpusDigest(grid));
  }, 60_000);

  it("has echo-only calls per ERL and every cell's interruptions, which differ only in the levels", () => {
    const echo = grid.filter((c) => c.kind === "echo-only");
    expect(echo.map((c) => c.echo.lossDb).sort((a, b) => a - b)).toEqual([3, 3, 20, 20]);
    const spoken = grid.filter((c) => c.kind === "interruption");
    expect(spoken).toHaveLength(2 * 2 * 3);
    for (const j of [0, 1]) {
      const nth = spoken.filter((c) => c.id.endsWith(`-${j}`));
      expect(new Set(nth.map((c) => JSON.stringify([c.speech, c.echo.delayMs, c.echo.response]))).size).toBe(
        1,
      );
    }
  });

  it("puts the caller TER dB over the echo the call's own path returns", () => {
    const answer = espeak(ANSWER);
    for (const c of grid.filter((x) => x.kind === "interruption")) {
      const response = c.echo.response === "line" ? lineResponse() : roomResponse(c.echo.responseSeed);
      const path = new EchoPath({ delayMs: c.echo.delayMs, lossDb: c.echo.lossDb, response });
      const echo = throughPath(path, answer, false);
      const speech = c.track.subarray(Math.round(c.speech!.onsetMs * 8), Math.round(c.speech!.endMs * 8));
      const ter = activeLevelDb(speech) - activeLevelDb(echo);
      // Each recording of a paused call is set to the level on its own: the two together read within a dB.
      // Measured on the track, a quiet caller's level takes in the line's hiss between words (-66 dBFS is
      // within the active-level measure's 35 dB of the peaks of a caller under -35 dBFS).
      const quiet = activeLevelDb(speech) < -35;
      expect(Math.abs(ter - c.terDb!)).toBeLessThan(quiet ? 1.5 : c.speech!.pausesMs.length > 0 ? 1 : 0.3);
      // ...and the echo ERL dB under the answer (the response's colour within a dB or two).
      expect(Math.abs(activeLevelDb(answer) - activeLevelDb(echo) - c.echo.lossDb)).toBeLessThan(2.5);
    }
  }, 60_000);
});
