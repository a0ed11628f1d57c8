import { afterEach, describe, expect, it } from "vitest";
import type { RealtimeProvider, RealtimeVoiceSession } from "../../core/provider-types.js";
import { PCM16_24K } from "../../core/talk-types.js";
import { FakeGeminiLiveServer, GEMINI_TEST_KEY } from "../../../test/support/fake-gemini-live-server.js";
import { FakeOpenAiRealtimeServer } from "../../../test/support/fake-openai-realtime-server.js";
import { FakeXaiRealtimeServer, XAI_TEST_KEY } from "../../../test/support/fake-xai-realtime-server.js";
import { createGeminiLiveProvider } from "../gemini-live/gemini-live-provider.js";
import { GEMINI_INPUT_FORMAT, GEMINI_OUTPUT_FORMAT } from "../gemini-live/gemini-live-setup.js";
import { createOpenAiRealtimeProvider } from "../openai-realtime/openai-realtime-provider.js";
import { createXaiRealtimeProvider } from "../xai-realtime/xai-realtime-provider.js";

/**
 * The brain reply path asks a realtime provider session for no automatic
 * responses (`autoRespond: false`): each provider configures its service so
 * that nothing answers by itself, checked here against each stand-in over a
 * real socket. All three declare the three reply paths.
 */
let voice: RealtimeVoiceSession | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await voice?.close();
  voice = undefined;
  for (const close of closers.splice(0)) await close();
});

function open(
  provider: RealtimeProvider,
  formats = { inputFormat: PCM16_24K, outputFormat: PCM16_24K },
  autoRespond?: boolean,
): Promise<RealtimeVoiceSession> {
  return provider.connect!(
    {
      instructions: "Speak what you are given.",
      tools: [],
      ...formats,
      signal: new AbortController().signal,
      ...(autoRespond !== undefined ? { autoRespond } : {}),
    },
    () => {},
  );
}

type Json = Record<string, unknown>;
const turnDetection = (session: Json): unknown =>
  "turn_detection" in session
    ? session.turn_detection
    : ((session.audio as Json).input as Json).turn_detection;

describe("autoRespond: false (reply path brain)", () => {
  it("OpenAI Realtime: no turn detection, and turning it back on keeps it off", async () => {
    const fake = new FakeOpenAiRealtimeServer();
    const url = await fake.start();
    closers.push(() => fake.close());
    const provider = createOpenAiRealtimeProvider({ apiKey: "sk-test-realtime", realtimeUrl: url });
    expect(provider.capabilities.replyPaths).toEqual(["native", "bridge", "brain"]);
    voice = await open(provider);
    await voice.close();
    expect(turnDetection(fake.session)).toMatchObject({ type: "server_vad" });

    voice = await open(provider, undefined, false);
    expect(turnDetection(fake.session)).toBeNull();
    voice.setTurnDetection?.(true);
    const updates = () => fake.received.filter((e) => e.type === "session.update");
    await expect.poll(() => updates().length).toBe(3);
    expect(turnDetection(updates()[2]!.event.session as Json)).toBeNull();
  });

  it("xAI: no server VAD", async () => {
    const fake = new FakeXaiRealtimeServer();
    const url = await fake.start();
    closers.push(() => fake.close());
    const provider = createXaiRealtimeProvider({
      apiKey: XAI_TEST_KEY,
      baseUrl: url.replace(/^ws/, "http").replace(/\/realtime$/, ""),
    });
    expect(provider.capabilities.replyPaths).toEqual(["native", "bridge", "brain"]);
    voice = await open(provider, undefined, false);
    const update = fake.received.find((e) => e.type === "session.update")!;
    expect((update.event.session as Json).turn_detection).toBeNull();
  });

  it("Gemini Live: automatic activity detection disabled, so the model answers only turns we complete", async () => {
    const fake = new FakeGeminiLiveServer();
    const baseUrl = await fake.start();
    closers.push(() => fake.close());
    const provider = createGeminiLiveProvider({ apiKey: GEMINI_TEST_KEY, baseUrl });
    expect(provider.capabilities.replyPaths).toEqual(["native", "bridge", "brain"]);
    const formats = { inputFormat: GEMINI_INPUT_FORMAT, outputFormat: GEMINI_OUTPUT_FORMAT };
    voice = await open(provider, formats);
    await voice.close();
    const detection = () => (fake.setup?.realtimeInputConfig as Json).automaticActivityDetection;
    expect(detection()).toEqual({ disabled: false });
    voice = await open(provider, formats, false);
    expect(detection()).toEqual({ disabled: true });
  });
});
