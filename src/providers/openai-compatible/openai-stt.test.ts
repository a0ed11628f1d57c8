import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeOpenAiServer } from "../../../test/support/fake-openai-server.js";
import { TalkError } from "../../core/errors.js";
import type { SttResult } from "../../core/provider-types.js";
import { PCM16_16K, type AudioFormat } from "../../core/talk-types.js";
import { modelStreamsTranscripts, OpenAiSttProvider, type OpenAiSttOptions } from "./openai-stt.js";

const KEY = "sk-test-stt-0123456789abcdef";

/** One second of a 300 Hz tone at `rate`. */
function speech(rate = 16_000, ms = 1000): Int16Array {
  const n = (rate * ms) / 1000;
  return Int16Array.from({ length: n }, (_, i) =>
    Math.round(6000 * Math.sin((2 * Math.PI * 300 * i) / rate)),
  );
}

async function failure(promise: Promise<unknown>): Promise<TalkError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(TalkError);
    return err as TalkError;
  }
  throw new Error("expected a rejection");
}

async function waitUntil(predicate: () => boolean): Promise<void> {
  while (!predicate()) await new Promise((r) => setTimeout(r, 5));
}

describe("OpenAiSttProvider against a transcriptions server", () => {
  let server: FakeOpenAiServer;
  let baseUrl: string;
  const stt = (options: OpenAiSttOptions = {}): OpenAiSttProvider =>
    new OpenAiSttProvider({ baseUrl, apiKey: KEY, model: "whisper-1", ...options });

  function transcribe(
    provider: OpenAiSttProvider,
    pcm: Int16Array,
    options: {
      format?: AudioFormat;
      language?: string;
      onPartial?(text: string): void;
      signal?: AbortSignal;
    } = {},
  ): Promise<SttResult> {
    const stream = provider.startStream({
      format: options.format ?? PCM16_16K,
      signal: options.signal ?? new AbortController().signal,
      ...(options.language ? { language: options.language } : {}),
      ...(options.onPartial ? { onPartial: options.onPartial } : {}),
    });
    // Written in 20 ms pieces, as a pipeline does.
    const step = (options.format ?? PCM16_16K).sampleRate / 50;
    for (let i = 0; i < pcm.length; i += step) stream.write(pcm.subarray(i, i + step));
    return stream.finish();
  }

  beforeEach(async () => {
    server = new FakeOpenAiServer({ apiKey: KEY });
    baseUrl = await server.start();
  });
  afterEach(async () => {
    await server.close();
  });

  it("uploads the turn as a 16-bit WAV in multipart/form-data and answers the JSON text", async () => {
    const pcm = speech();
    const result = await transcribe(stt({ prompt: "Talkgate, Twilio" }), pcm, { language: "en-US" });
    expect(result).toEqual({ text: "go forward ten meters" });

    expect(server.transcriptions).toHaveLength(1);
    const sent = server.transcriptions[0]!;
    expect(sent).toMatchObject({
      model: "whisper-1",
      language: "en",
      prompt: "Talkgate, Twilio",
      responseFormat: "json",
      stream: false,
      filename: "speech.wav",
      fileContentType: "audio/wav",
    });
    expect(sent.wav).toMatchObject({ audioFormat: 1, channels: 1, sampleRate: 16_000, bitsPerSample: 16 });
    expect(Array.from(sent.wav.samples)).toEqual(Array.from(pcm));
    const request = server.requests[0]!;
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/);
  });

  it("keeps the stream's own format in the WAV header (8 kHz phone audio is not resampled)", async () => {
    const format: AudioFormat = { encoding: "pcm16", sampleRate: 8000, channels: 1 };
    await transcribe(stt(), speech(8000, 500), { format });
    expect(server.transcriptions[0]!.wav.sampleRate).toBe(8000);
    expect(server.transcriptions[0]!.wav.samples).toHaveLength(4000);
  });

  it("streams transcript.text.delta events as running partials and resolves with transcript.text.done", async () => {
    const provider = stt({ model: "gpt-4o-mini-transcribe" });
    expect(provider.streamsTranscripts).toBe(true);
    expect(provider.capabilities.streaming).toBe(true);
    const partials: string[] = [];
    const result = await transcribe(provider, speech(), { onPartial: (t) => partials.push(t) });
    expect(result.text).toBe("go forward ten meters");
    expect(partials).toEqual(["go", "go forward", "go forward ten", "go forward ten meters"]);
    expect(server.transcriptions[0]).toMatchObject({ model: "gpt-4o-mini-transcribe", stream: true });
    expect(server.requests[0]!.headers.accept).toContain("text/event-stream");
  });

  it("stream auto is on for gpt-*-transcribe models only; stream=true to whisper-1 still reads its JSON", async () => {
    expect(modelStreamsTranscripts("gpt-4o-transcribe")).toBe(true);
    expect(modelStreamsTranscripts("gpt-4o-mini-transcribe")).toBe(true);
    expect(modelStreamsTranscripts("whisper-1")).toBe(false);
    expect(modelStreamsTranscripts("Systran/faster-whisper-small")).toBe(false);
    expect(stt().capabilities.streaming).toBe(false);
    expect(stt({ model: "gpt-4o-transcribe", stream: false }).streamsTranscripts).toBe(false);

    // The API ignores stream for whisper-1 and answers JSON; the provider takes whatever content type comes back.
    const partials: string[] = [];
    const result = await transcribe(stt({ stream: true }), speech(), { onPartial: (t) => partials.push(t) });
    expect(result.text).toBe("go forward ten meters");
    expect(partials).toEqual([]);
    expect(server.requests[0]!.body).toMatchObject({
      parts: expect.arrayContaining([expect.objectContaining({ name: "stream" })]),
    });
  });

  it("reads response_format text as plain text", async () => {
    const result = await transcribe(stt({ responseFormat: "text" }), speech());
    expect(result.text).toBe("go forward ten meters");
    expect(server.transcriptions[0]!.responseFormat).toBe("text");
  });

  it("sends no Authorization header without a key (local servers)", async () => {
    const local = new FakeOpenAiServer({ requireKey: false });
    const localUrl = await local.start();
    try {
      const provider = new OpenAiSttProvider({ baseUrl: localUrl, model: "Systran/faster-whisper-small" });
      expect(await provider.health()).toMatchObject({ ok: true });
      expect((await transcribe(provider, speech())).text).toBe("go forward ten meters");
      expect(local.requests[0]!.headers.authorization).toBeUndefined();
    } finally {
      await local.close();
    }
  });

  it("maps a rejected key to a non-retryable provider_error that never quotes the key", async () => {
    const wrong = "sk-wrong-key-000000000000";
    const err = await failure(transcribe(stt({ apiKey: wrong }), speech()));
    expect(err.code).toBe("provider_error");
    expect(err.retryable).toBe(false);
    expect(err.details).toMatchObject({ status: 401, reason: "auth" });
    expect(JSON.stringify(err.toJSON())).not.toContain("sk-wrong");
  });

  it("maps 429 to rate_limited, 5xx to provider_unavailable, 400 to invalid_params", async () => {
    server.failNext(429, {
      error: { message: "Rate limit reached", type: "requests", param: null, code: "rate_limit_exceeded" },
    });
    const limited = await failure(transcribe(stt(), speech()));
    expect(limited.code).toBe("rate_limited");
    expect(limited.retryable).toBe(true);
    expect(limited.details).toMatchObject({ status: 429, upstreamCode: "rate_limit_exceeded" });
    expect(limited.message).toContain("Rate limit reached");

    server.failNext(503, { error: { message: "overloaded", type: "server_error", param: null, code: null } });
    const down = await failure(transcribe(stt(), speech()));
    expect(down.code).toBe("provider_unavailable");
    expect(down.retryable).toBe(true);
    expect(down.details).toMatchObject({ status: 503 });

    server.failNext(400, {
      error: {
        message: "Audio file is too short.",
        type: "invalid_request_error",
        param: "file",
        code: "audio_too_short",
      },
    });
    const refused = await failure(transcribe(stt(), speech()));
    expect(refused.code).toBe("invalid_params");
    expect(refused.details).toMatchObject({ status: 400, upstreamCode: "audio_too_short" });
  });

  it("is provider_unavailable when the server cannot be reached", async () => {
    await server.close();
    const err = await failure(transcribe(stt(), speech()));
    expect(err.code).toBe("provider_unavailable");
  });

  it("times out a stream that stalls", async () => {
    server.audio.stallAfterDeltas = 1;
    const err = await failure(transcribe(stt({ model: "gpt-4o-transcribe", timeoutMs: 300 }), speech()));
    expect(err.code).toBe("timeout");
    await waitUntil(() => server.audioAborts === 1);
  });

  it("an abort mid-stream rejects cancelled and closes the request", async () => {
    server.audio.stallAfterDeltas = 2;
    const controller = new AbortController();
    const partials: string[] = [];
    const err = await failure(
      transcribe(stt({ model: "gpt-4o-transcribe" }), speech(), {
        signal: controller.signal,
        onPartial: (t) => {
          partials.push(t);
          if (partials.length === 2) controller.abort();
        },
      }),
    );
    expect(err.code).toBe("cancelled");
    expect(partials).toEqual(["go", "go forward"]);
    await waitUntil(() => server.audioAborts === 1);
  });

  it("an abort before finish sends nothing and finish rejects cancelled; writes after it throw", async () => {
    const controller = new AbortController();
    const stream = stt().startStream({ format: PCM16_16K, signal: controller.signal });
    stream.write(speech());
    controller.abort();
    expect(() => stream.write(speech())).toThrow(TalkError);
    expect((await failure(stream.finish())).code).toBe("cancelled");
    expect(server.requests).toHaveLength(0);
  });

  it("a stream that ends without transcript.text.done, or sends garbage, is a provider_error", async () => {
    server.route("POST", "/v1/audio/transcriptions", (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`data: ${JSON.stringify({ type: "transcript.text.delta", delta: "go" })}\n\n`);
    });
    const cut = await failure(transcribe(stt({ model: "gpt-4o-transcribe" }), speech()));
    expect(cut.code).toBe("provider_error");
    expect(cut.message).toContain("transcript.text.done");

    server.route("POST", "/v1/audio/transcriptions", (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end("data: {not json\n\n");
    });
    expect((await failure(transcribe(stt({ model: "gpt-4o-transcribe" }), speech()))).code).toBe(
      "provider_error",
    );

    server.route("POST", "/v1/audio/transcriptions", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ transcript: "wrong field" }));
    });
    expect((await failure(transcribe(stt(), speech()))).code).toBe("provider_error");
  });

  it("audio shorter than minAudioMs transcribes as empty without a request; a turn over maxAudioSeconds is payload_too_large", async () => {
    expect(await transcribe(stt(), speech(16_000, 40))).toEqual({ text: "" });
    expect(server.requests).toHaveLength(0);
    const err = await failure(transcribe(stt({ maxAudioSeconds: 0.5 }), speech()));
    expect(err.code).toBe("payload_too_large");
    expect(server.requests).toHaveLength(0);
  });

  it("refuses audio it cannot put in a WAV", () => {
    const signal = new AbortController().signal;
    expect(() =>
      stt().startStream({ format: { encoding: "g711_ulaw", sampleRate: 8000, channels: 1 }, signal }),
    ).toThrow(expect.objectContaining({ code: "invalid_audio" }));
    expect(() =>
      stt().startStream({ format: { encoding: "pcm16", sampleRate: 4000, channels: 1 }, signal }),
    ).toThrow(expect.objectContaining({ code: "invalid_audio" }));
  });

  it("declares its capabilities honestly and checks its options", async () => {
    expect(stt().capabilities).toEqual({
      streaming: false,
      models: ["whisper-1"],
      inputFormats: [PCM16_16K],
    });
    expect(stt().capabilities.local).toBeUndefined();
    const official = new OpenAiSttProvider({});
    expect(await official.health()).toMatchObject({ ok: false });
    for (const bad of [
      { baseUrl: "ftp://example.com/v1" },
      { baseUrl: "not a url" },
      { baseUrl: "http://user:pass@example.com/v1" },
      { model: " " },
      { apiKey: "sk-a\nb" },
      { timeoutMs: 0 },
      { responseFormat: "srt" as never },
      { stream: "yes" as never },
      { stream: true, responseFormat: "verbose_json" as const },
      { language: "english please" },
      { maxAudioSeconds: 0 },
      { id: "" },
    ]) {
      expect(() => stt(bad), JSON.stringify(bad)).toThrow(
        expect.objectContaining({ code: "config_invalid" }),
      );
    }
  });
});
