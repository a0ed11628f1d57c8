import { accessSync, closeSync, constants, mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { markLogClosed, markLogOpen } from "./lost-session-logs.js";
import { TalkError } from "./errors.js";
import { NOOP_LOGGER } from "./logger.js";
import type { TalkLogger } from "./logger.js";
import type { TalkEvent } from "./talk-events.js";

export interface SessionLogOptions {
  /** The configured data directory; logs go to `<dataDir>/sessions/<sessionId>.jsonl`. */
  dataDir: string;
  sessionId: string;
  /** Receives write failures (default: silent). */
  logger?: TalkLogger;
}

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
 * once and each event is one synchronous write, so a process crash loses at
 * most the event being written. A write failure is logged and the session goes
 * on: losing the log must not end a call.
 */
export class SessionLog {
  readonly path: string;
  readonly #dir: string;
  readonly #sessionId: string;
  readonly #logger: TalkLogger;
  #fd: number | undefined;
  #failed = false;

  constructor(options: SessionLogOptions) {
    if (!SAFE_SESSION_ID.test(options.sessionId)) {
      throw new TalkError(
        "invalid_params",
        "A session id used as a log file name must be [A-Za-z0-9_-]{1,128}.",
      );
    }
    const dir = prepareSessionLogDir(options.dataDir);
    this.path = join(dir, `${options.sessionId}.jsonl`);
    this.#dir = dir;
    this.#sessionId = options.sessionId;
    this.#logger = options.logger ?? NOOP_LOGGER;
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

  /** Writes `event` as one line (`line`: its JSON when the caller has it already). */
  append(event: TalkEvent, line: string = JSON.stringify(event)): void {
    if (this.#fd === undefined) return;
    try {
      writeSync(this.#fd, `${line}\n`);
    } catch (err) {
      // Logged once: a full disk would otherwise log every event.
      if (!this.#failed) this.#logger.error({ err, path: this.path }, "session log write failed");
      this.#failed = true;
    }
  }

  /** Closes the file. Idempotent. */
  close(): void {
    const fd = this.#fd;
    this.#fd = undefined;
    if (fd === undefined) return;
    try {
      closeSync(fd);
    } catch (err) {
      this.#logger.warn({ err, path: this.path }, "session log close failed");
    }
    markLogClosed(this.#dir, this.#sessionId);
  }
}
