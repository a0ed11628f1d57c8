import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { TalkError } from "../../core/errors.js";
import { PCM16_16K, PCM16_24K } from "../../core/talk-types.js";
import { createPocketsphinxStt } from "./pocketsphinx-stt.js";

/** Debian pocketsphinx-testdata: 16 kHz mono raw PCM of a man saying "go forward ten meters". */
const GO_FORWARD = "/usr/share/pocketsphinx/test/data/goforward.raw";
const NUMBERS = "/usr/share/pocketsphinx/test/data/numbers.raw";

function pcmOf(path: string): Int16Array {
  const bytes = readFileSync(path);
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/** Writes like a live source: 20 ms frames. */
function writeInFrames(write: (pcm: Int16Array) => void, pcm: Int16Array): void {
  for (let i = 0; i < pcm.length; i += 320) write(pcm.subarray(i, i + 320));
}

function sphinxChildren(): number[] {
  try {
    return execFileSync("pgrep", ["-P", String(process.pid), "-f", "pocketsphinx_continuous"], {
      encoding: "utf8",
    })
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

describe("pocketsphinx STT", () => {
  it("transcribes the Debian 'go forward ten meters' recording", async () => {
    const stt = createPocketsphinxStt();
    const stream = stt.startStream({ format: PCM16_16K, signal: new AbortController().signal });
    writeInFrames((pcm) => stream.write(pcm), pcmOf(GO_FORWARD));
    const result = await stream.finish();
    expect(result.text).toBe("go forward ten meters");
  });

  it("reports each utterance as a partial while audio still streams in", async () => {
    const stt = createPocketsphinxStt();
    let resolveFirst!: (text: string) => void;
    const firstPartial = new Promise<string>((r) => (resolveFirst = r));
    const partials: string[] = [];
    const stream = stt.startStream({
      format: PCM16_16K,
      signal: new AbortController().signal,
      onPartial: (text) => {
        partials.push(text);
        resolveFirst(text);
      },
    });
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
    expect(sphinxChildren()).toHaveLength(1);
    controller.abort(new Error("turn cancelled"));
    await expect(stream.finish()).rejects.toMatchObject({ code: "cancelled" });
    expect(sphinxChildren()).toEqual([]);
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
    const stt = createPocketsphinxStt({ binary: "pocketsphinx-not-installed" });
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
