import { NOOP_LOGGER, type TalkLogger } from "../core/index.js";
import { checkSettingName, type SettingRecord, type SharedSettings } from "./shared-settings.js";

export interface SharedSettingSpec<T> {
  /** The setting's name (`checkSettingName`), e.g. "voicewake". */
  name: string;
  /** The value until one is written (e.g. from configuration). */
  defaults: T;
  /**
   * Checks a stored value and returns it typed; throws when it is not one.
   * A bad stored value is logged and ignored: the defaults (at open) or the
   * current value (on a change) stay, never a crash.
   */
  parse(value: unknown): T;
  logger?: TalkLogger;
}

/**
 * One typed setting over `SharedSettings`: the current value is held here, so
 * `value` is synchronous (bots read it on every caption), and it follows
 * every worker's writes. Listeners hear each applied change once.
 */
export class SharedSetting<T> {
  readonly name: string;
  readonly #settings: SharedSettings;
  readonly #spec: SharedSettingSpec<T>;
  readonly #logger: TalkLogger;
  readonly #listeners = new Set<(value: T) => void>();
  readonly #off: () => void;
  #value: T;
  #revision = 0;

  private constructor(settings: SharedSettings, spec: SharedSettingSpec<T>) {
    this.name = checkSettingName(spec.name);
    this.#settings = settings;
    this.#spec = spec;
    this.#logger = spec.logger ?? NOOP_LOGGER;
    this.#value = spec.defaults;
    this.#off = settings.onChange((name, record) => {
      if (name === this.name) this.#apply(record, "change");
    });
  }

  /** Reads the stored value (the defaults when there is none, or it is unreadable) and follows changes from then on. */
  static async open<T>(settings: SharedSettings, spec: SharedSettingSpec<T>): Promise<SharedSetting<T>> {
    const setting = new SharedSetting(settings, spec);
    try {
      const record = await settings.read(setting.name);
      if (record) setting.#apply(record, "stored");
    } catch (err) {
      // Not fatal: the defaults apply, and the next change (or reconnect) brings the stored value.
      setting.#logger.warn({ err, setting: setting.name }, "setting could not be read; using the defaults");
    }
    return setting;
  }

  get value(): T {
    return this.#value;
  }

  /** The revision the value came from (0: the defaults). */
  get revision(): number {
    return this.#revision;
  }

  /** Stores a value (already validated by the caller) for every worker; resolves with it once applied here. */
  async set(value: T): Promise<T> {
    const record = await this.#settings.write(this.name, value);
    // Normally a no-op: the write's own delivery applied it already.
    this.#apply(record, "change");
    return this.#spec.parse(record.value);
  }

  onChange(listener: (value: T) => void): () => void {
    this.#listeners.add(listener);
    return () => {
      this.#listeners.delete(listener);
    };
  }

  /** Stops following changes. Idempotent. */
  close(): void {
    this.#off();
    this.#listeners.clear();
  }

  #apply(record: SettingRecord, source: "stored" | "change"): void {
    if (record.revision <= this.#revision) return;
    let value: T;
    try {
      value = this.#spec.parse(record.value);
    } catch (err) {
      this.#logger.warn(
        { setting: this.name, revision: record.revision, err: (err as Error).message },
        source === "stored"
          ? "stored setting is invalid; using the defaults"
          : "changed setting is invalid; keeping the current value",
      );
      this.#revision = record.revision;
      return;
    }
    this.#revision = record.revision;
    this.#value = value;
    for (const listener of [...this.#listeners]) {
      try {
        listener(value);
      } catch (err) {
        this.#logger.warn({ err, setting: this.name }, "setting listener threw");
      }
    }
  }
}
