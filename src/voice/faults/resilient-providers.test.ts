import { describe, expect, it } from "vitest";
import { TalkError } from "../../core/errors.js";
import { NOOP_LOGGER } from "../../core/logger.js";
import { pcmChunk, type AudioChunk } from "../../core/audio-chunk.js";
import type {
  AgentConsultRequest,
  AgentDelta,
  AgentProvider,
  SttProvider,
  SttStreamOptions,
  TtsProvider,
  TtsRequest,
} from "../../core/provider-types.js";
import { PCM16_16K, type AudioFormat } from "../../core/talk-types.js";
import { ResilientAgent, ResilientStt, ResilientTts, type ResilienceOptions } from "./resilient-providers.js";

const OPTIONS: ResilienceOptions = {
  retries: 1,
  retryBackoffMs: 0,
  firstByteTimeoutMs: 200,
  interChunkTimeoutMs: 200,
  logger: NOOP_LOGGER,
};

type Behaviour = "ok" | "unavailable" | "invalid" | "stall" | "fail-after-first";

/** A TTS following a script of behaviours, one per request; records the requests. */
class ScriptedTts implements TtsProvider {
  readonly kind = "tts" as const;
  readonly label = "scripted";
  readonly capabilities = {};
  readonly requests: TtsRequest[] = [];
  constructor(
    readonly id: string,
    readonly script: Behaviour[],
  ) {}
  health() {
    return Promise.resolve({ ok: true });
  }
  async *synthesize(request: TtsRequest): AsyncIterable<AudioChunk> {
    this.requests.push(request);
    const behaviour = this.script[this.requests.length - 1] ?? "ok";
    const chunk = pcmChunk(new Int16Array([this.requests.length]), PCM16_16K);
    if (behaviour === "unavailable") throw new TalkError("provider_unavailable", "503");
    if (behaviour === "invalid") throw new TalkError("invalid_params", "no such voice");
    if (behaviour === "stall") {
      await new Promise((resolve) => request.signal.addEventListener("abort", resolve, { once: true }));
      throw new TalkError("cancelled");
    }
    yield chunk;
    if (behaviour === "fail-after-first") throw new TalkError("provider_error", "stream broke");
    yield chunk;
  }
}

async function collect(tts: TtsProvider, voice?: string): Promise<AudioChunk[]> {
  const out: AudioChunk[] = [];
  const request = { text: "hello", signal: new AbortController().signal, ...(voice ? { voice } : {}) };
  for await (const chunk of tts.synthesize(request)) out.push(chunk);
  return out;
}

describe("ResilientTts", () => {
  it("retries a retryable failure before any audio, then succeeds on the same provider", async () => {
    const primary = new ScriptedTts("cloud", ["unavailable", "ok"]);
    const fallback = new ScriptedTts("local", []);
    const chunks = await collect(new ResilientTts([primary, fallback], OPTIONS));
    expect(chunks).toHaveLength(2);
    expect(primary.requests).toHaveLength(2);
    expect(fallback.requests).toHaveLength(0);
  });

  it("falls back after the retries, without the primary's voice; a stall counts as a failure", async () => {
    const primary = new ScriptedTts("cloud", ["unavailable", "stall"]);
    const fallback = new ScriptedTts("local", []);
    const chunks = await collect(new ResilientTts([primary, fallback], OPTIONS), "coral");
    expect(chunks).toHaveLength(2);
    expect(primary.requests).toHaveLength(2);
    expect(primary.requests[0]!.voice).toBe("coral");
    expect(fallback.requests[0]!.voice).toBeUndefined();
  });

  it("invalid_params goes back at once; a failure after audio is not repeated", async () => {
    const refusing = new ScriptedTts("cloud", ["invalid"]);
    await expect(
      collect(new ResilientTts([refusing, new ScriptedTts("b", [])], OPTIONS)),
    ).rejects.toMatchObject({
      code: "invalid_params",
    });
    expect(refusing.requests).toHaveLength(1);
    const breaking = new ScriptedTts("cloud", ["fail-after-first"]);
    const fallback = new ScriptedTts("local", []);
    await expect(collect(new ResilientTts([breaking, fallback], OPTIONS))).rejects.toMatchObject({
      code: "provider_error",
    });
    expect(breaking.requests).toHaveLength(1);
    expect(fallback.requests).toHaveLength(0);
  });

  it("every provider failing rejects with the last failure", async () => {
    const a = new ScriptedTts("a", ["unavailable", "unavailable"]);
    const b = new ScriptedTts("b", ["stall", "stall"]);
    await expect(collect(new ResilientTts([a, b], OPTIONS))).rejects.toMatchObject({ code: "timeout" });
    expect(a.requests).toHaveLength(2);
    expect(b.requests).toHaveLength(2);
  });
});

/** An STT that records what was written and answers per a script. */
class ScriptedStt implements SttProvider {
  readonly kind = "stt" as const;
  readonly label = "scripted";
  readonly streams: Int16Array[][] = [];
  constructor(
    readonly id: string,
    readonly script: Behaviour[],
    readonly capabilities: { inputFormats?: AudioFormat[] } = {},
  ) {}
  health() {
    return Promise.resolve({ ok: true });
  }
  startStream(options: SttStreamOptions) {
    const written: Int16Array[] = [];
    this.streams.push(written);
    const behaviour = this.script[this.streams.length - 1] ?? "ok";
    return {
      write: (pcm: Int16Array) => void written.push(pcm.slice()),
      finish: async () => {
        if (behaviour === "unavailable") throw new TalkError("provider_unavailable", "503");
        if (behaviour === "stall") await new Promise(() => {});
        return {
          text: `${this.id}:${written.reduce((n, p) => n + p.length, 0)} at ${options.format.sampleRate}`,
        };
      },
    };
  }
}

describe("ResilientStt", () => {
  it("replays the turn's audio into a retry and a fallback (converted to the fallback's format)", async () => {
    const primary = new ScriptedStt("cloud", ["unavailable", "stall"]);
    const fallback = new ScriptedStt("local", [], {
      inputFormats: [{ encoding: "pcm16", sampleRate: 8000, channels: 1 }],
    });
    const stt = new ResilientStt([primary, fallback], OPTIONS);
    const stream = stt.startStream({ format: PCM16_16K, signal: new AbortController().signal });
    for (let i = 0; i < 10; i++) stream.write(new Int16Array(1600).fill(i * 100));
    const result = await stream.finish();
    expect(primary.streams).toHaveLength(2);
    expect(primary.streams[1]!.reduce((n, p) => n + p.length, 0)).toBe(16_000);
    expect(result.text).toMatch(/^local:\d+ at 8000$/);
    const samples = Number(/local:(\d+)/.exec(result.text)![1]);
    expect(Math.abs(samples - 8000)).toBeLessThan(100);
  });
});

/** An agent following a script of behaviours, one per consult. */
class ScriptedAgent implements AgentProvider {
  readonly kind = "agent" as const;
  readonly label = "scripted";
  readonly capabilities = {};
  consults = 0;
  constructor(
    readonly id: string,
    readonly script: Behaviour[],
  ) {}
  health() {
    return Promise.resolve({ ok: true });
  }
  async *consult(request: AgentConsultRequest): AsyncIterable<AgentDelta> {
    const behaviour = this.script[this.consults++] ?? "ok";
    if (behaviour === "unavailable") throw new TalkError("provider_unavailable", "503");
    yield { type: "text", text: `${this.id} says hi` };
    if (behaviour === "stall") {
      await new Promise((resolve) => request.signal.addEventListener("abort", resolve, { once: true }));
      throw new TalkError("cancelled");
    }
    yield { type: "done" };
  }
}

async function consult(agent: AgentProvider): Promise<string> {
  let text = "";
  const request = { sessionId: "s", turnId: "t", messages: [], signal: new AbortController().signal };
  for await (const delta of agent.consult(request)) if (delta.type === "text") text += delta.text;
  return text;
}

describe("ResilientAgent", () => {
  it("a consult failing before its first token is retried, then failed over", async () => {
    const primary = new ScriptedAgent("cloud", ["unavailable", "unavailable"]);
    const fallback = new ScriptedAgent("backup", []);
    expect(await consult(new ResilientAgent([primary, fallback], OPTIONS))).toBe("backup says hi");
    expect(primary.consults).toBe(2);
  });

  it("tokens that stop mid-answer fail the consult after interChunkTimeoutMs (never repeated)", async () => {
    const primary = new ScriptedAgent("cloud", ["stall"]);
    const fallback = new ScriptedAgent("backup", []);
    await expect(consult(new ResilientAgent([primary, fallback], OPTIONS))).rejects.toMatchObject({
      code: "timeout",
    });
    expect(fallback.consults).toBe(0);
  });
});

describe("hung requests replaced sooner (issue 38)", () => {
  // The stall timeouts are far longer than the test: only the hedge or the short retry can end it in time.
  const SLOW: ResilienceOptions = { ...OPTIONS, retries: 2, firstByteTimeoutMs: 60_000 };

  it("TTS hedged: the fallback starts beside a hung request after hedgeAfterMs and is heard; the hung one is aborted", async () => {
    const primary = new ScriptedTts("cloud", ["stall"]);
    const fallback = new ScriptedTts("local", []);
    const chunks = await collect(new ResilientTts([primary, fallback], { ...SLOW, hedgeAfterMs: 50 }));
    expect(chunks).toHaveLength(2);
    expect(primary.requests).toHaveLength(1);
    expect(primary.requests[0]!.signal.aborted).toBe(true);
    expect(fallback.requests).toHaveLength(1);
  });

  it("TTS hedged: a default provider that answers keeps the request, and the fallback never starts", async () => {
    const primary = new ScriptedTts("cloud", []);
    const fallback = new ScriptedTts("local", []);
    const chunks = await collect(new ResilientTts([primary, fallback], { ...SLOW, hedgeAfterMs: 5_000 }));
    expect(chunks).toHaveLength(2);
    expect(fallback.requests).toHaveLength(0);
  });

  it("STT hedged: the kept audio goes to the fallback beside the hung request, whose result wins", async () => {
    const primary = new ScriptedStt("cloud", ["stall"]);
    const fallback = new ScriptedStt("local", []);
    const stt = new ResilientStt([primary, fallback], { ...SLOW, hedgeAfterMs: 50 });
    const stream = stt.startStream({ format: PCM16_16K, signal: new AbortController().signal });
    for (let i = 0; i < 4; i++) stream.write(new Int16Array(1600).fill(i));
    expect((await stream.finish()).text).toBe("local:6400 at 16000");
    expect(primary.streams).toHaveLength(1);
  });

  it("short retries: a retry waits retryFirstByteTimeoutMs for its first byte", async () => {
    const primary = new ScriptedTts("cloud", ["unavailable", "stall", "stall"]);
    const fallback = new ScriptedTts("local", []);
    const chunks = await collect(
      new ResilientTts([primary, fallback], { ...SLOW, retryFirstByteTimeoutMs: 50 }),
    );
    expect(chunks).toHaveLength(2);
    expect(primary.requests).toHaveLength(3);
    expect(fallback.requests).toHaveLength(1);
  });

  it("short retries: an STT retry waits retryFirstByteTimeoutMs for its result", async () => {
    const primary = new ScriptedStt("cloud", ["unavailable", "stall", "stall"]);
    const fallback = new ScriptedStt("local", []);
    const stt = new ResilientStt([primary, fallback], { ...SLOW, retryFirstByteTimeoutMs: 50 });
    const stream = stt.startStream({ format: PCM16_16K, signal: new AbortController().signal });
    stream.write(new Int16Array(1600));
    expect((await stream.finish()).text).toBe("local:1600 at 16000");
    expect(primary.streams).toHaveLength(3);
  });
});
