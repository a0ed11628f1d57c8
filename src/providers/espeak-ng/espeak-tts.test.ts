import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TalkError } from "../../core/errors.js";
import { audioBytes, type AudioChunk } from "../../core/audio-chunk.js";
import { rmsOfPcm16Bytes } from "../support/pcm-stats.js";
import { createEspeakTts, ESPEAK_OUTPUT_FORMAT, parseVoiceList } from "./espeak-tts.js";

async function collect(iterable: AsyncIterable<AudioChunk>): Promise<AudioChunk[]> {
  const chunks: AudioChunk[] = [];
  for await (const chunk of iterable) chunks.push(chunk);
  return chunks;
}

function concat(chunks: AudioChunk[]): Uint8Array {
  return Buffer.concat(chunks.map((c) => audioBytes(c)));
}

/** espeak-ng processes that are children of this test process. */
function espeakChildren(): number[] {
  try {
    return execFileSync("pgrep", ["-P", String(process.pid), "-x", "espeak-ng"], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("espeak-ng TTS", () => {
  it("synthesizes audible PCM16 at 22 050 Hz for 'hello world'", async () => {
    const tts = createEspeakTts();
    const chunks = await collect(
      tts.synthesize({ text: "hello world", signal: new AbortController().signal }),
    );
    expect(chunks.length).toBeGreaterThan(0);
    for (const c of chunks) expect(c.format).toEqual(ESPEAK_OUTPUT_FORMAT);
    const pcm = concat(chunks);
    const seconds = pcm.byteLength / 2 / ESPEAK_OUTPUT_FORMAT.sampleRate;
    expect(seconds).toBeGreaterThan(0.4);
    expect(seconds).toBeLessThan(3);
    expect(rmsOfPcm16Bytes(pcm)).toBeGreaterThan(0.02);
  });

  it("streams a long text as several chunks", async () => {
    const tts = createEspeakTts();
    const text = "This sentence is long enough to need more than one pipe read. ".repeat(20);
    const chunks = await collect(tts.synthesize({ text, signal: new AbortController().signal }));
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(c.kind).toBe("pcm");
  });

  it("speaks faster at a higher speed", async () => {
    const tts = createEspeakTts();
    const text = "one two three four five six seven eight nine ten";
    const slow = concat(
      await collect(tts.synthesize({ text, speed: 0.6, signal: new AbortController().signal })),
    );
    const fast = concat(
      await collect(tts.synthesize({ text, speed: 1.8, signal: new AbortController().signal })),
    );
    expect(fast.byteLength).toBeLessThan(slow.byteLength * 0.7);
  });

  it("aborting mid-synthesis kills the process and rejects with cancelled", async () => {
    const tts = createEspeakTts();
    const controller = new AbortController();
    const text = "A long answer that the caller interrupts before it ends. ".repeat(100);
    const iterator = tts.synthesize({ text, signal: controller.signal })[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    // The pipe is not drained while we hold the iterator, so espeak-ng is still running.
    const pids = espeakChildren();
    expect(pids).toHaveLength(1);
    const pid = pids[0]!;
    expect(isAlive(pid)).toBe(true);

    controller.abort(new Error("barge-in"));
    const rejection = await (async () => {
      try {
        for (;;) if ((await iterator.next()).done) return undefined;
      } catch (err) {
        return err;
      }
    })();
    expect(rejection).toBeInstanceOf(TalkError);
    expect((rejection as TalkError).code).toBe("cancelled");
    expect(isAlive(pid)).toBe(false);
    expect(espeakChildren()).toEqual([]);
  });

  it("a consumer that stops early leaves no process behind", async () => {
    const tts = createEspeakTts();
    const text = "Nobody listens to the end of this. ".repeat(100);
    for await (const _chunk of tts.synthesize({ text, signal: new AbortController().signal })) {
      expect(espeakChildren()).toHaveLength(1);
      break;
    }
    expect(espeakChildren()).toEqual([]);
  });

  it("an already-aborted signal rejects with cancelled without spawning", async () => {
    const tts = createEspeakTts();
    const controller = new AbortController();
    controller.abort();
    await expect(collect(tts.synthesize({ text: "hi", signal: controller.signal }))).rejects.toMatchObject({
      code: "cancelled",
    });
  });

  it("lists voices from espeak-ng --voices and rejects unknown voices", async () => {
    const tts = createEspeakTts();
    const voices = await tts.listVoices();
    expect(voices).toContain("en-us");
    expect(tts.capabilities.voices).toEqual(voices);
    await expect(
      collect(tts.synthesize({ text: "hi", voice: "no-such-voice", signal: new AbortController().signal })),
    ).rejects.toMatchObject({ code: "invalid_params" });
    await expect(
      collect(tts.synthesize({ text: "hi", voice: "--help", signal: new AbortController().signal })),
    ).rejects.toMatchObject({ code: "invalid_params" });
  });

  it("rejects text longer than maxTextLength as payload_too_large", async () => {
    const tts = createEspeakTts({ maxTextLength: 10 });
    await expect(
      collect(tts.synthesize({ text: "eleven chars", signal: new AbortController().signal })),
    ).rejects.toMatchObject({ code: "payload_too_large" });
  });

  it("declares local streaming capabilities", () => {
    const caps = createEspeakTts().capabilities;
    expect(caps.local).toBe(true);
    expect(caps.streaming).toBe(true);
    expect(caps.outputFormats).toEqual([ESPEAK_OUTPUT_FORMAT]);
  });

  it("reports a missing binary in health() and as provider_unavailable", async () => {
    const tts = createEspeakTts({ binary: "espeak-ng-not-installed" });
    const health = await tts.health();
    expect(health.ok).toBe(false);
    expect(health.detail).toMatch(/not found/);
    await expect(
      collect(tts.synthesize({ text: "hi", signal: new AbortController().signal })),
    ).rejects.toMatchObject({
      code: "provider_unavailable",
    });
  });

  it("is healthy when espeak-ng is installed", async () => {
    expect(await createEspeakTts().health()).toMatchObject({ ok: true });
  });

  it("rejects invalid options at construction", () => {
    expect(() => createEspeakTts({ wordsPerMinute: 5 })).toThrow(/wordsPerMinute/);
    expect(() => createEspeakTts({ defaultVoice: "-x" })).toThrow(/defaultVoice/);
  });

  describe("a short text said again", () => {
    // espeak-ng behind a script that counts its syntheses: a binary path of its own, so its cache
    // entries are this test's only.
    const dir = mkdtempSync(join(tmpdir(), "espeak-count-"));
    const counter = join(dir, "syntheses");
    const binary = join(dir, "espeak-ng");
    writeFileSync(
      binary,
      `#!/bin/sh\ncase " $* " in *" --stdin "*) echo x >> ${counter};; esac\nexec /usr/bin/espeak-ng "$@"\n`,
    );
    chmodSync(binary, 0o755);
    const syntheses = (): number => {
      try {
        return readFileSync(counter, "utf8").split("\n").filter(Boolean).length;
      } catch {
        return 0;
      }
    };
    const say = (text: string, options: { cache?: boolean; speed?: number } = {}) =>
      collect(
        createEspeakTts({ binary, cache: options.cache }).synthesize({
          text,
          speed: options.speed,
          signal: new AbortController().signal,
        }),
      );

    it("is replayed from memory, the same audio, by any provider of the process", async () => {
      const first = await say("One moment, please.");
      expect(syntheses()).toBe(1);
      const again = await say("One moment, please.");
      expect(syntheses()).toBe(1);
      expect(Buffer.compare(Buffer.from(concat(again)), Buffer.from(concat(first)))).toBe(0);
      // A consumer writing into its chunks changes no later replay.
      for (const c of again) if (c.kind === "pcm") c.samples.fill(0);
      expect(
        Buffer.compare(Buffer.from(concat(await say("One moment, please."))), Buffer.from(concat(first))),
      ).toBe(0);
      expect(syntheses()).toBe(1);
    });

    it("is synthesized again with the cache off, at another rate or when long", async () => {
      const before = syntheses();
      await say("Good evening.");
      await say("Good evening.", { cache: false });
      await say("Good evening.", { speed: 1.5 });
      expect(syntheses()).toBe(before + 3);
      const long = "A sentence too long to keep. ".repeat(10);
      await say(long);
      await say(long);
      expect(syntheses()).toBe(before + 5);
    });

    it("keeps no synthesis that was cancelled, and a replay stops at an abort", async () => {
      const before = syntheses();
      const aborted = new AbortController();
      const chunks = createEspeakTts({ binary }).synthesize({
        text: "Please hold the line.",
        signal: aborted.signal,
      });
      const read = (async () => {
        for await (const _ of chunks) aborted.abort();
      })();
      await expect(read).rejects.toMatchObject({ code: "cancelled" });
      await say("Please hold the line.");
      expect(syntheses()).toBe(before + 2);
      // Now cached: aborted after its first chunk, the replay ends as cancelled too.
      const replayAbort = new AbortController();
      const replay = createEspeakTts({ binary }).synthesize({
        text: "Please hold the line.",
        signal: replayAbort.signal,
      });
      let replayed = 0;
      await expect(
        (async () => {
          for await (const _ of replay) {
            replayed += 1;
            replayAbort.abort();
          }
        })(),
      ).rejects.toMatchObject({ code: "cancelled" });
      expect(replayed).toBe(1);
      expect(syntheses()).toBe(before + 2);
      rmSync(dir, { recursive: true, force: true });
    });
  });

  it("parses the voice table", () => {
    const table =
      "Pty Language       Age/Gender VoiceName          File        Other Languages\n 5  af   --/M  Afrikaans  gmw/af\n 2  en-us  --/M  English_(America)  gmw/en-US  (en 3)\n";
    expect(parseVoiceList(table)).toEqual(["af", "en-us"]);
  });
});
