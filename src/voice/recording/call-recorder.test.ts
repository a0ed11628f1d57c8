import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readWav } from "../../codecs/index.js";
import type { TalkLogger } from "../../core/logger.js";
import type { TalkError } from "../../core/errors.js";
import { CallRecorder } from "./call-recorder.js";

const frame = (value: number, n = 160): Int16Array => new Int16Array(n).fill(value);

function recorder(path: string, clock: { ms: number }, onFailure?: (e: TalkError) => void) {
  const errors: string[] = [];
  const noop = (): void => {};
  const logger: TalkLogger = {
    debug: noop,
    info: noop,
    warn: noop,
    error: (_o: unknown, msg?: string) => errors.push(msg ?? ""),
  };
  const rec = new CallRecorder({
    path,
    sampleRate: 8000,
    flushIntervalMs: 10_000, // the test flushes
    callerLagMs: 100,
    now: () => clock.ms,
    logger,
    ...(onFailure ? { onFailure } : {}),
  });
  return { rec, errors };
}

describe("CallRecorder", () => {
  it("writes a two-channel WAV that is valid after every flush, then whole at close", async () => {
    const dir = mkdtempSync(join(tmpdir(), "talkgate-rec-"));
    const path = join(dir, "call.wav");
    const clock = { ms: 0 };
    const { rec } = recorder(path, clock);
    for (let i = 1; i <= 5; i++) {
      clock.ms = 20 * i;
      rec.caller(frame(i));
    }
    rec.assistant(frame(9, 800)); // 100 ms of answer sent at 100 ms
    await rec.flush();
    // What a crash right now would leave: every sample up to the flush, the file valid as it is.
    const early = readWav(readFileSync(path));
    expect(early.format).toEqual({ encoding: "pcm16", sampleRate: 8000, channels: 2 });
    expect(early.pcm.length).toBe(2 * 800);
    expect(early.pcm[2 * 799]).toBe(5);
    clock.ms = 150;
    const summary = await rec.close();
    expect(summary).toEqual({ state: "complete", durationMs: 150, bytes: 1200 * 4 });
    const wav = readWav(readFileSync(path));
    const assistant = wav.pcm.filter((_, i) => i % 2 === 1);
    // Cut at 150 ms: the 50 ms of answer not yet played are not in the file.
    expect(assistant.length).toBe(1200);
    expect(assistant.slice(800).every((v) => v === 9)).toBe(true);
    expect(await rec.close()).toBe(summary);
    expect(rec.state).toBe("closed");
  });

  it("a file that cannot be written (ENOSPC, /dev/full) stops the recording, logs and reports once, never throws", async () => {
    const dir = mkdtempSync(join(tmpdir(), "talkgate-rec-"));
    const path = join(dir, "call.wav");
    symlinkSync("/dev/full", path);
    const clock = { ms: 0 };
    const failures: TalkError[] = [];
    const { rec, errors } = recorder(path, clock, (e) => failures.push(e));
    rec.caller(frame(1));
    await rec.flush();
    await new Promise((r) => setImmediate(r));
    expect(rec.state).toBe("failed");
    expect(failures).toHaveLength(1);
    expect(failures[0]!.code).toBe("recording_failed");
    expect(failures[0]!.details).toEqual({ reason: "ENOSPC" });
    expect(errors).toEqual(["recording: the file could not be written, recording stopped"]);
    clock.ms = 100;
    expect(() => rec.caller(frame(2))).not.toThrow();
    expect(() => rec.assistant(frame(2))).not.toThrow();
    const summary = await rec.close();
    expect(summary.state).toBe("failed");
    expect(summary.error?.code).toBe("recording_failed");
    expect(failures).toHaveLength(1);
  });

  it("creates a missing directory; one that cannot be created (a file in the way) fails the same way", async () => {
    const base = mkdtempSync(join(tmpdir(), "talkgate-rec-"));
    const made = recorder(join(base, "a", "b", "x.wav"), { ms: 0 });
    expect((await made.rec.close()).state).toBe("complete");
    writeFileSync(join(base, "file"), "x");
    const failures: TalkError[] = [];
    const { rec } = recorder(join(base, "file", "x.wav"), { ms: 0 }, (e) => failures.push(e));
    const summary = await rec.close();
    expect(summary.state).toBe("failed");
    expect(failures.map((f) => f.details)).toEqual([{ reason: "EEXIST" }]);
  });
});
