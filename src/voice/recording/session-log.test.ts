import { execFile } from "node:child_process";
import type * as NodeFs from "node:fs";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  SESSION_LOG_MAX_PENDING_CHARS,
  SessionLog,
  flushSessionLogs,
  pendingSessionLogs,
  prepareSessionLogDir,
} from "./session-log.js";
import { NOOP_LOGGER } from "../../core/logger.js";
import type * as SessionLogModule from "./session-log.js";
import type { TalkEvent } from "../../core/talk-events.js";

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "talkgate-log-"));
  dirs.push(dir);
  return dir;
}
const logs: SessionLog[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const log of logs.splice(0)) log.close();
  // Every log closed: the process-wide flusher holds none (its timer and exit listener are gone).
  expect(pendingSessionLogs()).toBe(0);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function event(seq: number): TalkEvent {
  return {
    id: `e${seq}`,
    type: "health.changed",
    sessionId: "abc",
    seq,
    timestamp: new Date(0).toISOString(),
    mode: "stt-tts",
    transport: "managed-room",
    brain: "agent-consult",
    payload: { ok: true },
  };
}

/** A log closed after the test whatever happens. */
function open(dataDir: string, flushIntervalMs?: number, sessionId = "abc"): SessionLog {
  const log = new SessionLog({
    dataDir,
    sessionId,
    ...(flushIntervalMs !== undefined ? { flushIntervalMs } : {}),
  });
  logs.push(log);
  return log;
}

function seqs(path: string): number[] {
  const text = readFileSync(path, "utf8");
  if (text === "") return [];
  expect(text.endsWith("\n")).toBe(true);
  return text
    .trimEnd()
    .split("\n")
    .map((l) => (JSON.parse(l) as TalkEvent).seq);
}

describe("SessionLog", () => {
  it("flushIntervalMs 0: writes one JSON line per event to sessions/<id>.jsonl at once, readable before close", () => {
    const dataDir = tempDir();
    const log = open(dataDir, 0);
    log.append(event(1));
    log.append(event(2));
    expect(log.path).toBe(join(dataDir, "sessions", "abc.jsonl"));
    const lines = readFileSync(log.path, "utf8").trimEnd().split("\n");
    expect(lines.map((l) => (JSON.parse(l) as TalkEvent).seq)).toEqual([1, 2]);
    log.close();
    log.close();
    log.append(event(3));
    expect(readFileSync(log.path, "utf8").trimEnd().split("\n")).toHaveLength(2);
  });

  it("rejects a data dir that is a file with config_invalid naming the directory", () => {
    const file = join(tempDir(), "not-a-dir");
    writeFileSync(file, "x");
    expect(() => prepareSessionLogDir(file)).toThrow(expect.objectContaining({ code: "config_invalid" }));
    expect(() => new SessionLog({ dataDir: file, sessionId: "abc" })).toThrow(/not-a-dir/);
  });

  it("refuses a session id that would escape the sessions directory", () => {
    expect(() => new SessionLog({ dataDir: tempDir(), sessionId: "../etc" })).toThrow(
      expect.objectContaining({ code: "invalid_params" }),
    );
  });

  it("holds appended lines in memory until close, which writes them all, in order", () => {
    const exitListeners = process.listenerCount("exit");
    const log = open(tempDir(), 10_000);
    const other = open(tempDir(), 10_000, "other");
    for (let seq = 1; seq <= 5; seq++) log.append(event(seq));
    other.append(event(1));
    expect(readFileSync(log.path, "utf8")).toBe("");
    expect(log.pendingChars).toBeGreaterThan(0);
    expect(pendingSessionLogs()).toBe(2);
    // One exit listener for the process while logs hold lines, whatever their number.
    expect(process.listenerCount("exit")).toBe(exitListeners + 1);
    log.close();
    expect(seqs(log.path)).toEqual([1, 2, 3, 4, 5]);
    expect(pendingSessionLogs()).toBe(1);
    other.close();
    expect(pendingSessionLogs()).toBe(0);
    expect(process.listenerCount("exit")).toBe(exitListeners);
    log.close();
    log.append(event(6));
    expect(seqs(log.path)).toEqual([1, 2, 3, 4, 5]);
    expect(log.pendingChars).toBe(0);
  });

  it("one flush writes every pending line, in order, in one write", async () => {
    const { writes, fresh } = await withCountedWrites();
    const log = new fresh.SessionLog({ dataDir: tempDir(), sessionId: "abc", flushIntervalMs: 10_000 });
    log.append(event(1));
    log.append(event(2), JSON.stringify(event(2)));
    log.append(event(3));
    expect(writes).toHaveLength(0);
    log.flush();
    expect(writes).toHaveLength(1);
    expect(seqs(log.path)).toEqual([1, 2, 3]);
    log.flush();
    log.append(event(4));
    log.close();
    expect(writes).toHaveLength(2);
    expect(seqs(log.path)).toEqual([1, 2, 3, 4]);
    expect(fresh.pendingSessionLogs()).toBe(0);
  });

  it("flushIntervalMs 0 writes each event as its own write, nothing pending", async () => {
    const { writes, fresh } = await withCountedWrites();
    const log = new fresh.SessionLog({ dataDir: tempDir(), sessionId: "abc", flushIntervalMs: 0 });
    log.append(event(1));
    expect(writes).toHaveLength(1);
    expect(fresh.pendingSessionLogs()).toBe(0);
    log.append(event(2));
    expect(writes).toHaveLength(2);
    expect(log.pendingChars).toBe(0);
    expect(seqs(log.path)).toEqual([1, 2]);
    log.close();
    expect(writes).toHaveLength(2);
  });

  it("a failing write is logged once, drops its lines and does not throw; close still closes", async () => {
    const { writes, fresh, fail } = await withCountedWrites();
    const errors: unknown[] = [];
    const logger = { ...NOOP_LOGGER, error: (obj: unknown) => errors.push(obj) };
    const log = new fresh.SessionLog({
      dataDir: tempDir(),
      sessionId: "abc",
      logger,
      flushIntervalMs: 10_000,
    });
    log.append(event(1));
    fail(true);
    expect(() => log.flush()).not.toThrow();
    log.append(event(2));
    expect(() => log.flush()).not.toThrow();
    expect(writes).toHaveLength(2);
    expect(errors).toHaveLength(1);
    expect(log.pendingChars).toBe(0);
    fail(false);
    log.append(event(3));
    log.close();
    expect(log.closed).toBe(true);
    expect(seqs(log.path)).toEqual([3]);
    expect(fresh.pendingSessionLogs()).toBe(0);
  });

  it("the process-wide sweep writes a log's lines once the oldest has waited the interval, and stops", () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "performance"] });
    const dataDir = tempDir();
    const a = open(dataDir, 1000, "a");
    const b = open(dataDir, 1000, "b");
    a.append(event(1));
    vi.advanceTimersByTime(500);
    a.append(event(2));
    b.append(event(1));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(499);
    expect(seqs(a.path)).toEqual([]);
    // The oldest line of a is 1000 ms old at the next sweep (every 250 ms): a goes, b (500 ms) waits.
    vi.advanceTimersByTime(251);
    expect(seqs(a.path)).toEqual([1, 2]);
    expect(seqs(b.path)).toEqual([]);
    expect(pendingSessionLogs()).toBe(1);
    vi.advanceTimersByTime(500);
    expect(seqs(b.path)).toEqual([1]);
    expect(pendingSessionLogs()).toBe(0);
    // Nothing pending: no timer left running.
    expect(vi.getTimerCount()).toBe(0);
    a.append(event(3));
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1250);
    expect(seqs(a.path)).toEqual([1, 2, 3]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("the sweep runs on real timers too (a short interval, a bounded wait)", async () => {
    const log = open(tempDir(), 20);
    log.append(event(1));
    log.append(event(2));
    const deadline = Date.now() + 5000;
    while (seqs(log.path).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(seqs(log.path)).toEqual([1, 2]);
    expect(pendingSessionLogs()).toBe(0);
  });

  it("writes at once when the pending text reaches the bound, so a burst cannot grow memory", () => {
    const log = open(tempDir(), 10_000);
    // The last event whose line brings the pending text to the bound.
    let perBound = 0;
    for (let chars = 0; chars < SESSION_LOG_MAX_PENDING_CHARS;)
      chars += JSON.stringify(event(++perBound)).length + 1;
    for (let seq = 1; seq < perBound; seq++) log.append(event(seq));
    expect(log.pendingChars).toBeLessThan(SESSION_LOG_MAX_PENDING_CHARS);
    expect(readFileSync(log.path, "utf8")).toBe("");
    log.append(event(perBound));
    expect(log.pendingChars).toBe(0);
    expect(seqs(log.path)).toHaveLength(perBound);
    log.append(event(perBound + 1));
    expect(log.pendingChars).toBeGreaterThan(0);
    log.close();
    expect(seqs(log.path)).toEqual(Array.from({ length: perBound + 1 }, (_, i) => i + 1));
  });

  it("flushSessionLogs() writes every open log's pending lines", () => {
    const dataDir = tempDir();
    const a = open(dataDir, 10_000, "a");
    const b = open(dataDir, 10_000, "b");
    a.append(event(1));
    b.append(event(7));
    flushSessionLogs();
    expect(seqs(a.path)).toEqual([1]);
    expect(seqs(b.path)).toEqual([7]);
    expect(pendingSessionLogs()).toBe(0);
  });

  it("refuses a negative or non-finite flush interval", () => {
    for (const bad of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new SessionLog({ dataDir: tempDir(), sessionId: "abc", flushIntervalMs: bad })).toThrow(
        expect.objectContaining({ code: "config_invalid" }),
      );
    }
  });
});

/**
 * A fresh session-log module whose writeSync is counted (the text each write
 * got) and can be made to fail (EIO), with its own flusher.
 */
async function withCountedWrites(): Promise<{
  writes: unknown[];
  fresh: typeof SessionLogModule;
  fail: (on: boolean) => void;
}> {
  const writes: unknown[] = [];
  let failing = false;
  vi.resetModules();
  vi.doMock("node:fs", async (importOriginal) => {
    const fs = await importOriginal<typeof NodeFs>();
    return {
      ...fs,
      writeSync: (...args: Parameters<typeof fs.writeSync>) => {
        writes.push(args[1]);
        if (failing) throw Object.assign(new Error("EIO: i/o error, write"), { code: "EIO" });
        return fs.writeSync(...args);
      },
    };
  });
  const fresh = await import("./session-log.js");
  vi.doUnmock("node:fs");
  vi.resetModules();
  return { writes, fresh, fail: (on) => (failing = on) };
}

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const run = promisify(execFile);

/** A child process that appends `count` lines with a 10 s interval and then ends as `end` says. */
async function child(
  dataDir: string,
  count: number,
  end: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  // .mts: an ES module wherever the temp dir is (the core index it loads has top-level await below it).
  const script = join(dataDir, "child.mts");
  const module = join(ROOT, "src/voice/recording/session-log.ts");
  writeFileSync(
    script,
    `import { readFileSync } from "node:fs";
import { SessionLog } from ${JSON.stringify(module)};
const log = new SessionLog({ dataDir: ${JSON.stringify(dataDir)}, sessionId: "child", flushIntervalMs: 10_000 });
for (let seq = 1; seq <= ${count}; seq++) log.append({ seq } as never, JSON.stringify({ seq }));
// What is on disk before the process ends: nothing yet.
process.stdout.write(String(readFileSync(log.path, "utf8").length));
${end}
`,
  );
  try {
    const { stdout, stderr } = await run(process.execPath, ["--import", "tsx", script], {
      cwd: ROOT,
      timeout: 20_000,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

describe("SessionLog on process exit", () => {
  const lines = (dataDir: string) =>
    readFileSync(join(dataDir, "sessions", "child.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => (JSON.parse(l) as { seq: number }).seq);

  it("process.exit(0) with lines pending writes every line", async () => {
    const dataDir = tempDir();
    const { code, stdout } = await child(dataDir, 50, "process.exit(0);");
    expect(code).toBe(0);
    expect(stdout).toBe("0");
    expect(lines(dataDir)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    // Never closed: the marker stays for the next start to close the log as process_lost.
    expect(readdirSync(join(dataDir, "open-sessions"))).toEqual(["child"]);
  });

  it("an uncaught exception ending the process writes every line", async () => {
    const dataDir = tempDir();
    const { code, stdout, stderr } = await child(dataDir, 50, 'throw new Error("boom");');
    expect(code).toBe(1);
    expect(stdout).toBe("0");
    expect(stderr).toContain("boom");
    expect(lines(dataDir)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it("an empty event loop (the process just ends) writes every line", async () => {
    const dataDir = tempDir();
    const { code, stdout } = await child(dataDir, 3, "");
    expect(code).toBe(0);
    expect(stdout).toBe("0");
    expect(existsSync(join(dataDir, "sessions", "child.jsonl"))).toBe(true);
    expect(lines(dataDir)).toEqual([1, 2, 3]);
  });
});
