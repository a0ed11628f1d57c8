import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { TalkError } from "../../core/errors.js";
import { NOOP_LOGGER, type TalkLogger } from "../../core/logger.js";

/** The wake triggers, as `voicewake.get` answers and `voicewake.changed` carries them (seed 004). */
export interface VoiceWakeState {
  triggers: string[];
  updatedAtMs: number;
}

export interface VoiceWakeStoreOptions {
  /** The JSON file the triggers persist in, e.g. `<dataDir>/settings/voicewake.json`. Required. */
  path: string;
  /** Triggers until one is set (config `meetings.wakeTriggers`). Required, at least one. */
  defaults: readonly string[];
  logger?: TalkLogger;
}

/** At most this many triggers, each 1..64 characters. */
export const MAX_TRIGGERS = 32;
const MAX_TRIGGER_CHARS = 64;

/** Trims, drops duplicates (case-insensitive) and checks the limits; invalid_params otherwise. */
export function normalizeTriggers(triggers: readonly unknown[]): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const [i, t] of triggers.entries()) {
    if (
      typeof t !== "string" ||
      t.trim() === "" ||
      t.trim().length > MAX_TRIGGER_CHARS ||
      !/[\p{L}\p{N}]/u.test(t)
    ) {
      throw new TalkError(
        "invalid_params",
        `triggers.${i} must be a word or phrase of 1..${MAX_TRIGGER_CHARS} characters.`,
        {
          details: { issues: [{ path: `triggers.${i}`, message: "not a word or phrase" }] },
        },
      );
    }
    const trigger = t.trim().replace(/\s+/g, " ");
    if (seen.has(trigger.toLowerCase())) continue;
    seen.add(trigger.toLowerCase());
    out.push(trigger);
  }
  if (out.length === 0 || out.length > MAX_TRIGGERS) {
    throw new TalkError("invalid_params", `triggers must hold 1..${MAX_TRIGGERS} phrases.`, {
      details: { issues: [{ path: "triggers", message: `1..${MAX_TRIGGERS} phrases` }] },
    });
  }
  return out;
}

/**
 * The wake triggers of this server: configured defaults until `set()`, then
 * the persisted list (written atomically, read back at start-up). Listeners
 * hear every change (the `voicewake.changed` broadcast, running bots).
 */
export class VoiceWakeStore {
  readonly #path: string;
  readonly #logger: TalkLogger;
  readonly #listeners = new Set<(state: VoiceWakeState) => void>();
  #state: VoiceWakeState;

  constructor(options: VoiceWakeStoreOptions) {
    if (!options.path) throw new TalkError("config_invalid", "VoiceWakeStore.path is required.");
    this.#path = options.path;
    this.#logger = options.logger ?? NOOP_LOGGER;
    let defaults: string[];
    try {
      defaults = normalizeTriggers(options.defaults);
    } catch (err) {
      throw new TalkError("config_invalid", `meetings.wakeTriggers: ${(err as Error).message}`);
    }
    this.#state = this.#load() ?? { triggers: defaults, updatedAtMs: 0 };
  }

  get(): VoiceWakeState {
    return { triggers: [...this.#state.triggers], updatedAtMs: this.#state.updatedAtMs };
  }

  /** Validates, persists, then tells every listener. Throws invalid_params for a bad list. */
  set(triggers: readonly unknown[]): VoiceWakeState {
    const next: VoiceWakeState = { triggers: normalizeTriggers(triggers), updatedAtMs: Date.now() };
    mkdirSync(dirname(this.#path), { recursive: true });
    const tmp = `${this.#path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(next) + "\n", { mode: 0o600 });
    renameSync(tmp, this.#path);
    this.#state = next;
    const snapshot = this.get();
    for (const listener of this.#listeners) {
      try {
        listener(snapshot);
      } catch (err) {
        this.#logger.warn({ err }, "voicewake listener failed");
      }
    }
    return snapshot;
  }

  onChange(listener: (state: VoiceWakeState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #load(): VoiceWakeState | undefined {
    let text: string;
    try {
      text = readFileSync(this.#path, "utf8");
    } catch {
      return undefined;
    }
    try {
      const data = JSON.parse(text) as { triggers?: unknown; updatedAtMs?: unknown };
      if (!Array.isArray(data.triggers)) throw new Error("no triggers list");
      return {
        triggers: normalizeTriggers(data.triggers),
        updatedAtMs: typeof data.updatedAtMs === "number" ? data.updatedAtMs : 0,
      };
    } catch (err) {
      // A damaged file must not stop the server: the configured triggers apply until the next set.
      this.#logger.warn(
        { err, path: this.#path },
        "voicewake file unreadable; using the configured triggers",
      );
      return undefined;
    }
  }
}
