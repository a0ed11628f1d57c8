import { SharedSetting } from "../../cluster/index.js";
import type { SharedSettings } from "../../cluster/index.js";
import { TalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";

/** The wake triggers, as `voicewake.get` answers and `voicewake.changed` carries them (seed 004). */
export interface VoiceWakeState {
  triggers: string[];
  updatedAtMs: number;
}

export interface VoiceWakeStoreOptions {
  /** Where the triggers are stored and changes heard: the coordinator's shared settings. Required. */
  settings: SharedSettings;
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

/** The setting's name: `<dataDir>/settings/voicewake.json` without Redis, `<prefix>setting:voicewake` with. */
export const VOICEWAKE_SETTING = "voicewake";

/** A stored value as voicewake state; throws when it is not one (the caller logs it and keeps the defaults). */
export function parseVoiceWakeState(value: unknown): VoiceWakeState {
  const data = value as { triggers?: unknown; updatedAtMs?: unknown } | null;
  if (typeof data !== "object" || data === null || !Array.isArray(data.triggers))
    throw new Error("no triggers list");
  return {
    triggers: normalizeTriggers(data.triggers),
    updatedAtMs: typeof data.updatedAtMs === "number" ? data.updatedAtMs : 0,
  };
}

/**
 * The wake triggers: configured defaults until `set()`, then the stored list.
 * Stored as the cluster's shared setting `voicewake` (src/cluster/shared-settings.ts):
 * without Redis a JSON file (`<dataDir>/settings/voicewake.json`, written
 * atomically, read back at start-up); with Redis in Redis, so a set on any
 * worker reaches every worker. Listeners (the `voicewake.changed` broadcast,
 * running bots through `get()`) hear each change once on every worker. A
 * damaged stored value is logged and the configured triggers apply.
 */
export class VoiceWakeStore {
  readonly #setting: SharedSetting<VoiceWakeState>;

  private constructor(setting: SharedSetting<VoiceWakeState>) {
    this.#setting = setting;
  }

  /** Reads the stored triggers (or the defaults) and follows changes from every worker. */
  static async open(options: VoiceWakeStoreOptions): Promise<VoiceWakeStore> {
    if (!options.settings) throw new TalkError("config_invalid", "VoiceWakeStore.settings is required.");
    let defaults: string[];
    try {
      defaults = normalizeTriggers(options.defaults);
    } catch (err) {
      throw new TalkError("config_invalid", `meetings.wakeTriggers: ${(err as Error).message}`);
    }
    const setting = await SharedSetting.open(options.settings, {
      name: VOICEWAKE_SETTING,
      defaults: { triggers: defaults, updatedAtMs: 0 },
      parse: parseVoiceWakeState,
      ...(options.logger ? { logger: options.logger } : {}),
    });
    return new VoiceWakeStore(setting);
  }

  get(): VoiceWakeState {
    const state = this.#setting.value;
    return { triggers: [...state.triggers], updatedAtMs: state.updatedAtMs };
  }

  /**
   * Validates, stores for every worker, and resolves once this worker applied
   * it (its listeners have heard it). Rejects invalid_params for a bad list,
   * owner_unreachable while Redis is unreachable (nothing changed then).
   */
  async set(triggers: readonly unknown[]): Promise<VoiceWakeState> {
    const next: VoiceWakeState = { triggers: normalizeTriggers(triggers), updatedAtMs: Date.now() };
    const stored = await this.#setting.set(next);
    return { triggers: [...stored.triggers], updatedAtMs: stored.updatedAtMs };
  }

  /** Called once per change on this worker, whichever worker set it. A throwing listener is logged and skipped. */
  onChange(listener: (state: VoiceWakeState) => void): () => void {
    return this.#setting.onChange((state) =>
      listener({ triggers: [...state.triggers], updatedAtMs: state.updatedAtMs }),
    );
  }

  /** Stops following changes. Idempotent. */
  close(): void {
    this.#setting.close();
  }
}
