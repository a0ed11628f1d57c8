import { mkdir, open, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import type { TalkEvent, TalkLogger, TalkRuntime } from "../core/index.js";
import type { ProviderCall, ProviderCallTrace, ProviderObserver } from "./provider-probe.js";
import { type PriceTable, SessionUsage, type UsageRecord } from "./usage-record.js";

export interface UsageLedgerOptions {
  runtime: TalkRuntime;
  /** `<dataDir>/usage`. */
  dir: string;
  workerId: string;
  prices: PriceTable;
  logger: TalkLogger;
}

/** The day file a record belongs to: `YYYY-MM-DD.<worker>.jsonl`, by the session's end (UTC). */
function fileOf(day: string, workerId: string): string {
  return `${day}.${workerId.replace(/[^A-Za-z0-9_.-]/g, "_")}.jsonl`;
}

const UNCOUNTED: ProviderCallTrace = Object.freeze({ first: () => {}, end: () => {} });

const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.[A-Za-z0-9_.-]+\.jsonl$/;

/**
 * The usage ledger: one JSON line per finished session, appended to a file
 * per day and per worker under `<dataDir>/usage/`, synced to disk before the
 * write counts as done. Why files and not an embedded database: appends need
 * no native module and no locking (each worker writes its own file), a crash
 * can lose only the sessions still open (a torn last line is skipped when
 * read), retention is deleting whole day files, and a cluster-wide query asks
 * every worker for its own lines (the worker command `listUsage`) like the
 * session listing does. Writes are queued, one at a time, in order.
 */
export class UsageLedger implements ProviderObserver {
  readonly #o: UsageLedgerOptions;
  readonly #open = new Map<string, SessionUsage>();
  readonly #off: () => void;
  #writes: Promise<void> = Promise.resolve();

  constructor(options: UsageLedgerOptions) {
    this.#o = options;
    this.#off = options.runtime.subscribeAll((event) => this.#onEvent(event));
  }

  connected(call: ProviderCall, _ms: number, ok: boolean): void {
    if (ok) this.#open.get(call.session.id)?.realtimeConnected(call.provider);
  }

  /** STT, TTS and agent calls are counted from the usage.metrics they are told as (usage-events.ts). */
  call(): ProviderCallTrace {
    return UNCOUNTED;
  }

  inputAudio(call: ProviderCall, seconds: number): void {
    this.#open.get(call.session.id)?.inputAudio(seconds);
  }

  /** Resolves once every record finished so far is on disk. */
  flushed(): Promise<void> {
    return this.#writes;
  }

  /** Records of sessions that ended between `from` and `to` (inclusive days, UTC), oldest first. */
  async list(from: string, to: string, limit = 10_000): Promise<UsageRecord[]> {
    await this.#writes;
    let names: string[];
    try {
      names = await readdir(this.#o.dir);
    } catch {
      return [];
    }
    const days = names
      .map((name) => ({ name, day: DAY_FILE.exec(name)?.[1] }))
      .filter((f): f is { name: string; day: string } => f.day !== undefined && f.day >= from && f.day <= to)
      .sort((a, b) => a.day.localeCompare(b.day) || a.name.localeCompare(b.name));
    const out: UsageRecord[] = [];
    for (const { name } of days) {
      const text = await readFile(join(this.#o.dir, name), "utf8").catch(() => "");
      for (const line of text.split("\n")) {
        if (!line.trim()) continue;
        try {
          out.push(JSON.parse(line) as UsageRecord);
        } catch {
          // A line torn by a crash mid-write: skipped, the rest of the file stands.
          this.#o.logger.warn({ file: name }, "usage ledger: a malformed line was skipped");
        }
        if (out.length >= limit) return out;
      }
    }
    return out.sort((a, b) => a.endedAt.localeCompare(b.endedAt));
  }

  close(): Promise<void> {
    this.#off();
    this.#open.clear();
    return this.#writes;
  }

  #onEvent(event: TalkEvent): void {
    if (event.type === "session.created") {
      this.#open.set(event.sessionId, new SessionUsage(event, this.#o.workerId));
      return;
    }
    const usage = this.#open.get(event.sessionId);
    if (!usage) return;
    if (event.type !== "session.closed") {
      usage.observe(event);
      return;
    }
    this.#open.delete(event.sessionId);
    const record = usage.finish(event, this.#o.prices);
    this.#writes = this.#writes.then(() => this.#append(record));
  }

  async #append(record: UsageRecord): Promise<void> {
    const path = join(this.#o.dir, fileOf(record.endedAt.slice(0, 10), this.#o.workerId));
    try {
      await mkdir(this.#o.dir, { recursive: true });
      const file = await open(path, "a");
      try {
        await file.write(`${JSON.stringify(record)}\n`);
        await file.sync();
      } finally {
        await file.close();
      }
    } catch (err) {
      this.#o.logger.error(
        { err, sessionId: record.sessionId, path },
        "usage ledger: a record was not written",
      );
    }
  }
}
