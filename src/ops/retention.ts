import { readdir, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import type { TalkLogger } from "../core/index.js";

/** One kind of file kept for a number of days: every regular file in `dir` whose name matches. */
export interface RetentionRule {
  kind: "sessionLogs" | "transcripts" | "recordings" | "ledger";
  dir: string;
  /** 0 keeps them forever. */
  days: number;
  match: RegExp;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Deletes files older than their kind's retention (by modification time, the
 * moment they were last written), at start and every hour. A file that
 * cannot be read or deleted is logged and left; nothing else is touched.
 */
export class RetentionSweeper {
  readonly #rules: readonly RetentionRule[];
  readonly #logger: TalkLogger;
  readonly #timer: NodeJS.Timeout;
  #running: Promise<number> | undefined;

  constructor(rules: readonly RetentionRule[], logger: TalkLogger) {
    this.#rules = rules.filter((r) => r.days > 0);
    this.#logger = logger;
    this.#timer = setInterval(() => void this.sweep(), HOUR_MS);
    this.#timer.unref();
  }

  /** One pass over every rule; resolves with how many files were deleted. */
  sweep(now = Date.now()): Promise<number> {
    this.#running ??= this.#sweep(now).finally(() => (this.#running = undefined));
    return this.#running;
  }

  close(): void {
    clearInterval(this.#timer);
  }

  async #sweep(now: number): Promise<number> {
    let deleted = 0;
    for (const rule of this.#rules) {
      let names: string[];
      try {
        names = await readdir(rule.dir);
      } catch {
        continue; // nothing of this kind yet
      }
      const cutoff = now - rule.days * DAY_MS;
      for (const name of names) {
        if (!rule.match.test(name)) continue;
        const path = join(rule.dir, name);
        try {
          const info = await stat(path);
          if (!info.isFile() || info.mtimeMs >= cutoff) continue;
          await unlink(path);
          deleted++;
        } catch (err) {
          this.#logger.warn({ err, path, kind: rule.kind }, "retention: a file could not be removed");
        }
      }
    }
    if (deleted > 0) this.#logger.info({ deleted }, "retention: old files removed");
    return deleted;
  }
}
