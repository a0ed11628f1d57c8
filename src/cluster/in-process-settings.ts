import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { TalkLogger } from "../core/index.js";
import {
  checkSettingName,
  decodeSettingValue,
  encodeSettingValue,
  type SettingFanout,
  type SettingListener,
  type SettingRecord,
  type SharedSettings,
} from "./shared-settings.js";

/**
 * The settings of an InProcessHub (what the Redis hash is to the Redis
 * coordinator): in memory, and with a directory one file per setting,
 * `<dir>/<name>.json` holding the value's JSON, written atomically (temporary
 * file + rename, mode 0600) and read back the first time the name is read.
 * Revisions live in memory (a value read from its file is revision 1).
 */
export class InProcessSettingsStore {
  readonly #dir: string | undefined;
  readonly #records = new Map<string, SettingRecord>();
  readonly #members = new Set<SettingFanout>();

  constructor(dir?: string) {
    this.#dir = dir;
  }

  attach(fanout: SettingFanout): void {
    this.#members.add(fanout);
  }

  detach(fanout: SettingFanout): void {
    this.#members.delete(fanout);
  }

  read(name: string, logger: TalkLogger): SettingRecord | undefined {
    const known = this.#records.get(name);
    if (known) return known;
    const loaded = this.#load(name, logger);
    if (loaded) this.#records.set(name, loaded);
    return loaded;
  }

  /** Persists (when there is a directory), then delivers to every attached worker, synchronously. */
  write(name: string, json: string, logger: TalkLogger): SettingRecord {
    const revision = (this.read(name, logger)?.revision ?? 0) + 1;
    if (this.#dir !== undefined) {
      const path = this.#path(name);
      mkdirSync(this.#dir, { recursive: true });
      const tmp = `${path}.${process.pid}.tmp`;
      writeFileSync(tmp, json + "\n", { mode: 0o600 });
      renameSync(tmp, path);
    }
    const record: SettingRecord = { revision, value: JSON.parse(json) as unknown };
    this.#records.set(name, record);
    for (const member of [...this.#members]) member.deliver(name, record);
    return record;
  }

  #path(name: string): string {
    return join(this.#dir!, `${name}.json`);
  }

  #load(name: string, logger: TalkLogger): SettingRecord | undefined {
    if (this.#dir === undefined) return undefined;
    const path = this.#path(name);
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
    const decoded = decodeSettingValue(text, name, path, logger);
    return decoded.ok ? { revision: 1, value: decoded.value } : undefined;
  }
}

/** One in-process worker's view of its hub's settings. */
export class InProcessSettings implements SharedSettings {
  readonly #store: InProcessSettingsStore;
  readonly #fanout: SettingFanout;
  readonly #logger: TalkLogger;

  constructor(store: InProcessSettingsStore, fanout: SettingFanout, logger: TalkLogger) {
    this.#store = store;
    this.#fanout = fanout;
    this.#logger = logger;
  }

  async read(name: string): Promise<SettingRecord | undefined> {
    checkSettingName(name);
    this.#fanout.track(name);
    const record = this.#store.read(name, this.#logger);
    return record && { revision: record.revision, value: structuredClone(record.value) };
  }

  async write(name: string, value: unknown): Promise<SettingRecord> {
    checkSettingName(name);
    const record = this.#store.write(name, encodeSettingValue(value), this.#logger);
    return { revision: record.revision, value: structuredClone(record.value) };
  }

  onChange(listener: SettingListener): () => void {
    return this.#fanout.on(listener);
  }
}
