import { accessSync, closeSync, constants, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { closeLostSessionLogs, markLogClosed, markLogOpen } from "./lost-session-logs.js";
import { NOOP_LOGGER, TalkError } from "../../core/index.js";
import type { SessionLogStore, TalkEvent, TalkLogger } from "../../core/index.js";

export interface SessionLogOptions {
  /** The configured data directory; logs go to `<dataDir>/sessions/<sessionId>.jsonl`. */
  dataDir: string;
  sessionId: string;
  /** Receives write failures (default: silent). */
  logger?: TalkLogger;
  /**
   * How long appended lines may wait in memory before they are written, all in one write, ms;
   * 0 writes each event as it comes (default 1000, `runtime.sessionLogFlushMs`).
   */
  flushIntervalMs?: number;
}

/** The default wait of appended lines (`runtime.sessionLogFlushMs`). */
export const DEFAULT_SESSION_LOG_FLUSH_MS = 1000;

/**
 * A log whose pending text reaches this many characters is written at once: a burst of events
 * cannot grow memory (64 Ki characters, at most 192 KiB of UTF-8; a relayed call's 8 events a second
 * of a few hundred characters each reach it only after many flush intervals).
 */
export const SESSION_LOG_MAX_PENDING_CHARS = 64 * 1024;

/** Session ids become file names; anything else could escape the sessions directory. */
const SAFE_SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * Creates and checks `<dataDir>/sessions`. Throws `config_invalid` naming the
 * directory when it cannot be created or written, so a bad data dir fails at
 * startup rather than on the first event.
 */
export function prepareSessionLogDir(dataDir: string): string {
  if (typeof dataDir !== "string" || dataDir.length === 0) {
    throw new TalkError("config_invalid", "The data directory must be a non-empty path.");
  }
  const dir = join(dataDir, "sessions");
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new TalkError("config_invalid", `The session log directory ${dir} cannot be created or written.`, {
      cause: err,
      details: { dataDir },
    });
  }
  return dir;
}

/**
 * Appends a session's events (never audio) as JSON lines. The file is opened
 * once. With a flush interval (the default) appended lines wait in memory and
 * go to the file in one synchronous write per flush: when the oldest has waited
 * `flushIntervalMs` (one process-wide sweep, see `SessionLogFlusher`), when
 * they reach `SESSION_LOG_MAX_PENDING_CHARS`, on `flush()` and `close()`, and
 * on the process's `exit` event (`process.exit()`, an empty event loop, an
 * uncaught exception). Only a process killed without `exit` (SIGKILL, the OOM
 * killer, a power loss, a signal with no handler) loses lines: those of the
 * last `flushIntervalMs` and one sweep. With `flushIntervalMs: 0` each event is
 * one synchronous write as it comes, so such a kill loses at most the event
 * being written. A write failure is logged (once per log) and the session goes
 * on, its pending lines dropped: losing the log must not end a call.
 */
export class SessionLog {
  readonly path: string;
  readonly #dir: string;
  readonly #sessionId: string;
  readonly #logger: TalkLogger;
  readonly #flushIntervalMs: number;
  #fd: number | undefined;
  #failed = false;
  /** Lines appended and not yet written, each ending in "\n". */
  #pending = "";
  /** performance.now() of the oldest pending line. */
  #pendingSince = 0;

  constructor(options: SessionLogOptions) {
    if (!SAFE_SESSION_ID.test(options.sessionId)) {
      throw new TalkError(
        "invalid_params",
        "A session id used as a log file name must be [A-Za-z0-9_-]{1,128}.",
      );
    }
    const flushIntervalMs = options.flushIntervalMs ?? DEFAULT_SESSION_LOG_FLUSH_MS;
    if (!Number.isFinite(flushIntervalMs) || flushIntervalMs < 0) {
      throw new TalkError(
        "config_invalid",
        "SessionLogOptions.flushIntervalMs must be a non-negative number.",
      );
    }
    const dir = prepareSessionLogDir(options.dataDir);
    this.path = join(dir, `${options.sessionId}.jsonl`);
    this.#dir = dir;
    this.#sessionId = options.sessionId;
    this.#logger = options.logger ?? NOOP_LOGGER;
    this.#flushIntervalMs = flushIntervalMs;
    try {
      this.#fd = openSync(this.path, "a");
    } catch (err) {
      throw new TalkError("config_invalid", `Cannot open session log ${this.path}.`, { cause: err });
    }
    try {
      // While this marker exists the log is open; a process killed before close() leaves it for the next start.
      markLogOpen(dir, options.sessionId);
    } catch (err) {
      this.#logger.warn({ err, path: this.path }, "session log open marker could not be written");
    }
  }

  get closed(): boolean {
    return this.#fd === undefined;
  }

  /** Characters appended and not yet written. */
  get pendingChars(): number {
    return this.#pending.length;
  }

  /**
   * Adds `event` as one line (`line`: its JSON when the caller has it already):
   * written now with no flush interval, else at the next flush.
   */
  append(event: TalkEvent, line: string = JSON.stringify(event)): void {
    if (this.#fd === undefined) return;
    if (this.#flushIntervalMs === 0) {
      this.#write(this.#fd, `${line}\n`);
      return;
    }
    if (this.#pending.length === 0) {
      this.#pendingSince = performance.now();
      FLUSHER.hold(this, this.#flushIntervalMs);
    }
    this.#pending += `${line}\n`;
    if (this.#pending.length >= SESSION_LOG_MAX_PENDING_CHARS) this.flush();
  }

  /** Writes the pending lines now, in one write. A reader of a live log calls this first. */
  flush(): void {
    if (this.#pending.length === 0) return;
    const text = this.#pending;
    this.#pending = "";
    FLUSHER.release(this);
    if (this.#fd !== undefined) this.#write(this.#fd, text);
  }

  /** Flushes when the oldest pending line has waited the flush interval (the sweep's call). */
  flushIfDue(now: number): void {
    if (this.#pending.length > 0 && now - this.#pendingSince >= this.#flushIntervalMs) this.flush();
  }

  /** Flushes, then closes the file. Idempotent; appends after it do nothing. */
  close(): void {
    if (this.#fd === undefined) return;
    this.flush();
    const fd = this.#fd;
    this.#fd = undefined;
    try {
      closeSync(fd);
    } catch (err) {
      this.#logger.warn({ err, path: this.path }, "session log close failed");
    }
    markLogClosed(this.#dir, this.#sessionId);
  }

  /** Writes all of `text`; a failure drops it and is logged once. */
  #write(fd: number, text: string): void {
    try {
      const written = writeSync(fd, text);
      // A file takes all of a write but on a full disk or a size limit; the rest is retried (and then fails).
      if (written < Buffer.byteLength(text)) writeRest(fd, text, written);
    } catch (err) {
      // Logged once: a full disk would otherwise log every flush.
      if (!this.#failed) this.#logger.error({ err, path: this.path }, "session log write failed");
      this.#failed = true;
    }
  }
}

function writeRest(fd: number, text: string, written: number): void {
  const bytes = Buffer.from(text);
  for (let offset = written; offset < bytes.byteLength;) {
    const n = writeSync(fd, bytes, offset, bytes.byteLength - offset);
    if (n <= 0) throw new Error(`session log write wrote nothing at byte ${offset}`);
    offset += n;
  }
}

/**
 * One timer for every session log of the process, running only while some log
 * holds pending lines (a timer per log would cost one per call), and one
 * `exit` listener over the same time that writes every pending line before the
 * process ends. Each sweep flushes the logs whose oldest line has waited their
 * interval; it runs every quarter interval (10-250 ms), so a line waits at most
 * its interval plus one sweep.
 */
class SessionLogFlusher {
  readonly #holding = new Set<SessionLog>();
  #timer: NodeJS.Timeout | undefined;
  #sweepMs = Infinity;
  readonly #sweep = (): void => {
    const now = performance.now();
    for (const log of this.#holding) log.flushIfDue(now);
  };
  readonly #onExit = (): void => {
    this.flushAll();
  };

  /** Logs holding pending lines now. */
  get holding(): number {
    return this.#holding.size;
  }

  hold(log: SessionLog, flushIntervalMs: number): void {
    this.#holding.add(log);
    const sweepMs = Math.min(250, Math.max(10, Math.floor(flushIntervalMs / 4)));
    if (this.#timer !== undefined && sweepMs >= this.#sweepMs) return;
    if (this.#timer === undefined) process.on("exit", this.#onExit);
    else clearInterval(this.#timer);
    this.#sweepMs = sweepMs;
    this.#timer = setInterval(this.#sweep, sweepMs);
    this.#timer.unref();
  }

  release(log: SessionLog): void {
    this.#holding.delete(log);
    if (this.#holding.size > 0 || this.#timer === undefined) return;
    clearInterval(this.#timer);
    this.#timer = undefined;
    this.#sweepMs = Infinity;
    process.off("exit", this.#onExit);
  }

  flushAll(): void {
    // A flush releases its log: deleting the visited entry while iterating a Set is safe.
    for (const log of this.#holding) log.flush();
  }
}

const FLUSHER = new SessionLogFlusher();

/**
 * Writes the pending lines of every session log of the process now (the
 * `exit` listener's work; also for a reader that wants every live log on disk).
 */
export function flushSessionLogs(): void {
  FLUSHER.flushAll();
}

/** How many session logs hold pending lines now (the flusher's timer and `exit` listener run while one does). */
export function pendingSessionLogs(): number {
  return FLUSHER.holding;
}

export interface SessionLogFilesOptions {
  /** The configured data directory; logs go to `<dataDir>/sessions/<sessionId>.jsonl`. */
  dataDir: string;
  /** SessionLogOptions.flushIntervalMs of every log (`runtime.sessionLogFlushMs`). Default 1000. */
  flushIntervalMs?: number;
  logger?: TalkLogger;
}

/**
 * The runtime's session logs as files (the model's `SessionLogStore` port): the directory is created
 * and checked now (config_invalid naming it), and logs a killed process left open get their closing
 * line before any new log is written.
 */
export function sessionLogFiles(options: SessionLogFilesOptions): SessionLogStore {
  const logger = options.logger ?? NOOP_LOGGER;
  const flushIntervalMs = options.flushIntervalMs ?? DEFAULT_SESSION_LOG_FLUSH_MS;
  if (!Number.isFinite(flushIntervalMs) || flushIntervalMs < 0)
    throw new TalkError("config_invalid", "runtime.sessionLogFlushMs must be a non-negative number.");
  closeLostSessionLogs(prepareSessionLogDir(options.dataDir), logger);
  return {
    open: (sessionId) => new SessionLog({ dataDir: options.dataDir, sessionId, logger, flushIntervalMs }),
  };
}
