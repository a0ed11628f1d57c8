import { afterEach, describe, expect, it } from "vitest";
import { createEchoCanceller, echoCancellerAvailable } from "../../codecs/echo-canceller.js";
import { sileroVadAvailable } from "../../codecs/silero-model.js";
import { loadSpeech } from "../../codecs/testing/audio-tools.js";
import { phoneLine as line } from "../../codecs/testing/phone-line.js";
import { EchoGuard, resolveEchoCancellation, type WordsProbePort } from "./echo-guard.js";
import { SpeechGate } from "./speech-gate.js";

const RATE = 8000;
const FRAME = 160;
const open: Array<{ close(): void }> = [];
afterEach(() => {
  for (const o of open.splice(0)) o.close();
});

describe("resolveEchoCancellation", () => {
  it("fills the defaults", () => {
    expect(resolveEchoCancellation()).toEqual({
      enabled: true,
      tailMs: 300,
      denoise: false,
      doubleTalk: true,
      residualVad: true,
      foreignVoice: true,
      echoPitchGone: true,
    });
  });

  it.each([
    [{ tailMs: 19 }, "talk.input.echoCancellation.tailMs"],
    [{ tailMs: 1001 }, "talk.input.echoCancellation.tailMs"],
    [{ tailMs: Number.NaN }, "talk.input.echoCancellation.tailMs"],
    [{ enabled: "yes" as unknown as boolean }, "talk.input.echoCancellation.enabled"],
    [{ denoise: 1 as unknown as boolean }, "talk.input.echoCancellation.denoise"],
    [{ doubleTalk: "on" as unknown as boolean }, "talk.input.echoCancellation.doubleTalk"],
    [{ residualVad: 1 as unknown as boolean }, "talk.input.echoCancellation.residualVad"],
    [{ foreignVoice: "no" as unknown as boolean }, "talk.input.echoCancellation.foreignVoice"],
    [{ echoPitchGone: 1 as unknown as boolean }, "talk.input.echoCancellation.echoPitchGone"],
  ])("refuses %j naming %s", (options, key) => {
    expect(() => resolveEchoCancellation(options)).toThrow(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => resolveEchoCancellation(options)).toThrow(key);
  });
});

/** Uniform noise at about -35 dBFS, steady, reproducible from `seed`. */
function steadyNoise(length: number, seed: number): Int16Array {
  let state = seed;
  return new Int16Array(length).map(() => {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    return Math.round(((state / 2 ** 32) * 2 - 1) * 1000);
  });
}

/** The sample at which the loudest 100 ms of `pcm` within [from, to) ends, on a 20 ms grid. */
function loudestEnd(pcm: Int16Array, from: number, to: number): number {
  let best = from;
  let most = 0;
  for (let end = from; end < to; end += FRAME) {
    const e = level(pcm, end - 800, end);
    if (e > most) [best, most] = [end, e];
  }
  return best;
}

function level(pcm: Int16Array, from: number, to: number): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += (pcm[i] ?? 0) ** 2;
  return sum / Math.max(1, to - from);
}

/**
 * A caller under the echo, as one test heard them (`tested`) beside a baseline (`baseline`) and the caller
 * alone (`alone`, one onset): heard at most once, never before the caller speaks, never later than the baseline.
 */
function expectOnsetNoLater(tested: number[], baseline: number[], alone: number[]): void {
  expect(alone).toHaveLength(1);
  expect(tested.length).toBeLessThanOrEqual(1);
  if (tested.length > 0) expect(tested[0]!).toBeGreaterThanOrEqual(alone[0]!);
  if (baseline.length > 0) expect(tested[0]!).toBeLessThanOrEqual(baseline[0]!);
}

/** The gate's speech onsets (ms) on the guard's output, the reference fed in step, 20 ms at a time. */
function onsets(
  mic: Int16Array,
  far: Int16Array,
  {
    cancel = true,
    denoise = false,
    doubleTalk = true,
    residualVad = false,
    words,
    foreignVoice = false,
  }: {
    /** Through the guard (default); false is the microphone straight to the gate, the no-guard baseline. */
    cancel?: boolean;
    denoise?: boolean;
    doubleTalk?: boolean;
    residualVad?: boolean;
    words?: WordsProbePort;
    foreignVoice?: boolean;
  } = {},
): number[] {
  // The foreign-voice test off unless asked: these cases weigh the other tests, each measured without it.
  const guard = new EchoGuard(
    (o) => createEchoCanceller(o),
    resolveEchoCancellation({ denoise, doubleTalk, residualVad, foreignVoice }),
    RATE,
    words,
  );
  const gate = new SpeechGate({ threshold: -45, minSpeechMs: 120, silenceMs: 800, sampleRate: RATE });
  open.push(guard, gate);
  const found: number[] = [];
  for (let at = 0; at + FRAME <= mic.length; at += FRAME) {
    const frame = mic.subarray(at, at + FRAME);
    const heard = cancel ? guard.process(frame, far.subarray(at, at + FRAME)) : frame;
    if (gate.process(heard) === "speech-start") found.push(at / 8);
  }
  return found;
}

describe.skipIf(!echoCancellerAvailable())("EchoGuard (libspeexdsp)", () => {
  const far = loadSpeech("librivox/sense_and_sensibility_01_austen_64kb-0870.wav", RATE).subarray(
    0,
    RATE * 8,
  );
  const near = loadSpeech("goforward.raw", RATE);
  /**
   * The caller from `at`, `under` times the level of `echo` (the answer over a 6 dB echo return, 120 ms):
   * the microphone with both, and the gate's onsets on the caller alone.
   */
  const callerUnderEcho = (echo: Int16Array, under: number, at: number) => {
    const gain = under * Math.sqrt(level(echo, at, far.length) / level(near, 0, far.length - at));
    return {
      mic: line(far, 120, 6, { pcm: near, at, gain }),
      alone: onsets(line(new Int16Array(far.length), 120, 6, { pcm: near, at, gain }), far, {
        cancel: false,
      }),
    };
  };

  for (const [delayMs, lossDb] of [
    [20, 6],
    [120, 6],
    [250, 6],
    [120, 12],
  ] as const) {
    it(`an echo-only call (${delayMs} ms, ${lossDb} dB) starts no speech at the gate; without the guard it does`, () => {
      const mic = line(far, delayMs, lossDb);
      expect(onsets(mic, far)).toEqual([]);
      expect(onsets(mic, far, { cancel: false }).length).toBeGreaterThan(0);
    });
  }

  it("a speakerphone whose echo returns as loud as the answer (0-2 dB) starts no speech in the answer's first seconds, before its return is measured", () => {
    // Another recording's first 3 s: its loud start comes before the first echo-return window closes. With the
    // 6 dB a Geigel test assumes, each of these lines let the echo over the bar long enough to start speech.
    const answer = loadSpeech("librivox/sense_and_sensibility_01_austen_64kb-0880.wav", RATE).subarray(
      0,
      RATE * 3,
    );
    for (const [delayMs, lossDb] of [
      [120, 0],
      [250, 0],
      [120, 1],
      [250, 1],
      [120, 2],
      [250, 2],
    ] as const) {
      const mic = line(answer, delayMs, lossDb);
      expect(
        onsets(mic, answer, { cancel: false }).length,
        `${delayMs} ms, ${lossDb} dB, no guard`,
      ).toBeGreaterThan(0);
      expect(onsets(mic, answer), `${delayMs} ms, ${lossDb} dB`).toEqual([]);
    }
  });

  it("with denoise (the canceller's output a frame late) the bar follows that lag: echo-only calls start no speech", () => {
    for (const [delayMs, lossDb] of [
      [20, 6],
      [250, 6],
    ] as const)
      expect(onsets(line(far, delayMs, lossDb), far, { denoise: true })).toEqual([]);
  });

  it("a caller as loud as the assistant is heard over the echo, within 60 ms of the onset without echo", () => {
    const at = RATE * 3;
    const alone = onsets(line(new Int16Array(far.length), 120, 6, { pcm: near, at, gain: 3 }), far, {
      cancel: false,
    });
    const over = onsets(line(far, 120, 6, { pcm: near, at, gain: 3 }), far);
    expect(alone).toHaveLength(1);
    // The same onset, at most three frames later (the residual test drops the quietest start of a word).
    expect(over).toHaveLength(1);
    expect(over[0]! - alone[0]!).toBeGreaterThanOrEqual(0);
    expect(over[0]! - alone[0]!).toBeLessThanOrEqual(60);
  });

  it("a caller at or under the echo's level (6 dB echo return) is heard over the answer with the double-talk test, where the bar alone waits for a dip", () => {
    const echo = line(far, 120, 6);
    const heard = { tested: 0, waited: 0 };
    for (const under of [1, 0.7, 0.5, 0.35])
      for (const at of [RATE * 3, RATE * 4, RATE * 5]) {
        const { mic, alone } = callerUnderEcho(echo, under, at);
        const tested = onsets(mic, far);
        const waited = onsets(mic, far, { doubleTalk: false });
        // Never before the caller speaks, never twice, and never later than the bar alone.
        expectOnsetNoLater(tested, waited, alone);
        heard.tested += tested.length;
        heard.waited += waited.length;
      }
    // Measured: heard in 7 of the 12 with the test (240-400 ms after the gate on the caller alone), 5 without
    // (the bar alone: the return is measured from one window after the answer's lead, no longer at the next
    // window's slot, and the caller 3 s in stands over the measured bar).
    expect(heard.tested).toBeGreaterThanOrEqual(heard.waited + 2);
  });

  /**
   * Echo only (6 dB, 120 ms), through a scripted canceller: it takes 30 dB off for 4 s (the measured
   * attenuation), then puts out its input times `slipDb` (a filter the reference's slip misadapted), of which
   * the reference explains `explained`. The frames under the bar let through as the caller after the slip.
   * The foreign-voice test is off unless asked: these cases weigh the other tests.
   */
  const passedAfterSlip = (slipDb: number, explained: number, residualVad = true): number =>
    passedAfterChange((mic) => mic.map((v) => Math.round(v * 10 ** (slipDb / 20))), explained, residualVad);
  /** The same scripted canceller, whose output after 4 s is `after(mic, previous)` (`previous`: the last input frame). */
  const passedAfterChange = (
    after: (mic: Int16Array, previous: Int16Array) => Int16Array,
    explained: number,
    residualVad = true,
  ): number => slipped(after, explained, { residualVad, foreignVoice: false, echoPitchGone: false }).frames;
  /**
   * The frames let through as double talk after the change and the longest run of them in a row; `passed`: every
   * frame let through after it, over the bar or under it.
   */
  const slipped = (
    after: (mic: Int16Array, previous: Int16Array) => Int16Array,
    explained: number,
    options: { residualVad: boolean; foreignVoice: boolean; echoPitchGone: boolean },
  ): { frames: number; longestRun: number; passed: number } => {
    const echo = line(far, 120, 6);
    let processed = 0;
    let previous = new Int16Array(0);
    const guard = new EchoGuard(
      () => ({
        played: () => undefined,
        process: (mic) => {
          const out =
            processed < RATE * 4 ? mic.map((v) => Math.round(v * 10 ** (-30 / 20))) : after(mic, previous);
          processed += mic.length;
          previous = mic.slice();
          return out;
        },
        explainedWithin: () => explained,
        close: () => undefined,
      }),
      resolveEchoCancellation(options),
      RATE,
    );
    open.push(guard);
    let run = 0;
    let longestRun = 0;
    let passedBefore = 0;
    for (let at = 0; at + FRAME <= echo.length; at += FRAME) {
      if (at === RATE * 4) {
        guard.doubleTalkFrames = 0;
        passedBefore = guard.framesUnderEcho - guard.suppressedFrames;
      }
      const before = guard.doubleTalkFrames;
      guard.process(echo.subarray(at, at + FRAME), far.subarray(at, at + FRAME));
      run = guard.doubleTalkFrames > before ? run + 1 : 0;
      longestRun = Math.max(longestRun, run);
    }
    return {
      frames: guard.doubleTalkFrames,
      longestRun,
      passed: guard.framesUnderEcho - guard.suppressedFrames - passedBefore,
    };
  };

  it("the coherence test lets nothing through that is over 6 dB louder than the caller frame it comes from", () => {
    // Under the bar and explained under a fifth: the caller, where the output is under its input.
    expect(passedAfterSlip(-4, 0.1, false)).toBeGreaterThan(0);
    // Measured on drifting references (bench/onset-latency.bench.ts --grid --jitter-frames 2): a misadapted
    // filter put out -36 dBFS from a -66 dBFS line as an answer resumed, explained under a fifth.
    expect(passedAfterSlip(10, 0.1, false)).toBe(0);
  });

  it("lets no frame over the bar through whole that comes out over 3 dB louder than its input: a misadapted filter's", () => {
    // A filter misadapted after the reference slipped adds an estimate of echo that is not there: drifting seeds 6
    // and 15 put out frames over the bar 2-4 dB louder than their input, and four of them cut the answer
    // (bench/onset-latency.bench.ts --grid --jitter-frames 2). A caller over the echo leaves the output under its input.
    const tests = { residualVad: false, foreignVoice: false, echoPitchGone: false };
    const louder = (db: number) => (mic: Int16Array) => mic.map((v) => Math.round(v * 10 ** (db / 20)));
    // Explained 0.9: no double-talk test passes these frames, so what gets through is what the bar let pass whole.
    // 2.5 dB louder: frames over the bar pass whole (33); 4 dB louder: none (53 without OVER_BAR_MAX_GAIN).
    expect(slipped(louder(2.5), 0.9, tests).passed).toBeGreaterThan(20);
    expect(slipped(louder(4), 0.9, tests).passed).toBe(0);
  });

  describe.skipIf(!sileroVadAvailable())(
    "with residualVad (the Silero VAD on the canceller's output)",
    () => {
      it("echo-only calls start no speech at the gate", () => {
        for (const [delayMs, lossDb] of [
          [20, 6],
          [120, 6],
          [250, 6],
          [120, 3],
          [120, 12],
        ] as const)
          expect(onsets(line(far, delayMs, lossDb), far, { residualVad: true })).toEqual([]);
      });

      it("a caller up to 6 dB under the echo (6 dB echo return) is heard sooner than by the coherence test alone", () => {
        const echo = line(far, 120, 6);
        const heard = { with: 0, without: 0, sooner: 0 };
        for (const under of [1, 0.7, 0.5])
          for (const at of [RATE * 3, RATE * 4, RATE * 5]) {
            const { mic, alone } = callerUnderEcho(echo, under, at);
            const without = onsets(mic, far);
            const tested = onsets(mic, far, { residualVad: true });
            // Never before the caller speaks, never twice, never later than without it.
            expectOnsetNoLater(tested, without, alone);
            heard.with += tested.length;
            heard.without += without.length;
            if (tested.length > 0 && (without.length === 0 || tested[0]! < without[0]!)) heard.sooner++;
          }
        // Measured: heard in 9 of the 9 (20-280 ms after the gate on the caller alone), 6 without; sooner in 6.
        expect(heard.with).toBeGreaterThanOrEqual(heard.without + 3);
        expect(heard.sooner).toBeGreaterThanOrEqual(4);
      });

      it("with foreignVoice, hears a caller under the echo no later, and an echo-only answer still never", () => {
        const echo = line(far, 120, 6);
        const on = (mic: Int16Array) => onsets(mic, far, { residualVad: true, foreignVoice: true });
        let sooner = 0;
        for (const under of [1, 0.7, 0.5])
          for (const at of [RATE * 3, RATE * 4, RATE * 5]) {
            const { mic, alone } = callerUnderEcho(echo, under, at);
            const without = onsets(mic, far, { residualVad: true });
            const tested = on(mic);
            expectOnsetNoLater(tested, without, alone);
            if (tested.length > 0 && (without.length === 0 || tested[0]! < without[0]!)) sooner++;
          }
        // Measured: 2 of the 9 sooner (the grid's double talk proper is test/bench/onset-grid.test.ts's).
        expect(sooner).toBeGreaterThanOrEqual(1);
        for (const loss of [3, 6, 10]) expect(on(line(far, 120, loss))).toEqual([]);
      });

      it("lets no noise switching on during the answer through as double talk: the coherence test needs the VAD to hear speech", () => {
        // Steady noise from 2 s into the answer (10 dB echo return), unexplained by the reference; the same noise
        // alone starts no turn at the gate. Without the Silero VAD's word, the coherence test let it through
        // between the frames held as echo before the noise bar followed it up, and the gate heard a turn.
        const at = RATE * 2;
        const noise = steadyNoise(far.length - at, 13);
        const mic = line(far, 120, 10, { pcm: noise, at, gain: 1 });
        expect(
          onsets(line(new Int16Array(far.length), 120, 10, { pcm: noise, at, gain: 1 }), far, {
            cancel: false,
          }),
        ).toEqual([]);
        expect(onsets(mic, far)).toHaveLength(1);
        expect(onsets(mic, far, { residualVad: true })).toEqual([]);
      });

      it("lets no drifting echo through where the output is within 1 dB of its input or over 10 dB under it", () => {
        // A caller up to 6 dB under the echo leaves the output 1-7 dB under the input: heard.
        expect(passedAfterSlip(-4, 0.3)).toBeGreaterThan(0);
        // Measured on drifting references (bench/onset-latency.bench.ts --grid --jitter-frames 2): a filter that
        // slipped took 0.5-1.7 dB or 10-16 dB off the echo, explained 0.30-0.36 (under 0.35), which the VAD heard as speech.
        expect(passedAfterSlip(-0.5, 0.3)).toBe(0);
        expect(passedAfterSlip(-12, 0.3)).toBe(0);
      });

      // The echo keeps the answer's pitch, so a pitch test lets its frames through at most one by one, and neither
      // arms a hang: no such frame bridges the gate's 120 ms.
      // - The foreign-voice test: the odd frame reads foreign (0.14% of the grid's echo-only frames at 0.75, none three
      //   in a row: docs/notes/performance-history.md); weighed against the line's echo-free noise, the filter slipped
      //   to 0.5 dB under its input let one such frame through.
      // - The echo-pitch test: one of this scripted echo's frames read 0.14 at the answer's periods (under
      //   ECHO_PITCH_GONE's 0.2), the rest 0.35-0.7; 12 dB under, the frames stand beyond its reach of the echo bar.
      it.each([
        ["foreign-voice", { foreignVoice: true, echoPitchGone: false }, 2],
        ["echo-pitch", { foreignVoice: false, echoPitchGone: true }, 1],
      ])(
        "lets a slipped filter's echo through the %s test as single frames at most, never a run",
        (_, tests, most) => {
          for (const slipDb of [-0.5, -12]) {
            const slip = (mic: Int16Array) => mic.map((v) => Math.round(v * 10 ** (slipDb / 20)));
            const on = slipped(slip, 0.3, { residualVad: true, ...tests });
            expect(on.frames, `slip ${slipDb} dB`).toBeLessThanOrEqual(most);
            expect(on.longestRun, `slip ${slipDb} dB`).toBeLessThanOrEqual(1);
          }
        },
      );

      it("lets no echo through that a filter which lost it leaves at its input's level, however well its estimate matches the echo's power", () => {
        // A filter that slipped off a drifting reference puts out the echo shifted: the output as loud as its input,
        // and the estimate (input minus output) as loud as the echo, so the filter seems to account for it. Drifting
        // seed 18 cut an echo-only answer so (bench/onset-latency.bench.ts --grid --jitter-frames 2). The filter has
        // taken nothing off a loud frame for seconds: its estimate says nothing of a caller.
        // Lost: the input 3 ms late (the echo where the filter no longer finds it), 0.5 dB under it.
        const lostFilter = (mic: Int16Array, previous: Int16Array): Int16Array => {
          const late = mic.map((_, i) => (i < 24 ? (previous[previous.length - 24 + i] ?? 0) : mic[i - 24]!));
          const gain = Math.sqrt(
            (level(mic, 0, mic.length) * 10 ** (-0.5 / 10)) / level(late, 0, late.length) || 0,
          );
          return late.map((v) => Math.round(v * gain));
        };
        // Only the frames before the loss counts (LOST_FRAMES), fewer than the gate's 120 ms; 86 without the rule.
        const lost = passedAfterChange(lostFilter, 0.3);
        expect(lost).toBeLessThanOrEqual(5);
        expect(lost).toBeLessThan(6);
      });

      it("allows a frame up to 12 dB under its input only at the output's speech onset, never the gate's 120 ms of it", () => {
        // A caller's first frame over a converged filter's quiet residual stood 10.7 dB under its input (the
        // grid, ERL 6-10 dB, TER -6 dB). A filter that slips to 11 dB under from a quiet residual gets the same
        // allowance for its first frames, then MIN_KEPT's 10 dB: a run far shorter than the gate's 120 ms (6).
        const passed = passedAfterSlip(-11, 0.3);
        expect(passed).toBeGreaterThan(0);
        expect(passed).toBeLessThanOrEqual(3);
        expect(passedAfterSlip(-13, 0.3)).toBe(0);
      });
    },
  );

  it("a words probe that heard the caller's words lets the frames held as echo through; one that did not leaves them held", () => {
    const echo = line(far, 120, 6);
    const at = RATE * 4;
    // 9 dB under the echo: with the bar alone (no double-talk test) the caller is never heard.
    const { mic, alone } = callerUnderEcho(echo, 0.35, at);
    const frames = mic.length / FRAME;
    // A scripted probe (the bench decodes with Moonshine): the caller's words from 100 ms after the onset.
    const probe = (fromFrame: number) => {
      const seen = { frames: 0, held: 0 };
      const port: WordsProbePort = {
        frame: (pcm, held) => {
          expect(pcm).toHaveLength(FRAME);
          if (held) seen.held++;
          return ++seen.frames >= fromFrame;
        },
        idle: () => undefined,
      };
      return { port, seen };
    };
    const deaf = probe(Number.POSITIVE_INFINITY);
    expect(onsets(mic, far, { doubleTalk: false, words: deaf.port })).toEqual([]);
    // Fed every frame while echo could be on the line (here all of them), held ones marked.
    expect(deaf.seen.held).toBeGreaterThan(0);
    expect(deaf.seen.frames).toBeGreaterThan(deaf.seen.held);
    const unfed = frames - deaf.seen.frames;
    const hearing = probe((at + RATE / 10) / FRAME - unfed);
    const passed = onsets(mic, far, { doubleTalk: false, words: hearing.port });
    expect(alone).toHaveLength(1);
    expect(passed).toHaveLength(1);
    // Measured: 4900 ms, 260 ms after the gate on the caller alone (4640), 800 ms after the probe's verdict.
    expect(passed[0]!).toBeGreaterThanOrEqual(alone[0]!);
  });

  it("on a handset (30 dB echo return) a caller at the recording's level is heard once the echo return is measured", () => {
    const at = RATE * 3;
    const over = onsets(line(far, 120, 30, { pcm: near, at, gain: 1 }), far);
    const alone = onsets(line(new Int16Array(far.length), 120, 30, { pcm: near, at, gain: 1 }), far, {
      cancel: false,
    });
    expect(alone).toHaveLength(1);
    expect(over).toHaveLength(1);
    expect(over[0]! - alone[0]!).toBeGreaterThanOrEqual(0);
    expect(over[0]! - alone[0]!).toBeLessThanOrEqual(60);
  });

  it.each([
    [120, 10],
    [250, 6],
    [40, 20],
  ] as const)(
    "estimates an echo's delay (%i ms, %i dB) from the reference's and the line's envelopes",
    (delayMs, lossDb) => {
      const guard = new EchoGuard((o) => createEchoCanceller(o), resolveEchoCancellation(), RATE);
      open.push(guard);
      const mic = line(far, delayMs, lossDb);
      expect(guard.delayFrames).toBeUndefined();
      for (let at = 0; at + FRAME <= mic.length; at += FRAME)
        guard.process(mic.subarray(at, at + FRAME), far.subarray(at, at + FRAME));
      // Frames of 20 ms: the delay or the frame after it (the line's response spreads the echo).
      expect(guard.delayFrames).toBeGreaterThanOrEqual(Math.floor(delayMs / 20));
      expect(guard.delayFrames).toBeLessThanOrEqual(Math.floor(delayMs / 20) + 1);
      // The call's summary says the same, and the loss measured: the line's, to within the headroom the
      // bar adds (a response's peaks and the windows' misalignment move it by a few dB).
      const stats = guard.stats();
      expect(stats.delayMs).toBe(guard.delayFrames! * 20);
      expect(stats.echoReturnLossDb).toBeGreaterThan(lossDb - 4);
      expect(stats.echoReturnLossDb).toBeLessThan(lossDb + 4);
      expect(stats.frames).toBeGreaterThan(0);
    },
  );

  describe("a caller who talks over the answer's clear, then a hold and a resume (a backchannel)", () => {
    // The answer is cleared where it is loud, 120 ms into a loud 220 ms word of the caller's (the gate's
    // onset), held for 850 ms, then resumed where it stopped: the line's echo comes 140 ms behind it.
    const clearAt = loudestEnd(far, RATE * 3.5, RATE * 5);
    const resumeAt = clearAt + RATE * 0.85;
    const played = new Int16Array(resumeAt + RATE * 3);
    played.set(far.subarray(0, clearAt));
    played.set(far.subarray(clearAt, clearAt + played.length - resumeAt), resumeAt);
    const wordAt = clearAt - RATE * 0.12;
    const word = steadyNoise(RATE * 0.22, 5).map((v) => v * 6); // about -20 dBFS
    const mic = line(played, 140, 15, { pcm: word, at: wordAt });

    /** The delay estimates from the clear on; the gate tells the guard of the word (with its hangover) when `told`. */
    function delaysAfterClear(told: boolean): Set<number | undefined> {
      const guard = new EchoGuard((o) => createEchoCanceller(o), resolveEchoCancellation(), RATE);
      open.push(guard);
      const seen = new Set<number | undefined>();
      for (let at = 0; at + FRAME <= mic.length; at += FRAME) {
        guard.process(mic.subarray(at, at + FRAME), played.subarray(at, at + FRAME));
        if (told && at >= wordAt + RATE * 0.12 && at < wordAt + RATE * 0.22 + RATE * 0.8)
          guard.callerSpeaking();
        if (at >= clearAt) seen.add(guard.delayFrames);
      }
      return seen;
    }

    it("keeps the echo's delay through the word and the hold when the gate says the caller speaks", () => {
      expect([...delaysAfterClear(true)]).toEqual([7]);
    });

    it("(without the gate's word, the word's envelope against the cleared answer's moves the delay)", () => {
      // Measured: 7, then 6 and 5 after the resume: its echo looked for up to 40 ms early (in real time, a
      // 55 ms echo estimated at 200 ms let a resumed answer's echo through and cut it).
      expect([...delaysAfterClear(false)].some((d) => d !== 7)).toBe(true);
    });
  });

  it("a reference that ran ahead of the line at the answer's start, then put back, keeps the echo return: echo-only starts no speech", () => {
    // A starved process sent the answer, then read a backlog of 15 caller frames captured before it reached
    // the carrier: the mirror gave them its first 15 frames (no echo of them on the line yet) and ran on
    // until the carrier's first acknowledgement (its 10th frame played) put it back 15 frames. Read as
    // echo-free played audio, that lead took the measured return to nothing: the bar fell and the echo
    // went through as the caller (in a starved real-time call: the answer cut itself).
    const LEAD = 15;
    const cut: number[] = [];
    for (let answerAt = 60; answerAt < 110; answerAt += 7) {
      const lineLength = (answerAt + 300) * FRAME;
      const played = new Int16Array(lineLength);
      played.set(far.subarray(0, lineLength - answerAt * FRAME), answerAt * FRAME);
      const reference = new Int16Array(lineLength);
      const ackAt = answerAt + 10;
      // Before the acknowledgement the mirror leads the line by LEAD frames; after it, in step.
      reference.set(far.subarray(0, (ackAt - answerAt + LEAD) * FRAME), (answerAt - LEAD) * FRAME);
      reference.set(far.subarray((ackAt - answerAt) * FRAME, lineLength - answerAt * FRAME), ackAt * FRAME);
      const mic = line(played, 120, 6);
      const guard = new EchoGuard((o) => createEchoCanceller(o), resolveEchoCancellation(), RATE);
      const gate = new SpeechGate({ threshold: -45, minSpeechMs: 120, silenceMs: 800, sampleRate: RATE });
      open.push(guard, gate);
      for (let at = 0; at + FRAME <= mic.length; at += FRAME) {
        const heard = guard.process(mic.subarray(at, at + FRAME), reference.subarray(at, at + FRAME));
        if (gate.process(heard) === "speech-start") cut.push(answerAt);
      }
    }
    expect(cut).toEqual([]);
  });

  it("measures the echo return with the reference at the echo's delay: an answer resumed late in a window keeps it", () => {
    // The return is the quietest of the last windows (1 s each). Measured frame for frame, a window the
    // answer resumed in near its end, its echo still 200 ms away, read 12 dB to all of it too little (5 of
    // these 14 holds): the bar fell with it, and a resumed answer's echo cut it in real time.
    const clearAt = RATE * 4;
    const drops: number[] = [];
    for (let holdFrames = 60; holdFrames < 100; holdFrames += 3) {
      const resumeAt = clearAt + holdFrames * FRAME;
      const played = new Int16Array(resumeAt + RATE * 4);
      played.set(far.subarray(0, clearAt));
      played.set(far.subarray(clearAt, clearAt + played.length - resumeAt), resumeAt);
      const mic = line(played, 200, 15);
      const guard = new EchoGuard((o) => createEchoCanceller(o), resolveEchoCancellation(), RATE);
      open.push(guard);
      let before = 0;
      let least = Number.POSITIVE_INFINITY;
      for (let at = 0; at + FRAME <= mic.length; at += FRAME) {
        guard.process(mic.subarray(at, at + FRAME), played.subarray(at, at + FRAME));
        if (at < clearAt) before = guard.echoReturn;
        else least = Math.min(least, guard.echoReturn);
      }
      drops.push(10 * Math.log10(before / least));
    }
    expect(Math.max(...drops)).toBeLessThan(3);
  });

  it("passes a caller at the echo's level where they are above the echo now, not only above its loudest", () => {
    const guard = new EchoGuard((o) => createEchoCanceller(o), resolveEchoCancellation(), RATE);
    open.push(guard);
    const at = RATE * 3;
    const echo = line(far, 120, 10);
    // The caller at the echo's own active level: frame by frame often under the loudest echo of the tail.
    const gain = Math.sqrt(level(echo, at, far.length) / level(near, 0, far.length - at));
    const mic = line(far, 120, 10, { pcm: near, at, gain });
    const out = new Int16Array(mic.length);
    for (let k = 0; k + FRAME <= mic.length; k += FRAME)
      out.set(guard.process(mic.subarray(k, k + FRAME), far.subarray(k, k + FRAME)), k);
    // Frames of the first 2 s of speech where the caller is at least 3 dB above the echo under them.
    let louder = 0;
    let passed = 0;
    for (let k = at; k < at + 2 * RATE; k += FRAME) {
      const caller = level(near, k - at, k - at + FRAME) * gain * gain;
      if (caller < 2 * level(echo, k, k + FRAME) || caller < 32768 ** 2 * 1e-4) continue;
      louder++;
      // Not the residual's 30 dB cut: within 6 dB of the caller.
      if (level(out, k, k + FRAME) > caller / 4) passed++;
    }
    // Measured: 17 of 35 (the rest held by the bar; 15 while the canceller's output lagged a frame, which
    // this comparison, frame for frame with the input, read as 5-20 dB taken off the caller); with the
    // loudest frame of the whole tail as the bar, 5 of 35.
    expect(louder).toBeGreaterThan(20);
    expect(passed / louder).toBeGreaterThan(0.3);
    // Some of them under the bar, let through by the double-talk test (on by default).
    expect(guard.doubleTalkFrames).toBeGreaterThan(0);
  });

  it("noise on the line under the echo starts no speech at the gate (the bar stays above the line's noise)", () => {
    const mic = line(far, 120, 10, { pcm: steadyNoise(far.length, 7), at: 0, gain: 1 });
    expect(onsets(mic, far)).toEqual([]);
  });

  it("takes the line's noise from the caller channel as received, not from the canceller's output", () => {
    const mic = line(far, 120, 10, { pcm: steadyNoise(far.length, 11), at: 0, gain: 1 });
    // With denoise the canceller's output carries the noise about 16 dB under the line's: a floor taken there
    // lets noise 10 dB over it pass as speech while the answer plays (and babble the filter partly cancels).
    const guard = new EchoGuard(
      (o) => createEchoCanceller(o),
      resolveEchoCancellation({ denoise: true }),
      RATE,
    );
    open.push(guard);
    let quietest = Number.POSITIVE_INFINITY;
    const lastSecond = mic.length - RATE;
    for (let at = 0; at + FRAME <= mic.length; at += FRAME) {
      const frame = mic.subarray(at, at + FRAME);
      guard.process(frame, far.subarray(at, at + FRAME));
      if (at >= lastSecond) quietest = Math.min(quietest, level(frame, 0, FRAME));
    }
    const db = (ratio: number) => 10 * Math.log10(ratio);
    expect(Math.abs(db(guard.noise / quietest))).toBeLessThan(1.5);
  });

  it("closes once; audio after close is dropped", () => {
    const guard = new EchoGuard(
      (o) => createEchoCanceller(o),
      resolveEchoCancellation({ tailMs: 100 }),
      RATE,
    );
    expect(guard.process(new Int16Array(FRAME), undefined)).toHaveLength(FRAME);
    guard.close();
    guard.close();
    expect(guard.process(new Int16Array(FRAME), new Int16Array(FRAME))).toHaveLength(0);
  });
});
