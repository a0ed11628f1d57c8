import { describe, expect, it } from "vitest";
import { echoCancellerAvailable } from "../../src/codecs/echo-canceller.js";
import { DEFAULT_CHAIN, loadChain, runOnsetCall } from "../../bench/lib/onset-latency.js";
import { buildGrid, type GridOptions } from "../../bench/lib/talker-echo-grid.js";
import type { CorpusCall } from "../../bench/lib/turn-corpus.js";

/**
 * The echo guard on issue 40's talker-to-echo grid (bench/onset-latency.bench.ts --grid), on the calls the
 * benches traced, so a change that undoes a fix fails here and not only in a figure.
 */
describe.skipIf(!echoCancellerAvailable())("the echo guard on the talker-to-echo grid", () => {
  /** The calls of these ids in the grid built with `options`, every one of them found (the ids depend on the options). */
  function gridCalls(options: GridOptions, ids: string[]): CorpusCall[] {
    const calls = buildGrid(options).filter((c) => ids.includes(c.id));
    expect(calls.map((c) => c.id).sort()).toEqual([...ids].sort());
    return calls;
  }

  /**
   * The grid's interruption calls of these ids (built with `perCell` calls a cell, as the bench ran it: the calls
   * depend on it) through today's chain, the answer starting `answerStartMs` into the call (the bench's
   * --answer-start-ms): no false onset, the caller heard, within `underMs` of its P.56 onset.
   */
  async function expectHeard(
    seed: number,
    perCell: number,
    ids: string[],
    underMs = Number.POSITIVE_INFINITY,
    answerStartMs = DEFAULT_CHAIN.answerStartMs,
  ) {
    const chain = await loadChain("change");
    const erls = [...new Set(ids.map((id) => Number(/erl(\d+)/.exec(id)![1])))];
    const ters = [...new Set(ids.map((id) => Number(/ter(-?\d+)/.exec(id)![1])))];
    for (const call of gridCalls({ seed, perCell, echoMinutes: 0, erls, ters }, ids)) {
      const r = await runOnsetCall(call, { ...DEFAULT_CHAIN, answerStartMs, echo: { tailMs: 300 } }, [chain]);
      const c = r.chains.change!;
      expect(c.falseOnsets, call.id).toBe(0);
      expect(c.activeDetectMs, call.id).toBeDefined();
      expect(c.activeDetectMs!, call.id).toBeLessThan(underMs);
    }
  }

  /**
   * The grid's echo-only calls of these ids (built as the bench builds them with the reference drifting, `--grid
   * --per-cell 2 --echo-minutes 6 --erls 3,6 --ters=-6,-3,0 --jitter-frames 2`) through today's chain: no onset.
   */
  async function expectNoCut(seed: number, ids: string[]) {
    const chain = await loadChain("change");
    const grid = { seed, perCell: 2, echoMinutes: 6, erls: [3, 6], ters: [-6, -3, 0] };
    for (const call of gridCalls(grid, ids)) {
      const r = await runOnsetCall(call, { ...DEFAULT_CHAIN, jitterFrames: 2, echo: { tailMs: 300 } }, [
        chain,
      ]);
      expect(r.chains.change!.falseOnsets, call.id).toBe(0);
    }
  }

  it("hears a caller louder than the echo right after a loud syllable of the answer as soon as the filter accounts for the echo", async () => {
    // Seed 1's first call at ERL 6 dB, TER -3 and 0 dB: the bar (the loudest reference frame within two frames
    // of the delay) stood 7-20 dB over the echo on the line; the caller over the echo left the canceller's
    // output within 1 dB of its input, which the residual detector refused as a filter that took nothing
    // off. Heard 403 ms after the P.56-active onset before, 183 ms with the filter's own estimate consulted.
    await expectHeard(1, 1, ["grid-erl6-ter-3-0", "grid-erl6-ter0-0"], 300);
  });

  it("hears a caller over a voiced echo as loud as they are by a pitch the answer does not have", async () => {
    // Double talk proper: seed 1's first call at ERL 3 and 6 dB, TER -3 dB, the answer from 1600 ms. The caller's
    // first syllable falls on the answer's voiced stretch, the echo as loud as the caller, and the reference explains
    // most of each frame: held, heard 303-343 ms after the P.56 onset before, 163 ms with the foreign-voice test
    // (double-talk.ts, FOREIGN_PITCH), as the caller's pitch is none of the answer's.
    await expectHeard(1, 4, ["grid-erl3-ter-3-0", "grid-erl6-ter-3-0"], 250, 1600);
  });

  it("hears a caller's voice the answer does not have from its onset, the newest 40 ms read as well as 60 ms", async () => {
    // Seed 1's first call at ERL 3-10 dB, TER -3 and 0 dB, the answer from 800 ms: the caller's first syllable over a
    // voiced echo at its level passed as double talk but for one frame, which the 60 ms window (a third of it the
    // echo's alone) read 0.49 foreign; the syllable's run fell short of the gate's 120 ms and the caller was heard at
    // the next, 323-343 ms after the P.56 onset. The 40 ms window read too (foreign-pitch.ts, ONSET_WINDOW_FRAMES):
    // 143 ms.
    await expectHeard(1, 4, ["grid-erl3-ter-3-0", "grid-erl6-ter-3-0", "grid-erl10-ter0-0"], 250, 800);
  });

  it("hears a quiet caller's voice the answer does not have over the line's echo-free noise, not the echo's quiet part", async () => {
    // Seed 1's fourth call (a room at 141 ms) at ERL 20 dB, TER -3 dB (the caller at -42 dBFS), the answer from 800 ms:
    // through a continuous answer the guard's noise bar is the echo's own quiet part, and the caller's voiced frames
    // stood under it plus the foreign-voice test's 3 dB: held, heard 461 ms after the P.56 onset. Weighed against the
    // echo-free bar where lower: 201 ms.
    await expectHeard(1, 4, ["grid-erl20-ter-3-3"], 300, 800);
  });

  it("hears a caller under an echo the canceller took out, where the output holds none of the answer's pitch", async () => {
    // Seed 1's fourth call (a room at 141 ms) at ERL 3 and 6 dB, TER -3 dB, the answer from 1200 ms: the caller's first
    // syllable passed but for single frames 8-10 dB under an echo the canceller took out, the output at the caller's
    // level, 0.2-0.3 explained, 0.6-0.72 foreign; the gate's 120 ms run broke and the caller was heard at the next
    // syllable, 441 ms after the P.56 onset. The output held none of the answer's pitch there (0.03-0.11 at its periods,
    // where the echo alone read 0.4-0.8; double-talk.ts, ECHO_PITCH_GONE): 201 ms.
    await expectHeard(1, 4, ["grid-erl3-ter-3-3", "grid-erl6-ter-3-3"], 300, 1200);
  });

  it("hears a caller's first syllable further under the echo bar, half explained, where the output holds none of the answer's pitch", async () => {
    // Seed 1's first call at ERL 10 dB, TER -6 dB, the answer from 1200 ms: the caller's first frames stood 12.4-14.4 dB
    // under the bar at 0.53-0.54 explained (the coherence smoothed over the echo before them) and 0.05-0.09 at the
    // answer's periods; held, the gate's 120 ms run broke two frames short: 343 ms after the P.56 onset, 143 now
    // (double-talk.ts, ECHO_BAR_REACH and ECHO_GONE_EXPLAINED).
    await expectHeard(1, 4, ["grid-erl10-ter-6-0"], 300, 1200);
  });

  it("holds a lost filter's echo, periodic at neither pitch, that the answer's pitch gone would let through", async () => {
    // Drifting seed 1: a filter that lost the echo mixes it with an estimate of another stretch of the answer, which
    // holds neither pitch. Without the bounds on the echo bar's reach and the coherence (double-talk.ts,
    // ECHO_BAR_REACH, ECHO_GONE_EXPLAINED) these two answers were cut at 6.9 s and 14.2 s (drifting seeds 1-20: 36
    // answers cut where 8 without the test); either bound alone holds them.
    await expectNoCut(1, ["grid-echo-erl3-14", "grid-echo-erl6-0"]);
  });

  it("holds a misadapted filter's output that stands over the bar louder than the caller frame it comes from", async () => {
    // Drifting seeds 6 and 15, lines at ERL 6 dB: after a slip the filter added an estimate of echo that was not
    // there, and its output stood over the bar 2-4 dB louder than its input; passed whole, four such frames within
    // 140 ms cut the answer 8.5 s and 7.4 s in. Over the bar, a frame more than 3 dB louder than its input is now
    // weighed by the double-talk tests (echo-guard.ts, OVER_BAR_MAX_GAIN).
    await expectNoCut(6, ["grid-echo-erl6-15"]);
    await expectNoCut(15, ["grid-echo-erl6-1"]);
  });

  it("hears a caller 6 dB under the echo from the first frames of its onset over a converged filter", async () => {
    // Seed 1's first call at ERL 6 and 10 dB, TER -6 dB: the caller's first frame left the canceller's output
    // 10.7 dB under its input (over MIN_KEPT's 10 dB then) and its second read 0.61-0.62 explained (over the
    // hang's 0.6), so the gate's 120 ms run broke and the caller's first syllable was lost: heard 423 ms after
    // the P.56-active onset before, 163 ms (as the gate alone, no echo, hears it) with MIN_KEPT at 12 dB and
    // the hang at 0.65 after a frame armed at the output's speech onset.
    await expectHeard(1, 1, ["grid-erl6-ter-6-0", "grid-erl10-ter-6-0"], 300);
  });

  it("hears a caller 2-3 s into the first answer, the filter still converging, once it takes the echo off", async () => {
    // Seed 2's first call at ERL 6 dB, TER -6 dB: the attenuation windows (1 s) still held the filter's first
    // second (1.6 dB measured while it was taking 8-12 dB off the frames around the caller), so the residual
    // detector's "6 dB over what the canceller leaves" could not hold and the caller was missed. Half-second
    // windows until the 1 s ones are all measured: heard.
    await expectHeard(2, 4, ["grid-erl6-ter-6-0"]);
  });
  it("hears a caller whose first frames the VAD on the output reads under 0.9, where they stand far over the canceller's residual", async () => {
    // Seed 2's fourth call (a room at 31 ms delay) at ERL 6 and 10 dB, TER -6 dB: the Silero VAD on the output
    // read the caller's first four frames 0.74-0.89 (it had heard the residual echo as speech at 0.95), the
    // residual detector asked 0.9, and the coherence read 0.21-0.33; the canceller, taking 20 dB off the echo,
    // left them 1-4 dB under their input. Held, the first syllable missed the gate's 120 ms run: heard 625 ms
    // after the P.56-active onset before, 125 ms (as the gate alone hears it) with 0.6 passing 16 dB over.
    await expectHeard(2, 4, ["grid-erl6-ter-6-3", "grid-erl10-ter-6-3"], 300);
  });

  it("hears a caller whose first frame the VAD on the output reads 0.5-0.9, where the echo cannot account for its power", async () => {
    // Seed 2's fourth call (a room at 31 ms delay) at ERL 3 dB, TER -3 dB: the caller's first two frames (-21..-19
    // dBFS over an echo at -23..-25) read 0.57 to the Silero VAD on the output (the rising frames' rule asks 0.6)
    // and 0.29-0.33 explained (the coherence test asks under 0.2). Held, the first syllable missed the gate's 120
    // ms run by a frame: heard 625 ms after the P.56-active onset. Where the caller-channel frame stands 3 dB over
    // the echo the reference predicts, 0.5 and the strict coherence bound (0.35): 265 ms.
    await expectHeard(2, 4, ["grid-erl3-ter-3-3"], 300);
  });

  it("hears a caller over the echo whose first frame the smoothed coherence still reads 0.36", async () => {
    // Seed 2's fourth call (a room at 31 ms) at ERL 6 dB, TER 0 dB, the answer from 1600 ms: the caller's first frame
    // (-21 dBFS over an echo at -29, the VAD on the output at 0.78) read 0.36 explained against the strict 0.35, the
    // next four passed over the bar and the one after them was held (0.38, no hang armed): four frames of the gate's
    // six, and the caller was heard at the next syllable, 625 ms after the P.56 onset. Under 0.4 for such a frame
    // (the hang armed by it): 125 ms.
    await expectHeard(2, 4, ["grid-erl6-ter0-3"], 300, 1600);
  });

  it("hears a caller 6 dB under the echo whose first loud frames the smoothed coherence reads as the echo's", async () => {
    // Seed 2's fourth call (a room at 31 ms) at ERL 3 and 6 dB, TER -6 dB, the answer from 1200 ms: the caller's
    // first syllable stood 7-20 dB over the echo then, the VAD on the output at speech, but the coherence, smoothed
    // over about six frames, read 0.37-0.43 (the strict bound 0.35): held, heard 625 and 645 ms after the P.56
    // onset. Beyond chance those frames read 0.04-0.07: 145 and 245 ms.
    await expectHeard(2, 4, ["grid-erl3-ter-6-3", "grid-erl6-ter-6-3"], 300, 1200);
  });

  it("hears a caller whose rising first frame stands 10-16 dB over the residual where little of it is explained beyond chance", async () => {
    // Seed 2's fourth call (a room at 31 ms) at ERL 3 dB TER -6 dB and ERL 20 dB TER -3 dB, the answer from 400 ms: its first
    // frame read 0.65 on the VAD, 15.3 dB over the canceller's residual (a rising frame needed 16), 0.31 explained and
    // 0.05 beyond chance: held, the gate's run broke and the caller was heard 625 ms after the P.56 onset; 125 ms
    // with the near-residual rule.
    await expectHeard(2, 4, ["grid-erl3-ter-6-3", "grid-erl20-ter-3-3"], 300, 400);
  });

  it("holds a drifting filter's lost echo that reads low beyond chance, letting no hang follow such a frame", async () => {
    // Drifting seeds 2 and 8, a line at ERL 6 dB, 2.3 s into the answer: a filter that lost the echo read 0.41
    // explained and 0.13 beyond chance; a frame passed so that armed the hang let the frames after it through
    // (0.41-0.6) and the answer cut itself (9 of drifting seeds 1-20).
    await expectNoCut(2, ["grid-echo-erl6-4"]);
    await expectNoCut(8, ["grid-echo-erl6-4"]);
  });

  it("holds a drifting filter's lost echo that a looser bound for a rising frame over the predicted echo let through", async () => {
    // Drifting seed 5's line at ERL 3 dB: with 0.45 for a rising frame over the predicted echo, it cut its answer
    // 19.4 s in.
    await expectNoCut(5, ["grid-echo-erl3-6"]);
  });

  it("holds a drifting filter's lost echo the VAD reads 0.5-0.9 where the reference predicts that echo", async () => {
    // Seed 4, the reference drifting +-2 frames: with 0.5 for any frame, not only one over the predicted echo,
    // a room's echo-only answer cut itself 17 s in (45 cuts on drifting seeds 1-20).
    await expectNoCut(4, ["grid-echo-erl3-7"]);
  });

  it("hears a caller 2-3 s into the first answer at ERL 10 and 20 dB, the filter still converging", async () => {
    // Seed 2's first call at ERL 10 and 20 dB, TER -6 dB: the early windows measured 7.4 dB off, the filter
    // then took more frame by frame, and the caller's frames stood only 3-7 dB over what they measured: missed
    // with "6 dB over"; 3 dB while the attenuation is read from the early windows: heard.
    await expectHeard(2, 4, ["grid-erl10-ter-6-0", "grid-erl20-ter-6-0"]);
  });

  it("hears a caller at the echo's level 2 s into the first answer, over a filter that has taken 4 dB off", async () => {
    // Seed 2's first call with the answer from 800 ms, ERL 6 and 20 dB, TER -6 and 0 dB: the early windows measured
    // the filter 1.9-4.1 dB in, the caller left the output 0.4-1.2 dB under its input at 0.29-0.41 explained, and
    // MAX_KEPT or the level test's 3 dB over that residual held it frame after frame: missed. A filter under 6 dB
    // in counts as barely converged (the coherence alone decides): heard 404 and 218 ms after the P.56 onset.
    await expectHeard(2, 4, ["grid-erl6-ter-6-0", "grid-erl20-ter0-2"], 500, 800);
  });

  it("holds a drifting echo early in an answer where the filter has taken 6-8 dB off", async () => {
    // Drifting seed 12's room at ERL 6 dB: with 8 dB for "barely converged" its answer cut itself 3.2 s in.
    await expectNoCut(12, ["grid-echo-erl6-3"]);
  });

  it("hears a caller over a continuous answer whose echo's quiet part had been taken for the line's noise", async () => {
    // Seed 1's fourth call (a room, 141 ms delay) at ERL 6 and 20 dB, TER 0 dB: the caller at -28..-31 dBFS stood
    // under the noise bar (-30 dBFS: the quietest caller-channel frame of a second of answer, the echo's own at
    // -40), so neither double-talk test weighed it: heard 501 ms after the P.56-active onset at ERL 6 dB, missed
    // at 20. With the quietest frame the echo cannot account for (line-noise.ts): 141 and 161 ms.
    await expectHeard(1, 4, ["grid-erl6-ter0-3", "grid-erl20-ter0-3"], 300);
  });

  it("hears that caller 3 and 6 dB under the echo, where the reference six frames back would have held its second syllable", async () => {
    // The same call at ERL 6 dB, TER -3 and -6 dB: the caller's second syllable (-31..-32 dBFS, no echo on the
    // line) stood under "3 dB over the reference six frames back" (-26 dBFS, predicting -32) counted whole, so two
    // frames fell to the other bar and the gate's run of six broke at three: missed. The older frames counted
    // 2 dB less per frame further back: heard 161 ms after the P.56-active onset.
    await expectHeard(1, 4, ["grid-erl6-ter-3-3", "grid-erl6-ter-6-3"], 300);
  });

  it("hears that caller's syllable to its end after frames let through as double talk, under the quietest frame's bar", async () => {
    // The same call at ERL 3, 6 and 10 dB, TER -6 dB, the answer from 800 ms (as the bench's --answer-start-ms runs
    // it): five frames of the caller's second syllable (-26..-28 dBFS) passed, three as double talk, and its decaying
    // sixth (-32 dBFS, the echo at -48, 0.08 explained) stood under the noise bar (-28.5 dBFS: the quietest
    // caller-channel frame of the last second, the caller and the room's echo) where no double-talk test weighed
    // it: the gate's run of six broke at five and the caller was missed at every ERL. Within the hang of a frame let
    // through as double talk it is weighed against the echo-free bar by the coherence test: heard 161 ms after the
    // P.56-active onset.
    await expectHeard(1, 4, ["grid-erl3-ter-6-3", "grid-erl6-ter-6-3", "grid-erl10-ter-6-3"], 300, 800);
  });

  it("holds a drifting filter's lost echo under the noise bar after frames of it let through as double talk", async () => {
    // Drifting seeds 3 and 8: a lost echo passed as double talk for one to four frames (0.25-0.34 explained), and the
    // frames after it, under the noise bar, went through against the echo-free bar by the residual test's bounds
    // (the hang's 0.6 on seed 3, the strict 0.35 on seed 8 at 0.30-0.31): the gate heard a turn. By the coherence
    // test's fifth alone, held.
    await expectNoCut(3, ["grid-echo-erl6-9"]);
    await expectNoCut(8, ["grid-echo-erl6-9", "grid-echo-erl3-15"]);
  });

  it("holds a drifting filter's lost echo in an answer's quiet part under the bar of the quietest frame of all", async () => {
    // Seed 9, the reference drifting +-2 frames: a filter that lost the echo left it 1-6 dB under its input,
    // 0.3 explained, under the quietest caller-channel frame's bar but over the echo-free one; weighed against
    // that, the residual detector passed it and the answer cut itself (17.9 s and 21.4 s in). The echo-free
    // bar is only for a caller-channel frame 3 dB over the echo the reference predicts in it.
    await expectNoCut(9, ["grid-echo-erl3-1", "grid-echo-erl6-9"]);
  });

  it("hears a quiet caller over the echo whose dips and held frames kept breaking the gate's 120 ms run", async () => {
    // Seed 1's fourth call at ERL 20 dB, TER -3 dB (the caller at -42 dBFS P.56, a room at 141 ms): its syllables
    // passed the guard whole, but the frames between them, under the gate's -45 dBFS or held as echo, each took a
    // whole point off the VAD's onset score, and the run never reached 120 ms: missed at every answer start. Under
    // this quiet echo the gate's noise floor is the guard's held frames (30 dB under the canceller's output), under
    // -70 dBFS, where a gap now weighs a quarter (codecs/vad.ts, QUIET_GAP_WEIGHT): heard 201 and 481 ms after its
    // P.56 onset.
    await expectHeard(1, 4, ["grid-erl20-ter-3-3"], 600);
    await expectHeard(1, 4, ["grid-erl20-ter-3-3"], 600, 1200);
  });
});
