import { TalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";

/**
 * Small settings every worker must agree on (e.g. the meeting bots' wake
 * triggers): one JSON value per name, with a revision that only grows. The
 * coordinator holds them (`coordinator.settings`), so the backend decides
 * where they live, as for leases and events:
 *
 * - in-process: the hub's memory, and one JSON file per setting when the
 *   coordinator was given a `settingsDir` (`<dir>/<name>.json`, written
 *   atomically, read back at start-up);
 * - Redis (the source of truth in a cluster): a hash `setting:<name>`
 *   (`revision`, `value`) written and announced by one script on the pub/sub
 *   channel `settings`; every worker's subscriber hears each change.
 *
 * Every worker's listeners get each revision at most once, in increasing
 * order per name (one overtaken by a later revision before it arrived is
 * skipped); the writing worker's listeners have it when `write` resolves.
 */
export interface SettingRecord {
  /** Grows by one per write of the name (a higher revision replaces a lower one). */
  revision: number;
  /** The JSON value as written (parsed; validating it is the reader's job). */
  value: unknown;
}

export type SettingListener = (name: string, record: SettingRecord) => void;

export interface SharedSettings {
  /**
   * The stored record, or undefined when the name was never written or the
   * stored data is unreadable (logged as a warning, never thrown). Rejects
   * owner_unreachable when the backend (Redis) is unreachable.
   */
  read(name: string): Promise<SettingRecord | undefined>;
  /**
   * Stores the value and tells every worker. Rejects invalid_params for a
   * bad name or a value that is not JSON (or larger than 64 KiB),
   * owner_unreachable while Redis is unreachable.
   */
  write(name: string, value: unknown): Promise<SettingRecord>;
  /** Every change of any setting on this worker (its own writes included). Returns the removal. */
  onChange(listener: SettingListener): () => void;
}

/** Largest stored value, as JSON text. */
export const MAX_SETTING_BYTES = 65_536;
const SETTING_NAME = /^[a-z][a-z0-9-]{0,63}$/;

/** Names are lowercase words with dashes (they become file names and Redis keys). invalid_params otherwise. */
export function checkSettingName(name: string): string {
  if (typeof name !== "string" || !SETTING_NAME.test(name)) {
    throw new TalkError(
      "invalid_params",
      "A setting name is 1-64 of a-z, 0-9 and '-', starting with a letter.",
      {
        details: { issues: [{ path: "name", message: "not a setting name" }] },
      },
    );
  }
  return name;
}

/** The value as JSON text (what is stored and sent). invalid_params when it is not JSON or too large. */
export function encodeSettingValue(value: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (err) {
    throw new TalkError("invalid_params", "A setting value must be JSON.", { cause: err });
  }
  if (json === undefined) throw new TalkError("invalid_params", "A setting value must be JSON.");
  if (Buffer.byteLength(json) > MAX_SETTING_BYTES)
    throw new TalkError("invalid_params", `A setting value is at most ${MAX_SETTING_BYTES} bytes of JSON.`);
  return json;
}

/**
 * One worker's delivery of setting changes: each revision of a name once,
 * older or repeated ones dropped (a writer hears its own change twice: at
 * once, and back from the backend), a throwing listener logged and skipped.
 */
export class SettingFanout {
  readonly #listeners = new Set<SettingListener>();
  readonly #revisions = new Map<string, number>();
  readonly #logger: TalkLogger;

  constructor(logger: TalkLogger) {
    this.#logger = logger;
  }

  on(listener: SettingListener): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Names this worker has read or heard of (re-read after a reconnect). */
  get names(): string[] {
    return [...this.#revisions.keys()];
  }

  /** Remembers a name to re-read after a reconnect, without delivering anything. */
  track(name: string): void {
    if (!this.#revisions.has(name)) this.#revisions.set(name, 0);
  }

  /** Delivers the record unless this revision (or a later one) was delivered already; true if delivered. */
  deliver(name: string, record: SettingRecord): boolean {
    if (record.revision <= (this.#revisions.get(name) ?? 0)) return false;
    this.#revisions.set(name, record.revision);
    for (const listener of [...this.#listeners]) {
      try {
        listener(name, { revision: record.revision, value: structuredClone(record.value) });
      } catch (err) {
        this.#logger.warn({ err, setting: name }, "setting listener threw");
      }
    }
    return true;
  }

  clear(): void {
    this.#listeners.clear();
  }
}

/** Parses stored JSON text; undefined (with a warning naming the setting and where) when it is not JSON. */
export function decodeSettingValue(
  json: string,
  name: string,
  where: string,
  logger: TalkLogger,
): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(json) as unknown };
  } catch (err) {
    logger.warn(
      { setting: name, where, err: (err as Error).message },
      "stored setting is not valid JSON; ignored",
    );
    return { ok: false };
  }
}
