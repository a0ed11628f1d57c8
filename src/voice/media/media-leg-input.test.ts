import { afterEach, describe, expect, it } from "vitest";
import type { Vad } from "../../codecs/index.js";
import { createNoiseSuppressor, noiseSuppressorAvailable } from "../../codecs/noise-suppressor.js";
import { createSileroVad } from "../../codecs/silero-vad.js";
import { loadSpeech, run, toInt16 } from "../../codecs/testing/audio-tools.js";
import { NOOP_LOGGER } from "../../core/logger.js";
import { sessionControllerFactory } from "../pipelines/controller-factory.js";
import { EventLog } from "../pipelines/testing/pipeline-harness.js";
import { ScriptedRealtimeProvider } from "../pipelines/testing/scripted-realtime-provider.js";
import type { TalkRuntime } from "../../core/session-types.js";
import { createTalkRuntime } from "../../core/session-runtime.js";
import { PCM16_24K, type AudioFormat } from "../../core/talk-types.js";
import type { NoiseSuppressorFactory, SpeechDetectorFactory } from "./input-processing.js";
import { MediaLeg, type TurnTaking } from "./media-leg.js";

const PCM16_8K: AudioFormat = { encoding: "pcm16", sampleRate: 8000, channels: 1 };
const LOCAL_VAD: TurnTaking = { kind: "local-vad", threshold: -45, minSpeechMs: 120, silenceMs: 400 };

let runtime: TalkRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

function legWith(input: {
  vad?: SpeechDetectorFactory;
  createSuppressor?: NoiseSuppressorFactory;
  noiseSuppression?: { enabled: boolean };
  turnTaking?: TurnTaking;
}) {
  runtime = createTalkRuntime();
  const session = runtime.createSession({
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    owner: "gateway",
  });
  const provider = new ScriptedRealtimeProvider([PCM16_24K]);
  const leg = new MediaLeg({
    session,
    createController: sessionControllerFactory({
      providers: {
        stt: () => undefined,
        tts: () => undefined,
        agent: () => undefined,
        realtime: () => provider,
      },
      options: {},
      logger: NOOP_LOGGER,
      input: {
        ...(input.vad ? { vad: input.vad } : {}),
        ...(input.createSuppressor ? { createSuppressor: input.createSuppressor } : {}),
        ...(input.noiseSuppression ? { noiseSuppression: input.noiseSuppression } : {}),
      },
    }),
    adapter: { legClosed: () => undefined },
    format: PCM16_8K,
    turnTaking: input.turnTaking ?? LOCAL_VAD,
    logger: NOOP_LOGGER,
  });
  return { leg, provider, events: new EventLog(session) };
}

function feed(leg: MediaLeg, pcm: Int16Array): void {
  for (let o = 0; o + 160 <= pcm.length; o += 160) leg.appendAudio(pcm.slice(o, o + 160), PCM16_8K);
}

/** Seeded pink noise at 8 kHz (sox -R), scaled by `gain`. */
function pink(seconds: number, gain: number): Int16Array {
  return toInt16(
    run("sox", [
      "-R",
      "-n",
      ...["-t", "raw", "-r", "8000", "-e", "signed", "-b", "16", "-c", "1", "-"],
      ...["synth", String(seconds), "pinknoise", "vol", String(gain)],
    ]),
  );
}

describe("media leg: talk.input.vad", () => {
  it("a leg configured with the Silero VAD starts its turns with it: real speech starts one, noise none", async () => {
    const made: Vad[] = [];
    const vad: SpeechDetectorFactory = (o) => {
      const v = createSileroVad(o);
      made.push(v);
      return v;
    };
    const { leg, events } = legWith({ vad });
    await leg.start();
    expect(made).toHaveLength(1);
    // Five seconds of line noise: no turn.
    feed(leg, pink(5, 0.02));
    expect(events.ofType("turn.started")).toHaveLength(0);
    // Real speech (a pocketsphinx test recording at 8 kHz): one turn, ended by the silence after it.
    feed(leg, loadSpeech("goforward.raw", 8000));
    expect(events.ofType("turn.started")).toHaveLength(1);
    expect(made[0]!.probability).toBeGreaterThanOrEqual(0);
    feed(leg, new Int16Array(8000));
    await new Promise((r) => setTimeout(r, 10));
    expect(events.ofType("turn.ended")).toHaveLength(1);
    expect(events.ofType("input.audio.speech_started")).toMatchObject([{ source: "local_vad" }]);
    await leg.close("closed");
    // The gate closed its detector with the leg.
    expect(() => made[0]!.process(new Int16Array(160))).toThrow(
      expect.objectContaining({ code: "invalid_state" }),
    );
  });
});

describe.skipIf(!noiseSuppressorAvailable())("media leg: talk.input.noiseSuppression", () => {
  function counted() {
    const count = { created: 0, closed: 0 };
    const create: NoiseSuppressorFactory = (o) => {
      count.created++;
      const s = createNoiseSuppressor({ ...o, frameMs: 20 });
      return {
        process: (pcm) => s.process(pcm),
        close: () => {
          count.closed++;
          s.close();
        },
      };
    };
    return { count, create };
  }

  it("one suppressor per leg, closed with it; the caller's noise reaches the provider quieter", async () => {
    const { count, create } = counted();
    // Provider turn-taking: every frame reaches the provider.
    const { leg, provider } = legWith({
      createSuppressor: create,
      noiseSuppression: { enabled: true },
      turnTaking: { kind: "provider" },
    });
    await leg.start();
    expect(count.created).toBe(1);
    const noise = pink(4, 0.03);
    feed(leg, noise);
    const level = (chunks: Int16Array[]) => {
      let e = 0;
      let n = 0;
      for (const c of chunks) {
        for (const v of c) e += v * v;
        n += c.length;
      }
      return 10 * Math.log10(e / n / 32768 ** 2);
    };
    const heard = provider.audio
      .slice(-100)
      .map((b) => new Int16Array(b.buffer, b.byteOffset, b.byteLength / 2));
    const sent: Int16Array[] = [];
    for (let o = noise.length - 100 * 160; o < noise.length; o += 160) sent.push(noise.subarray(o, o + 160));
    // Resampled to the provider's 24 kHz: levels compare, sample counts do not.
    expect(level(sent) - level(heard)).toBeGreaterThan(8);
    await leg.close("closed");
    await leg.close("closed");
    expect(count.closed).toBe(1);
  });

  it("none when talk.input.noiseSuppression is off", async () => {
    const { count, create } = counted();
    const { leg } = legWith({ createSuppressor: create, noiseSuppression: { enabled: false } });
    await leg.start();
    feed(leg, new Int16Array(1600));
    await leg.close("closed");
    expect(count.created).toBe(0);
  });

  it("refuses a bad talk.input.noiseSuppression at start, naming the key", () => {
    expect(() =>
      sessionControllerFactory({
        providers: {
          stt: () => undefined,
          tts: () => undefined,
          agent: () => undefined,
          realtime: () => undefined,
        },
        options: {},
        logger: NOOP_LOGGER,
        input: { noiseSuppression: { enabled: true, suppressDb: 5 } },
      }),
    ).toThrow(/talk\.input\.noiseSuppression\.suppressDb/);
  });
});
