/**
 * Session logs a killed process left open. Each open SessionLog keeps a
 * marker `<dataDir>/open-sessions/<sessionId>` naming its writer (host, pid,
 * process instance; beside the sessions directory, so that one holds only
 * logs); a clean close removes it. On start, a runtime closes the
 * logs whose writer is gone: a marker of this host whose process no longer
 * runs (or whose pid is now this process, an earlier instance: containers
 * reuse pid 1) gets one `session.closed` line with reason `process_lost`
 * appended to its log, then the marker goes. Markers of other hosts (a shared
 * data directory) and of live processes are left alone.
 */
import { randomUUID } from "node:crypto";
import {
  closeSync,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { dirname, join } from "node:path";
import type { TalkLogger } from "../../core/index.js";

/** This process's identity in the markers: two runtimes of one process see each other as live. */
const WRITER = Object.freeze({ host: hostname(), pid: process.pid, instance: randomUUID() });

/** How much of a log's end is read to find its last event. */
const TAIL_BYTES = 64 * 1024;

interface Writer {
  host: string;
  pid: number;
  instance: string;
}

function markerDir(sessionsDir: string): string {
  return join(dirname(sessionsDir), "open-sessions");
}

/** Marks `<sessionsDir>/<sessionId>.jsonl` open by this process. */
export function markLogOpen(sessionsDir: string, sessionId: string): void {
  const dir = markerDir(sessionsDir);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, sessionId), JSON.stringify(WRITER));
}

/** The log was closed cleanly: its marker goes. */
export function markLogClosed(sessionsDir: string, sessionId: string): void {
  try {
    unlinkSync(join(markerDir(sessionsDir), sessionId));
  } catch {
    // Already gone (a sweep of a process that thought this one dead cannot happen on one host).
  }
}

function writerIsGone(writer: Writer): boolean {
  if (writer.host !== WRITER.host) return false;
  if (writer.pid === WRITER.pid) return writer.instance !== WRITER.instance;
  try {
    process.kill(writer.pid, 0);
    return false;
  } catch (err) {
    // EPERM: a process of another user runs under that pid, so it is not ours and ours is gone.
    return (err as NodeJS.ErrnoException).code === "ESRCH" || (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Appends `session.closed` (`process_lost`) to every log whose writer is gone.
 * Returns the session ids closed. Each file's failure is logged and skipped.
 */
export function closeLostSessionLogs(sessionsDir: string, logger: TalkLogger): string[] {
  let markers: string[];
  try {
    markers = readdirSync(markerDir(sessionsDir));
  } catch {
    return [];
  }
  const closed: string[] = [];
  for (const sessionId of markers) {
    try {
      const writer = JSON.parse(readFileSync(join(markerDir(sessionsDir), sessionId), "utf8")) as Writer;
      if (!writerIsGone(writer)) continue;
      if (closeLog(join(sessionsDir, `${sessionId}.jsonl`), sessionId)) closed.push(sessionId);
      markLogClosed(sessionsDir, sessionId);
    } catch (err) {
      logger.warn({ err, sessionId }, "session log left open by a lost process could not be closed");
    }
  }
  if (closed.length > 0)
    logger.warn(
      { sessions: closed.length },
      "closed session logs left open by a lost process (session.closed, process_lost)",
    );
  return closed;
}

/** Appends the closing line unless the log already ends with one. True when a line was written. */
function closeLog(path: string, sessionId: string): boolean {
  const fd = openSync(path, "a+");
  try {
    const { size } = fstatSync(fd);
    const length = Math.min(size, TAIL_BYTES);
    const tail = Buffer.alloc(length);
    readSync(fd, tail, 0, length, size - length);
    const text = tail.toString("utf8");
    // A line torn by the kill is ended first, so the closing line stands on its own.
    const torn = text.length > 0 && !text.endsWith("\n");
    const lines = text.split("\n").filter((l) => l.trim().length > 0);
    const last = parseLast(torn ? lines.slice(0, -1) : lines);
    if (last?.type === "session.closed") return false;
    const event = {
      id: randomUUID(),
      type: "session.closed",
      sessionId,
      seq: (typeof last?.seq === "number" ? last.seq : 0) + 1,
      timestamp: new Date().toISOString(),
      ...(last?.mode !== undefined ? { mode: last.mode } : {}),
      ...(last?.transport !== undefined ? { transport: last.transport } : {}),
      ...(last?.brain !== undefined ? { brain: last.brain } : {}),
      payload: {
        reason: "process_lost",
        message: "The process writing this session ended without closing it.",
      },
    };
    writeSync(fd, `${torn ? "\n" : ""}${JSON.stringify(event)}\n`);
    return true;
  } finally {
    closeSync(fd);
  }
}

function parseLast(lines: string[]): Record<string, unknown> | undefined {
  for (let i = lines.length - 1; i >= 0; i--) {
    try {
      return JSON.parse(lines[i] as string) as Record<string, unknown>;
    } catch {
      // A partial first line of the tail window: look further back.
    }
  }
  return undefined;
}
