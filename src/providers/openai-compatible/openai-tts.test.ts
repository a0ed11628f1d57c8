import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FakeOpenAiServer, fakeSpeechSamples } from "../../../test/support/fake-openai-server.js";
import { TalkError } from "../../core/errors.js";
import { audioByteLength, type AudioChunk } from "../../core/audio-chunk.js";
import type { TtsRequest } from "../../core/provider-types.js";
import { PCM16_24K } from "../../core/talk-types.js";
import { OpenAiTtsProvider, type OpenAiTtsOptions } from "./openai-tts.js";

const KEY = "sk-test-tts-0123456789abcdef";
const TEXT = "Hello from the assistant, this is a test.";

async function collect(iterable: AsyncIterable<AudioChunk>): Promise<AudioChunk[]> {
  const out: AudioChunk[] = [];
  for await (const chunk of iterable) out.push(chunk);
  return out;
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

function samplesOf(chunks: AudioChunk[]): Int16Array {
  return Int16Array.from(chunks.flatMap((c) => (c.kind === "pcm" ? Array.from(c.samples) : [])));
}

describe("OpenAiTtsProvider against a speech server", () => {
  let server: FakeOpenAiServer;
  let baseUrl: string;
  const tts = (options: OpenAiTtsOptions = {}): OpenAiTtsProvider =>
    new OpenAiTtsProvider({ baseUrl, apiKey: KEY, ...options });
  const request = (extra: Partial<TtsRequest> = {}): TtsRequest => ({
    text: TEXT,
    signal: new AbortController().signal,
    ...extra,
  });

  beforeEach(async () => {
    server = new FakeOpenAiServer({ apiKey: KEY });
    baseUrl = await server.start();
  });
  afterEach(async () => {
    await server.close();
  });

  it("streams the PCM as it arrives: several whole-sample chunks, exactly the server's audio, 24 kHz mono", async () => {
    const chunks = await collect(tts().synthesize(request()));
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.kind).toBe("pcm");
      expect(chunk.format).toEqual(PCM16_24K);
    }
    // The server sends odd-sized chunks: samples split across them are put back together.
    expect(Array.from(samplesOf(chunks))).toEqual(Array.from(fakeSpeechSamples(TEXT, server.audio)));
    expect(server.speeches).toEqual([
      { model: "gpt-4o-mini-tts", input: TEXT, voice: "alloy", responseFormat: "pcm" },
    ]);
    expect(server.requests[0]!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it("yields the first audio before the answer is complete", async () => {
    server.audio.stallAfterChunks = 1; // the response never ends
    const controller = new AbortController();
    const stream = tts().synthesize(request({ signal: controller.signal }));
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    expect(audioByteLength(first.value!)).toBeGreaterThan(0);
    controller.abort();
    expect((await failure(iterator.next())).code).toBe("cancelled");
    await waitUntil(() => server.audioAborts === 1);
  });

  it("sends voice, speed (when not 1) and instructions", async () => {
    await collect(
      tts({ instructions: "Speak calmly.", model: "tts-1" }).synthesize(
        request({ voice: "nova", speed: 1.25 }),
      ),
    );
    await collect(tts().synthesize(request({ speed: 1 })));
    expect(server.speeches[0]).toEqual({
      model: "tts-1",
      input: TEXT,
      voice: "nova",
      responseFormat: "pcm",
      speed: 1.25,
      instructions: "Speak calmly.",
    });
    expect(server.speeches[1]).not.toHaveProperty("speed");
  });

  it("an abort mid-stream rejects cancelled and closes the HTTP stream", async () => {
    server.audio.stallAfterChunks = 2;
    const controller = new AbortController();
    const seen: AudioChunk[] = [];
    const err = await failure(
      (async () => {
        for await (const chunk of tts().synthesize(request({ signal: controller.signal }))) {
          seen.push(chunk);
          if (seen.length === 2) controller.abort();
        }
      })(),
    );
    expect(err.code).toBe("cancelled");
    expect(seen).toHaveLength(2);
    await waitUntil(() => server.audioAborts === 1);
  });

  it("a consumer that stops early ends the request", async () => {
    server.audio.stallAfterChunks = 2;
    for await (const chunk of tts().synthesize(request())) {
      expect(audioByteLength(chunk)).toBeGreaterThan(0);
      break;
    }
    await waitUntil(() => server.audioAborts === 1);
  });

  it("an aborted signal sends nothing", async () => {
    const controller = new AbortController();
    controller.abort();
    expect((await failure(collect(tts().synthesize(request({ signal: controller.signal }))))).code).toBe(
      "cancelled",
    );
    expect(server.requests).toHaveLength(0);
  });

  it("maps errors: rejected key, 429, 5xx, a voice the server refuses, a timeout", async () => {
    const auth = await failure(collect(tts({ apiKey: "sk-wrong-key-0000000000" }).synthesize(request())));
    expect(auth).toMatchObject({
      code: "provider_error",
      retryable: false,
      details: { status: 401, reason: "auth" },
    });
    expect(auth.message).not.toContain("sk-wrong");

    server.failNext(429, { error: { message: "slow down", type: "requests", param: null, code: null } });
    expect((await failure(collect(tts().synthesize(request())))).code).toBe("rate_limited");

    server.failNext(500, { error: { message: "boom", type: "server_error", param: null, code: null } });
    const down = await failure(collect(tts().synthesize(request())));
    expect(down).toMatchObject({ code: "provider_unavailable", retryable: true, details: { status: 500 } });

    // invalid_params lets the pipeline retry a voice directive's voice with the session voice.
    const voice = await failure(collect(tts().synthesize(request({ voice: "robot" }))));
    expect(voice).toMatchObject({ code: "invalid_params", details: { status: 400 } });
    expect(voice.message).toContain("Invalid value for voice");

    server.audio.stallAfterChunks = 1;
    const slow = await failure(collect(tts({ timeoutMs: 300 }).synthesize(request())));
    expect(slow.code).toBe("timeout");
  });

  it("refuses locally what it can: a voice outside `voices`, empty or too long text, a bad speed", async () => {
    const provider = tts({ voices: ["alloy", "nova"] });
    expect(provider.capabilities.voices).toEqual(["alloy", "nova"]);
    expect((await failure(collect(provider.synthesize(request({ voice: "onyx" }))))).code).toBe(
      "invalid_params",
    );
    expect((await failure(collect(provider.synthesize(request({ text: "  " }))))).code).toBe(
      "invalid_params",
    );
    expect((await failure(collect(provider.synthesize(request({ speed: 9 }))))).code).toBe("invalid_params");
    const long = await failure(collect(tts({ maxTextLength: 10 }).synthesize(request())));
    expect(long.code).toBe("payload_too_large");
    expect(server.requests).toHaveLength(0);
  });

  it("a 200 that is not audio is a provider_error", async () => {
    server.route("POST", "/v1/audio/speech", (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    });
    expect((await failure(collect(tts().synthesize(request())))).code).toBe("provider_error");
  });

  it("works without a key against a local server, at the rate it is told", async () => {
    const local = new FakeOpenAiServer({ requireKey: false });
    const localUrl = await local.start();
    try {
      const provider = new OpenAiTtsProvider({ baseUrl: localUrl, model: "tts-1", sampleRate: 24_000 });
      const chunks = await collect(provider.synthesize(request()));
      expect(chunks.length).toBeGreaterThan(0);
      expect(local.requests[0]!.headers.authorization).toBeUndefined();
    } finally {
      await local.close();
    }
  });

  it("declares its capabilities and checks its options", async () => {
    expect(tts({ voice: "nova" }).capabilities).toEqual({
      streaming: true,
      models: ["gpt-4o-mini-tts"],
      voices: ["nova"],
      outputFormats: [PCM16_24K],
    });
    expect(await tts().health()).toMatchObject({ ok: true });
    expect(await new OpenAiTtsProvider({}).health()).toMatchObject({ ok: false });
    for (const bad of [
      { baseUrl: "ws://example.com/v1" },
      { model: "" },
      { voice: "" },
      { voices: [] },
      { voices: ["nova"], voice: "alloy" },
      { sampleRate: 11_025 },
      { maxTextLength: 0 },
      { timeoutMs: -1 },
    ]) {
      expect(() => tts(bad), JSON.stringify(bad)).toThrow(
        expect.objectContaining({ code: "config_invalid" }),
      );
    }
  });
});
