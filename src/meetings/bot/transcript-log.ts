import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { TalkLogger } from "../../core/index.js";

/**
 * One finalized line: a participant's caption, (`role: "assistant"`) an
 * answer the bot spoke in agent mode, with the bot's name as speaker, or
 * (`role: "chat"`) a message of the meeting's chat, with its sender as
 * speaker (the bot's own posts included).
 */
export interface TranscriptLine {
  at: string;
  speaker: string;
  trackId?: string;
  /** The RTP SSRC/CSRC that dominated the line, when the page reported one. */
  rtpSource?: number;
  turnId: string;
  /**
   * When the words were said (ISO-8601): a caption's utterance (its first and
   * last audio, pre-roll included), an assistant answer's playout. Absent on
   * chat lines and on lines written before these fields existed (exports use `at`).
   */
  start?: string;
  end?: string;
  /** For an assistant line: the words the meeting heard (up to the cut when interrupted). */
  text: string;
  /** Set on the bot's own spoken answers (agent mode) and on chat messages; absent on captions. */
  role?: "assistant" | "chat";
  /** An assistant answer cut before its end (barge-in, a new question, the bot leaving). */
  interrupted?: true;
}

/**
 * A bot's transcript on disk, one JSON line per finalized caption, written
 * with one writeSync each: a crash of the bot, its browser or the process
 * loses no line that was already final.
 */
export class TranscriptLog {
  readonly path: string;
  readonly #logger: TalkLogger;
  #fd: number | undefined;
  #failed = false;

  constructor(path: string, logger: TalkLogger) {
    this.path = path;
    this.#logger = logger;
    mkdirSync(dirname(path), { recursive: true });
    this.#fd = openSync(path, "a");
  }

  append(line: TranscriptLine): void {
    if (this.#fd === undefined) return;
    try {
      writeSync(this.#fd, `${JSON.stringify(line)}\n`);
    } catch (err) {
      // Logged once: a full disk must not flood the log nor end the meeting.
      if (!this.#failed) this.#logger.error({ err, path: this.path }, "meeting transcript write failed");
      this.#failed = true;
    }
  }

  /** Idempotent. */
  close(): void {
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    closeSync(fd);
  }
}

/** Reads a transcript file; a missing file is an empty transcript, a torn last line is skipped. */
export function readTranscript(path: string): TranscriptLine[] {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return [];
  }
  const lines: TranscriptLine[] = [];
  for (const raw of text.split("\n")) {
    if (raw.trim() === "") continue;
    try {
      lines.push(JSON.parse(raw) as TranscriptLine);
    } catch {
      // Only the line being written when a crash hit can be torn.
    }
  }
  return lines;
}
