/**
 * An stt-tts phone call on the OpenAI-compatible speech providers
 * (talk.providers.openai), against a local server that speaks the documented
 * wire protocol: the caller's real speech (pocketsphinx-testdata, as u-law)
 * opens a turn at the local speech gate, the turn reaches
 * POST /v1/audio/transcriptions as a valid WAV, the streamed transcript
 * becomes the user's transcript, the local agent answers, the answer is
 * synthesized by POST /v1/audio/speech (PCM16 24 kHz, streamed) and comes
 * back to the caller as 20 ms u-law media frames.
 */
import { afterEach, describe, expect, it } from "vitest";
import { decodeMulaw } from "../../src/codecs/mulaw.js";
import { powerSpectrum } from "../../src/codecs/testing/spectrum.js";
import { TalkClient } from "../../src/client/talk-client.js";
import { FakeOpenAiServer } from "../support/fake-openai-server.js";
import {
  ADMIN_TOKEN,
  sessionOfCall,
  startTelephony,
  WRITE_TOKEN,
  type TelephonyHarness,
} from "../support/telephony-harness.js";
import { loadSpeechUlaw, SPEECH_RECORDINGS } from "../support/twilio-stream-client.js";

const KEY = "sk-test-speech-0123456789abcdef";

let h: TelephonyHarness | undefined;
let openai: FakeOpenAiServer | undefined;
const clients: TalkClient[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await h?.close();
  await openai?.close();
  h = undefined;
  openai = undefined;
});

const speech = loadSpeechUlaw(SPEECH_RECORDINGS.goforward);
const silence = (ms: number) => new Uint8Array(ms * 8).fill(0xff);

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

/** Frequency of the strongest bin of `pcm` at `rate`. */
function peakHz(pcm: Int16Array, rate: number): number {
  const { power, hz } = powerSpectrum(pcm, rate);
  let best = 1;
  for (let k = 1; k < power.length; k++) if (power[k]! > power[best]!) best = k;
  return hz(best);
}

describe("telephony: stt-tts call on OpenAI-compatible STT and TTS", () => {
  it("the caller's turn reaches the STT as a WAV, the streamed transcript is the user's, the TTS answer comes back as u-law", async () => {
    openai = new FakeOpenAiServer({ apiKey: KEY });
    const baseUrl = await openai.start();
    h = await startTelephony({
      mode: "stt-tts",
      config: {
        talk: {
          // The only talk.providers entry: it is the speech provider without naming it in talk.provider.
          providers: {
            openai: {
              baseUrl,
              apiKey: KEY,
              stt: { model: "gpt-4o-mini-transcribe", language: "en" },
              tts: { model: "gpt-4o-mini-tts", voice: "coral" },
            },
          },
        },
      },
    });

    const admin = await TalkClient.connect(`ws://127.0.0.1:${h.port}/talk`, { token: ADMIN_TOKEN });
    const writer = await TalkClient.connect(`ws://127.0.0.1:${h.port}/talk`, { token: WRITE_TOKEN });
    clients.push(admin, writer);
    const catalog = (await admin.requestUntyped("talk.catalog", {})) as {
      providers: { id: string; kind: string; default: boolean; capabilities: Record<string, unknown> }[];
    };
    const entry = (kind: string, id: string) => catalog.providers.find((p) => p.kind === kind && p.id === id);
    expect(entry("stt", "openai")).toMatchObject({
      default: true,
      capabilities: { streaming: true, models: ["gpt-4o-mini-transcribe"] },
    });
    expect(entry("tts", "openai")).toMatchObject({
      default: true,
      capabilities: { streaming: true, voices: ["coral"], outputFormats: [{ sampleRate: 24_000 }] },
    });
    expect(entry("stt", "openai")!.capabilities.local).toBeUndefined();
    expect(entry("stt", "pocketsphinx")).toMatchObject({ default: false, capabilities: { local: true } });
    // The key is a secret: redacted for a non-admin token.
    expect(JSON.stringify(await writer.requestUntyped("talk.config", {}))).not.toContain(KEY);

    const client = await h.dial();
    await client.sendAudio(silence(300), { pace: "fast" });
    await client.sendAudio(speech, { pace: "fast" });
    await client.sendAudio(silence(1500), { pace: "fast" });
    const sessionId = sessionOfCall(h, client.callSid)!;
    await waitUntil(() => h!.eventsOf(sessionId, "output.audio.done").length === 1);

    // The turn's audio, as a WAV the server could read: 16-bit mono 16 kHz, at least the caller's speech long.
    expect(openai.transcriptions).toHaveLength(1);
    const sent = openai.transcriptions[0]!;
    expect(sent).toMatchObject({
      model: "gpt-4o-mini-transcribe",
      language: "en",
      stream: true,
      responseFormat: "json",
    });
    expect(sent.wav).toMatchObject({ audioFormat: 1, channels: 1, sampleRate: 16_000, bitsPerSample: 16 });
    const speechMs = speech.length / 8;
    expect((sent.wav.samples.length / 16_000) * 1000).toBeGreaterThan(speechMs * 0.9);
    const rms = Math.sqrt(sent.wav.samples.reduce((n, s) => n + s * s, 0) / sent.wav.samples.length);
    expect(rms).toBeGreaterThan(100); // speech, not silence

    // The streamed transcript: deltas while the server transcribes, then the user's transcript.done.
    const userDone = h
      .eventsOf(sessionId, "transcript.done")
      .find((e) => (e.payload as { role: string }).role === "user")!;
    expect((userDone.payload as { text: string }).text).toBe("go forward ten meters");
    expect(h.eventsOf(sessionId, "transcript.delta").length).toBeGreaterThan(0);

    // The answer, synthesized by the TTS endpoint and played to the caller as u-law.
    expect(openai.speeches.length).toBeGreaterThan(0);
    expect(openai.speeches.map((s) => s.input).join(" ")).toContain("go forward ten meters");
    expect(openai.speeches[0]).toMatchObject({
      model: "gpt-4o-mini-tts",
      voice: "coral",
      responseFormat: "pcm",
    });
    expect(client.media.length).toBeGreaterThan(0);
    expect(client.media.every((m) => m.length > 0 && m.length % 160 === 0 && m.length <= 1600)).toBe(true);
    const heard = decodeMulaw(Uint8Array.from(client.media.flatMap((m) => Array.from(m))));
    const voiced = heard.subarray(0, Math.min(heard.length, 8000));
    expect(Math.abs(peakHz(voiced, 8000) - openai.audio.speechToneHz)).toBeLessThan(10);
    expect(client.marksEchoed.length).toBeGreaterThan(0);
    expect(openai.audioAborts).toBe(0);
    await client.stop();
  });

  it("with two entries, talk.provider picks one; a kind it does not serve keeps its local engine", async () => {
    openai = new FakeOpenAiServer({ apiKey: KEY });
    const baseUrl = await openai.start();
    h = await startTelephony({
      mode: "stt-tts",
      config: {
        talk: {
          provider: "whisper",
          providers: {
            whisper: { baseUrl, apiKey: KEY, stt: { model: "whisper-1" } },
            voice: { baseUrl, apiKey: KEY, tts: { model: "tts-1" } },
          },
        },
      },
    });
    const admin = await TalkClient.connect(`ws://127.0.0.1:${h.port}/talk`, { token: ADMIN_TOKEN });
    clients.push(admin);
    const catalog = (await admin.requestUntyped("talk.catalog", {})) as {
      providers: { id: string; kind: string; default: boolean }[];
    };
    const defaults = catalog.providers.filter((p) => p.default).map((p) => `${p.kind}/${p.id}`);
    expect(defaults).toEqual(expect.arrayContaining(["stt/whisper", "tts/espeak-ng"]));
    expect(catalog.providers.find((p) => p.kind === "tts" && p.id === "voice")).toMatchObject({
      default: false,
    });
  });
});
