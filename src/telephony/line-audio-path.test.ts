import { afterEach, describe, expect, it } from "vitest";
import { createResampler, encodeMulaw } from "../codecs/index.js";
import { createTalkRuntime } from "../core/session-runtime.js";
import type { TalkRuntime } from "../core/session-types.js";
import { PCM16_24K, ULAW_8K, type AudioFormat } from "../core/talk-types.js";
import type { RealtimeProviderEvent } from "../core/provider-types.js";
import { ToolDispatcher } from "../core/tool-dispatcher.js";
import { ToolPolicy } from "../core/tool-policy.js";
import { ToolRegistry } from "../core/tool-registry.js";
import { createSessionController } from "../voice/pipelines/session-controller.js";
import { ScriptedRealtimeProvider } from "../voice/pipelines/testing/scripted-realtime-provider.js";
import { lineAudio } from "./line-audio.js";
import { CallPlayout, type PlayoutLine } from "./playout/call-playout.js";

/**
 * The answer's audio from a realtime provider to a phone line's wire, through
 * the relay pipeline and the call's playout: the chunk carries its format end
 * to end, so u-law the provider speaks reaches the line as the same bytes, and
 * PCM at another rate is resampled once (by the pipeline) and encoded once (by
 * the line).
 */

let runtime: TalkRuntime | undefined;
afterEach(async () => {
  await runtime?.close();
  runtime = undefined;
});

const PCM16_8K: AudioFormat = Object.freeze({ encoding: "pcm16", sampleRate: 8000, channels: 1 });

async function call(o: { provider: AudioFormat[]; session: AudioFormat }) {
  runtime = createTalkRuntime();
  const session = runtime.createSession({
    mode: "realtime",
    transport: "gateway-relay",
    brain: "agent-consult",
    owner: "gateway",
  });
  const provider = new ScriptedRealtimeProvider(o.provider);
  const registry = new ToolRegistry();
  const wire: Uint8Array[] = [];
  const line: PlayoutLine = {
    media: (audio) => void wire.push(audio.slice()),
    mark: () => undefined,
    clear: () => undefined,
    bufferedAmount: 0,
  };
  const playout = new CallPlayout({ line: lineAudio(ULAW_8K) });
  playout.attach(line);
  const controller = createSessionController({
    session,
    providers: {
      stt: () => undefined,
      tts: () => undefined,
      agent: () => undefined,
      realtime: () => provider,
    },
    sink: playout,
    tools: Object.assign(new ToolDispatcher({ registry, policy: new ToolPolicy() }), {
      definitions: registry.toRealtimeTools(),
    }),
    inputFormat: o.session,
    outputFormat: o.session,
    options: { persona: "Test persona." },
  });
  await controller.ready;
  const answer = (data: Uint8Array, format: AudioFormat): void => {
    const events: RealtimeProviderEvent[] = [
      { type: "speech_started", itemId: "in_1" },
      { type: "speech_stopped", itemId: "in_1" },
      { type: "response_started", responseId: "r1" },
      { type: "audio_delta", responseId: "r1", itemId: "out_1", data, format },
      { type: "audio_done", responseId: "r1", itemId: "out_1" },
    ];
    for (const e of events) provider.play(e);
  };
  return { wire: () => Buffer.concat(wire), answer, provider, playout };
}

describe("typed audio from a realtime provider to a phone line", () => {
  it("u-law from a u-law provider is an encoded passthrough: the line sends the provider's bytes untouched", async () => {
    const { wire, answer } = await call({ provider: [PCM16_24K, ULAW_8K], session: ULAW_8K });
    const reply = Uint8Array.from({ length: 800 }, (_, i) => (i * 37) & 0xff); // 100 ms, 5 whole frames
    answer(reply, ULAW_8K);
    expect(wire().equals(Buffer.from(reply))).toBe(true);
  });

  it("PCM at 24 kHz to an 8 kHz line is resampled once and encoded once", async () => {
    const { wire, answer } = await call({ provider: [PCM16_24K], session: PCM16_8K });
    const tone = Int16Array.from({ length: 4800 }, (_, i) =>
      Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 24_000)),
    );
    answer(new Uint8Array(tone.buffer), PCM16_24K);
    // The same audio through one resampler and one u-law encoder, by hand.
    const resampler = createResampler({ from: 24_000, to: 8000, channels: 1 });
    const head = resampler.process(tone);
    const tail = resampler.flush();
    resampler.close();
    const pcm = new Int16Array(head.length + tail.length);
    pcm.set(head);
    pcm.set(tail, head.length);
    const expected = encodeMulaw(pcm);
    const sent = wire();
    expect(sent.byteLength % 160).toBe(0); // whole 20 ms frames, the last padded with u-law silence
    expect(sent.subarray(0, expected.byteLength).equals(Buffer.from(expected))).toBe(true);
    expect(Array.from(sent.subarray(expected.byteLength)).every((b) => b === 0xff)).toBe(true);
  });
});
