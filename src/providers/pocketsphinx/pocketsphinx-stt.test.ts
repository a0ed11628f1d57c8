import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TalkError } from "../../core/errors.js";
import type { SttStream } from "../../core/index.js";
import { PCM16_16K, PCM16_24K } from "../../core/talk-types.js";
import {
  createPocketsphinxStt as createProvider,
  type PocketsphinxDecoderMode,
  type PocketsphinxSttOptions,
  type PocketsphinxSttProvider,
} from "./pocketsphinx-stt.js";

/** Debian pocketsphinx-testdata: 16 kHz mono raw PCM of a man saying "go forward ten meters". */
const GO_FORWARD = "/usr/share/pocketsphinx/test/data/goforward.raw";
const NUMBERS = "/usr/share/pocketsphinx/test/data/numbers.raw";
const SOMETHING = "/usr/share/pocketsphinx/test/data/something.raw";

function pcmOf(path: string): Int16Array {
  const bytes = readFileSync(path);
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/** Writes like a live source: 20 ms frames. */
function writeInFrames(write: (pcm: Int16Array) => void, pcm: Int16Array): void {
  for (let i = 0; i < pcm.length; i += 320) write(pcm.subarray(i, i + 320));
}

/** Providers made by a test, closed after it so no decoder outlives it. */
const created: PocketsphinxSttProvider[] = [];
afterEach(async () => {
  await Promise.all(created.splice(0).map((p) => p.close()));
});

/** Each mode's decoder process, as pgrep -f sees it. */
const PROCESS: Record<PocketsphinxDecoderMode, string> = {
  resident: "sphinx-decoder.py",
  "per-stream": "pocketsphinx_continuous",
};

function sphinxChildren(mode: PocketsphinxDecoderMode): number[] {
  try {
    return execFileSync("pgrep", ["-P", String(process.pid), "-f", PROCESS[mode]], {
      encoding: "utf8",
    })
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** A stream whose running texts are collected, and the first of them. */
function listenedStream(
  stt: PocketsphinxSttProvider,
  options: { eagerPartials?: boolean } = {},
): { stream: SttStream; partials: string[]; first: Promise<string> } {
  let resolveFirst!: (text: string) => void;
  const first = new Promise<string>((r) => (resolveFirst = r));
  const partials: string[] = [];
  const stream = stt.startStream({
    format: PCM16_16K,
    signal: new AbortController().signal,
    ...options,
    onPartial: (text) => {
      partials.push(text);
      resolveFirst(text);
    },
  });
  return { stream, partials, first };
}

describe.each(["resident", "per-stream"] as const)("pocketsphinx STT, %s decoder", (mode) => {
  const createPocketsphinxStt = (options: PocketsphinxSttOptions = {}): PocketsphinxSttProvider => {
    const provider = createProvider({ decoder: mode, ...options });
    created.push(provider);
    return provider;
  };

  it("transcribes the Debian 'go forward ten meters' recording", async () => {
    const stt = createPocketsphinxStt();
    const stream = stt.startStream({ format: PCM16_16K, signal: new AbortController().signal });
    writeInFrames((pcm) => stream.write(pcm), pcmOf(GO_FORWARD));
    const result = await stream.finish();
    expect(result.text).toBe("go forward ten meters");
  });

  it("reports each utterance as a partial while audio still streams in", async () => {
    // Not asked for running hypotheses inside the utterance: the partials are the ended utterances.
    const { stream, partials, first: firstPartial } = listenedStream(createPocketsphinxStt());
    writeInFrames((pcm) => stream.write(pcm), pcmOf(GO_FORWARD));
    // A second of silence ends the utterance inside the decoder before input ends.
    stream.write(new Int16Array(16_000));
    expect(await firstPartial).toBe("go forward ten meters");
    writeInFrames((pcm) => stream.write(pcm), pcmOf(NUMBERS));
    const result = await stream.finish();
    expect(result.text.startsWith("go forward ten meters ")).toBe(true);
    expect(result.text.split(" ").length).toBeGreaterThan(5);
    expect(partials.at(-1)).toBe(result.text);
  });

  it.runIf(mode === "resident")(
    "asked (eagerPartials), reports the running hypothesis inside an utterance, before the decoder hears it end",
    async () => {
      const stt = createPocketsphinxStt({ partialIntervalMs: 300 });
      const { stream, partials, first: firstPartial } = listenedStream(stt, { eagerPartials: true });
      // The recording's speech without the silence after it: only a running hypothesis can report it.
      const speech = pcmOf(GO_FORWARD);
      writeInFrames((pcm) => stream.write(pcm), speech.subarray(0, Math.floor(speech.length * 0.8)));
      const first = await firstPartial;
      expect(first.split(" ")[0]).toBe("go");
      // The utterance's end replaces the running text with the final one.
      writeInFrames((pcm) => stream.write(pcm), speech.subarray(Math.floor(speech.length * 0.8)));
      stream.write(new Int16Array(16_000));
      const result = await stream.finish();
      expect(result.text).toBe("go forward ten meters");
      expect(partials.at(-1)).toBe(result.text);
    },
  );

  it("refuses a partialIntervalMs out of range", () => {
    for (const partialIntervalMs of [-1, 10_001, 2.5])
      expect(() => createPocketsphinxStt({ partialIntervalMs })).toThrow(/partialIntervalMs/);
  });

  it("aborting kills the decoder and finish() rejects with cancelled", async () => {
    const stt = createPocketsphinxStt();
    const controller = new AbortController();
    let resolveFirst!: () => void;
    const firstPartial = new Promise<void>((r) => (resolveFirst = r));
    const stream = stt.startStream({
      format: PCM16_16K,
      signal: controller.signal,
      onPartial: () => resolveFirst(),
    });
    writeInFrames((pcm) => stream.write(pcm), pcmOf(GO_FORWARD));
    stream.write(new Int16Array(16_000));
    await firstPartial; // the decoder is running and waiting for more input
    expect(sphinxChildren(mode)).toHaveLength(1);
    controller.abort(new Error("turn cancelled"));
    await expect(stream.finish()).rejects.toMatchObject({ code: "cancelled" });
    expect(sphinxChildren(mode)).toEqual([]);
    expect(() => stream.write(new Int16Array(320))).toThrow(TalkError);
  });

  it("write() after finish() throws invalid_state", async () => {
    const stream = createPocketsphinxStt().startStream({
      format: PCM16_16K,
      signal: new AbortController().signal,
    });
    const done = stream.finish();
    expect(() => stream.write(new Int16Array(320))).toThrowError(
      expect.objectContaining({ code: "invalid_state" }),
    );
    expect((await done).text).toBe("");
  });

  it("rejects audio that is not 16 kHz mono PCM16", () => {
    const stt = createPocketsphinxStt();
    expect(() => stt.startStream({ format: PCM16_24K, signal: new AbortController().signal })).toThrowError(
      expect.objectContaining({ code: "invalid_audio" }),
    );
  });

  it("a stream started with an aborted signal rejects with cancelled", async () => {
    const controller = new AbortController();
    controller.abort();
    const stream = createPocketsphinxStt().startStream({ format: PCM16_16K, signal: controller.signal });
    await expect(stream.finish()).rejects.toMatchObject({ code: "cancelled" });
  });

  it("a missing binary is unhealthy and fails the stream with provider_unavailable", async () => {
    const stt = createPocketsphinxStt(
      mode === "resident" ? { python: "python-not-installed" } : { binary: "pocketsphinx-not-installed" },
    );
    const health = await stt.health();
    expect(health.ok).toBe(false);
    expect(health.detail).toMatch(/not found/);
    const stream = stt.startStream({ format: PCM16_16K, signal: new AbortController().signal });
    stream.write(new Int16Array(320));
    await expect(stream.finish()).rejects.toMatchObject({ code: "provider_unavailable" });
  });

  it("a missing model is unhealthy with a hint to install it", async () => {
    const health = await createPocketsphinxStt({ hmm: "/nonexistent/model" }).health();
    expect(health).toMatchObject({ ok: false });
    expect(health.detail).toMatch(/pocketsphinx-en-us/);
  });

  it("is healthy with Debian's packages and declares itself local", async () => {
    const stt = createPocketsphinxStt();
    expect(await stt.health()).toMatchObject({ ok: true });
    expect(stt.capabilities).toMatchObject({ local: true, inputFormats: [PCM16_16K] });
  });
});

describe("pocketsphinx STT, resident decoders", () => {
  const make = (options: PocketsphinxSttOptions = {}): PocketsphinxSttProvider => {
    const provider = createProvider({ decoder: "resident", ...options });
    created.push(provider);
    return provider;
  };
  const transcribe = async (
    stt: PocketsphinxSttProvider,
    path: string,
    signal = new AbortController().signal,
  ) => {
    const stream = stt.startStream({ format: PCM16_16K, signal });
    writeInFrames((pcm) => stream.write(pcm), pcmOf(path));
    return (await stream.finish()).text;
  };

  it("decodes stream after stream on one process (the models load once)", async () => {
    const stt = make();
    expect(await transcribe(stt, GO_FORWARD)).toBe("go forward ten meters");
    const [pid] = sphinxChildren("resident");
    expect(await transcribe(stt, SOMETHING)).toBe("go somewhere and do something");
    expect(await transcribe(stt, GO_FORWARD)).toBe("go forward ten meters");
    expect(sphinxChildren("resident")).toEqual([pid]);
    expect(stt.residentDecoders).toBe(1);
  });

  it("concurrent streams get a decoder each, and each hears only its own audio", async () => {
    const stt = make();
    const [a, b] = await Promise.all([transcribe(stt, GO_FORWARD), transcribe(stt, SOMETHING)]);
    expect(a).toBe("go forward ten meters");
    expect(b).toBe("go somewhere and do something");
    expect(stt.residentDecoders).toBe(2);
  });

  it("after an aborted stream the next one gets a fresh decoder and transcribes", async () => {
    const stt = make();
    const controller = new AbortController();
    const stream = stt.startStream({ format: PCM16_16K, signal: controller.signal });
    writeInFrames((pcm) => stream.write(pcm), pcmOf(NUMBERS));
    controller.abort();
    await expect(stream.finish()).rejects.toMatchObject({ code: "cancelled" });
    expect(sphinxChildren("resident")).toEqual([]);
    expect(await transcribe(stt, GO_FORWARD)).toBe("go forward ten meters");
  });

  it("close() ends idle and busy decoders, once; later streams still work, unpooled", async () => {
    const stt = make();
    const busy = stt.startStream({ format: PCM16_16K, signal: new AbortController().signal });
    busy.write(pcmOf(NUMBERS));
    expect(await transcribe(stt, GO_FORWARD)).toBe("go forward ten meters"); // its decoder is now idle
    expect(stt.residentDecoders).toBe(2);
    const closing = stt.close();
    expect(stt.close()).toBe(closing);
    await closing;
    expect(sphinxChildren("resident")).toEqual([]);
    await expect(busy.finish()).rejects.toMatchObject({ code: "provider_error" });
    expect(await transcribe(stt, GO_FORWARD)).toBe("go forward ten meters");
    // Not kept: the closed pool ends it as soon as its stream is done.
    await vi.waitFor(() => expect(sphinxChildren("resident")).toEqual([]));
  });

  it("an idle decoder exits after idleTimeoutMs, and none beyond maxIdleDecoders is kept", async () => {
    const stt = make({ idleTimeoutMs: 0 });
    expect(await transcribe(stt, GO_FORWARD)).toBe("go forward ten meters");
    await vi.waitFor(() => expect(stt.residentDecoders).toBe(0));
    const none = make({ maxIdleDecoders: 0 });
    expect(await transcribe(none, GO_FORWARD)).toBe("go forward ten meters");
    await vi.waitFor(() => expect(none.residentDecoders).toBe(0));
  });

  it("searches fast by default on resident decoders, full per stream; both hear the test recording", async () => {
    expect(await make().health()).toMatchObject({ detail: expect.stringMatching(/search fast/) });
    expect(await make({ decoder: "per-stream" }).health()).toMatchObject({
      detail: expect.stringMatching(/search full/),
    });
    const full = make({ search: "full" });
    expect(await full.health()).toMatchObject({ ok: true, detail: expect.stringMatching(/search full/) });
    expect(await transcribe(full, GO_FORWARD)).toBe("go forward ten meters");
  });

  it("loads a dictionary restricted to the language model's words, cached once under tmpDir", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "sphinx-dict-test-"));
    try {
      const stt = make({ tmpDir: tmp });
      expect(await transcribe(stt, GO_FORWARD)).toBe("go forward ten meters");
      const dir = join(tmp, `talkgate-sphinx-${process.getuid?.() ?? 0}`);
      const files = readdirSync(dir);
      expect(files).toEqual([expect.stringMatching(/^lm-only-[0-9a-f]+\.dict$/)]);
      const lines = (path: string) => readFileSync(path, "utf8").split("\n").filter(Boolean).length;
      const kept = lines(join(dir, files[0]!));
      expect(kept).toBeGreaterThan(10_000);
      expect(kept).toBeLessThan(lines("/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict"));
      // A second provider reuses the cached copy, and lmOnlyDict: false still decodes with the full one.
      expect(await transcribe(make({ tmpDir: tmp }), SOMETHING)).toBe("go somewhere and do something");
      expect(readdirSync(dir)).toEqual(files);
      expect(await transcribe(make({ lmOnlyDict: false }), GO_FORWARD)).toBe("go forward ten meters");
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });

  it("rejects bad options with config_invalid", () => {
    expect(() => createProvider({ lmOnlyDict: "yes" as unknown as boolean })).toThrowError(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => createProvider({ decoder: "other" as PocketsphinxDecoderMode })).toThrowError(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => createProvider({ search: "fastest" as "fast" })).toThrowError(
      expect.objectContaining({ code: "config_invalid" }),
    );
    expect(() => createProvider({ maxIdleDecoders: -1 })).toThrowError(
      expect.objectContaining({ code: "config_invalid" }),
    );
  });
});
