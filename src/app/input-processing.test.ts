import { describe, expect, it } from "vitest";
import { validateConfig } from "../config/load-config.js";
import { NOOP_LOGGER } from "../core/logger.js";
import { noiseSuppressorAvailable } from "../codecs/noise-suppressor.js";
import { sileroVadAvailable } from "../codecs/index.js";
import { echoCancellation, inputProcessing, prepareInputProcessing } from "./pipelines.js";
import { expectTalkInputRefused } from "../../test/support/config-refusal.js";

/** The echo guard's options a leg gets from talk.input. */
const echoOptions = (input: Record<string, unknown>) =>
  echoCancellation(validateConfig({ talk: { input } }).config, NOOP_LOGGER).options;

describe("talk.input.echoCancellation.doubleTalk", () => {
  const resolved = (input: Record<string, unknown>) => echoOptions(input).doubleTalk;

  it("unset: on, and off where words confirm the barge-in; set: as set", () => {
    expect(resolved({})).toBe(true);
    expect(resolved({ bargeIn: { confirmWithWords: true } })).toBe(false);
    expect(resolved({ echoCancellation: { doubleTalk: false } })).toBe(false);
    expect(resolved({ bargeIn: { confirmWithWords: true }, echoCancellation: { doubleTalk: true } })).toBe(
      true,
    );
  });

  it.each([["yes"], [1], [null]])("refuses %j at start, naming the key", (bad) =>
    expectTalkInputRefused({ echoCancellation: { doubleTalk: bad } }, "echoCancellation.doubleTalk"),
  );
});

describe("talk.input.echoCancellation.residualVad", () => {
  const resolved = (input: Record<string, unknown>) => echoOptions(input).residualVad;

  it("on unless set (the Silero model ships with the install); set: reaches the legs' echo guard options", () => {
    expect(resolved({})).toBe(sileroVadAvailable());
    expect(resolved({ echoCancellation: { residualVad: false } })).toBe(false);
    expect(resolved({ echoCancellation: { residualVad: true } })).toBe(true);
  });

  it.each([["yes"], [1], [null]])("refuses %j at start, naming the key", (bad) =>
    expectTalkInputRefused({ echoCancellation: { residualVad: bad } }, "echoCancellation.residualVad"),
  );
});

describe("talk.input.vad and talk.input.noiseSuppression", () => {
  it.each([
    [{ vad: "rnn" }, "talk.input.vad"],
    [{ vad: true }, "talk.input.vad"],
    [{ noiseSuppression: { enabled: "yes" } }, "noiseSuppression.enabled"],
    [{ noiseSuppression: { suppressDb: 0 } }, "noiseSuppression.suppressDb"],
    [{ noiseSuppression: { suppressDb: -91 } }, "noiseSuppression.suppressDb"],
    [{ noiseSuppression: { suppressDb: -20.5 } }, "noiseSuppression.suppressDb"],
    [{ noiseSuppression: { level: 3 } }, "noiseSuppression"],
    [{ noiseSuppression: { engine: "webrtc" } }, "noiseSuppression.engine"],
  ])("refuses %j at start, naming the key", (input, key) => expectTalkInputRefused(input, key));

  it("defaults to the WebRTC VAD (no detector injected) and no suppression", () => {
    const input = inputProcessing(validateConfig({}).config, NOOP_LOGGER);
    expect(input.vad).toBeUndefined();
    expect(input.createSuppressor).toBeUndefined();
    expect(input.noiseSuppression).toEqual({ enabled: false, suppressDb: -30 });
  });

  it('"silero" loads the model at start and gives the legs a Silero detector', () => {
    const input = inputProcessing(validateConfig({ talk: { input: { vad: "silero" } } }).config, NOOP_LOGGER);
    const vad = input.vad!({ sampleRate: 8000, onsetMs: 120, hangoverMs: 400, minLevelDbfs: -45 });
    // Silero tracks no noise floor (the WebRTC VAD's gate does).
    expect(vad.noiseFloorDbfs).toBeNaN();
    expect(vad.process(new Int16Array(160 * 5))).toBe("silence");
    vad.close();
  });

  it.skipIf(!noiseSuppressorAvailable())("enabled noise suppression gets the libspeexdsp suppressor", () => {
    const input = inputProcessing(
      validateConfig({ talk: { input: { noiseSuppression: { enabled: true, suppressDb: -25 } } } }).config,
      NOOP_LOGGER,
    );
    const s = input.createSuppressor!({ sampleRate: 8000, suppressDb: -25 });
    expect(s.process(new Int16Array(320))).toHaveLength(320);
    s.close();
  });

  it('engine "rnnoise" is loaded before the pipelines are built and gives the legs RNNoise', async () => {
    const { config } = validateConfig({
      talk: { input: { noiseSuppression: { enabled: true, engine: "rnnoise" } } },
    });
    await prepareInputProcessing(config);
    const input = inputProcessing(config, NOOP_LOGGER);
    const s = input.createSuppressor!({ sampleRate: 8000, suppressDb: -30 });
    // RNNoise's 48 kHz frames and resamplers: whole output arrives after a short delay, never more than fed.
    let out = 0;
    for (let i = 0; i < 10; i++) out += s.process(new Int16Array(160)).length;
    expect(out).toBeGreaterThan(1200);
    expect(out).toBeLessThanOrEqual(1600);
    s.close();
  });
});
