import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PcmConverter } from "../../src/voice/pipelines/pcm-converter.js";
import type { AudioChunk } from "../../src/core/audio-chunk.js";
import type { TtsProvider, TtsRequest } from "../../src/core/provider-types.js";
import { PCM16_16K } from "../../src/core/talk-types.js";
import { EspeakTtsProvider } from "../../src/providers/espeak-ng/espeak-tts.js";
import {
  SPEECH_FORMAT,
  appendPcm,
  recordEvents,
  rejectionOf,
  speechPcm,
  startGateway,
  type GatewayHarness,
} from "../support/gateway-harness.js";

/**
 * The Talk API's creation contract against the whole server (createApp, real
 * espeak-ng, pocketsphinx and WebSockets): what a session names beside mode
 * and transport (issue 16, point 3) and talk.input.silenceTimeoutMs on
 * Gateway-owned sessions (point 2).
 */

/** espeak-ng under another name, declaring two voices and recording the voice of every request. */
class RecordingTts implements TtsProvider {
  readonly kind = "tts" as const;
  readonly id = "recording-tts";
  readonly label = "espeak-ng (recording)";
  readonly capabilities = { voices: ["en-us", "en-gb"], local: true, streaming: true };
  readonly voices: (string | undefined)[] = [];
  readonly #inner = new EspeakTtsProvider();

  health() {
    return this.#inner.health();
  }

  synthesize(request: TtsRequest): AsyncIterable<AudioChunk> {
    this.voices.push(request.voice);
    return this.#inner.synthesize(request);
  }
}

let h: GatewayHarness;
const tts = new RecordingTts();
beforeAll(async () => {
  h = await startGateway({ tts });
});
afterAll(async () => {
  await h?.close();
});

function issuePath(err: { details?: Record<string, unknown> }): unknown {
  return (err.details?.["issues"] as { path: string }[] | undefined)?.[0]?.path;
}

describe("talk.session.create names only what a provider serves (point 3)", () => {
  it("an unknown provider id for stt-tts or transcription is invalid_params naming provider; no session is made", async () => {
    const client = await h.connect();
    const before = h.runtime.sessionCount;
    for (const params of [
      { mode: "stt-tts", transport: "managed-room", provider: "nope" },
      { mode: "transcription", transport: "gateway-relay", provider: "nope" },
      // A TTS id is no transcription provider.
      { mode: "transcription", transport: "gateway-relay", provider: "recording-tts" },
    ] as const) {
      const err = await rejectionOf(client.request("talk.session.create", params));
      expect(err.code).toBe("invalid_params");
      expect(issuePath(err)).toBe("provider");
    }
    expect(h.runtime.sessionCount).toBe(before);
    const ok = await client.request("talk.session.create", {
      mode: "transcription",
      transport: "gateway-relay",
      provider: "pocketsphinx",
    });
    expect(ok.provider).toBe("pocketsphinx");
    await client.request("talk.session.close", { sessionId: ok.sessionId });
  });

  it("a model or voice nothing takes is refused naming the field", async () => {
    const client = await h.connect();
    const cases = [
      [{ mode: "transcription", transport: "gateway-relay", voice: "en-us" }, "voice"],
      [{ mode: "transcription", transport: "gateway-relay", model: "whisper" }, "model"],
      [{ mode: "stt-tts", transport: "managed-room", model: "tts-1" }, "model"],
      [{ mode: "stt-tts", transport: "managed-room", voice: "klingon" }, "voice"],
    ] as const;
    for (const [params, field] of cases) {
      const err = await rejectionOf(client.request("talk.session.create", params));
      expect(err.code).toBe("invalid_params");
      expect(issuePath(err)).toBe(field);
    }
  });

  it("the voice of an stt-tts session reaches the TTS provider", async () => {
    const client = await h.connect();
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", {
      mode: "stt-tts",
      transport: "managed-room",
      inputFormat: SPEECH_FORMAT,
      voice: "en-gb",
    });
    const { turnId } = await client.request("talk.session.startTurn", { sessionId });
    await appendPcm(client, sessionId, await speechPcm("What time is it?"));
    await client.request("talk.session.endTurn", { sessionId, turnId });
    await rec.next((e) => e.type === "output.audio.done" && e.turnId === turnId);
    expect(tts.voices.length).toBeGreaterThan(0);
    expect(tts.voices.every((v) => v === "en-gb")).toBe(true);
    // The TTS job's audio names the agent consult that wrote its text as its parent (point 8).
    const audio = rec.events.filter((e) => e.turnId === turnId && e.type.startsWith("output.audio."));
    expect(audio.length).toBeGreaterThanOrEqual(3);
    expect(audio.every((e) => e.parentId === `consult-${e.itemId}`)).toBe(true);
    await client.request("talk.session.close", { sessionId });
  });
});

describe("talk.input.silenceTimeoutMs on Talk API sessions (point 2)", () => {
  it("a transcription session fed speech then 3 s of silence finalizes its caption without endTurn", async () => {
    const client = await h.connect();
    const rec = recordEvents(client);
    const { sessionId } = await client.request("talk.session.create", {
      mode: "transcription",
      transport: "gateway-relay",
      inputFormat: PCM16_16K,
    });
    const converter = new PcmConverter(SPEECH_FORMAT, PCM16_16K);
    const speech = await speechPcm("Please write this down.");
    const pcm = converter.convert(new Int16Array(speech.buffer, speech.byteOffset, speech.byteLength / 2));
    converter.close();
    const silence = new Int16Array(16_000 * 3);
    for (const part of [pcm, silence])
      await appendPcm(client, sessionId, Buffer.from(part.buffer, part.byteOffset, part.byteLength), 6400);
    const done = await rec.next((e) => e.type === "transcript.done");
    expect((done.payload as { text: string }).text.length).toBeGreaterThan(0);
    expect(rec.events.some((e) => e.type === "turn.ended" && e.turnId === done.turnId)).toBe(true);
    // A client that ends the same utterance itself a moment later is acknowledged, not refused.
    await expect(
      client.request("talk.session.endTurn", { sessionId, turnId: done.turnId! }),
    ).resolves.toMatchObject({ sessionId });
    await client.request("talk.session.close", { sessionId });
  });
});
