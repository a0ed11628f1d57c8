/**
 * Legacy realtime placement: realtime selectors that used to live beside the
 * speech config. Start-up refuses them (never reinterprets them); `talkgate
 * doctor` moves them into talk.realtime.
 *
 * | legacy key                        | new key                       |
 * |-----------------------------------|-------------------------------|
 * | talk.realtimeProvider             | talk.realtime.provider        |
 * | talk.realtimeModel / talk.model   | talk.realtime.model           |
 * | talk.realtimeVoice                | talk.realtime.voice           |
 * | talk.mode / transport / brain     | talk.realtime.mode / ...      |
 * | talk.realtimeProviders.<id>       | talk.realtime.providers.<id>  |
 * | realtime.<key> (top level)        | talk.realtime.<key>           |
 */

export interface LegacyMove {
  from: string;
  to: string;
}

const TALK_LEVEL_MOVES: ReadonlyArray<[string, string]> = [
  ["realtimeProvider", "provider"],
  ["realtimeModel", "model"],
  ["model", "model"],
  ["realtimeVoice", "voice"],
  ["mode", "mode"],
  ["transport", "transport"],
  ["brain", "brain"],
  ["realtimeProviders", "providers"],
];

const REALTIME_KEYS = new Set(["provider", "model", "voice", "mode", "transport", "brain", "providers"]);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Dotted paths of legacy realtime keys present in a raw config. */
export function findLegacyRealtimeKeys(raw: Record<string, unknown>): string[] {
  const found: string[] = [];
  const talk = raw.talk;
  if (isObject(talk)) {
    for (const [from] of TALK_LEVEL_MOVES) if (from in talk) found.push(`talk.${from}`);
  }
  if (isObject(raw.realtime)) found.push("realtime");
  return found;
}

/**
 * Returns a migrated copy of `raw` and the moves made. A key already present
 * at the destination is kept, and the legacy value is reported as dropped.
 */
export function migrateLegacyRealtime(raw: Record<string, unknown>): {
  config: Record<string, unknown>;
  moves: LegacyMove[];
  conflicts: LegacyMove[];
} {
  const config = structuredClone(raw);
  const moves: LegacyMove[] = [];
  const conflicts: LegacyMove[] = [];
  const talk: Record<string, unknown> = isObject(config.talk) ? config.talk : {};
  const realtime: Record<string, unknown> = isObject(talk.realtime) ? talk.realtime : {};

  const place = (fromPath: string, key: string, value: unknown): void => {
    const to = `talk.realtime.${key}`;
    if (key === "providers" && isObject(value) && isObject(realtime.providers)) {
      for (const [id, settings] of Object.entries(value)) {
        const sub = { from: `${fromPath}.${id}`, to: `${to}.${id}` };
        if (id in realtime.providers) conflicts.push(sub);
        else {
          realtime.providers[id] = settings;
          moves.push(sub);
        }
      }
      return;
    }
    if (key in realtime) conflicts.push({ from: fromPath, to });
    else {
      realtime[key] = value;
      moves.push({ from: fromPath, to });
    }
  };

  for (const [from, to] of TALK_LEVEL_MOVES) {
    if (!(from in talk)) continue;
    place(`talk.${from}`, to, talk[from]);
    delete talk[from];
  }
  if (isObject(config.realtime)) {
    for (const [key, value] of Object.entries(config.realtime)) {
      if (REALTIME_KEYS.has(key)) place(`realtime.${key}`, key, value);
      else conflicts.push({ from: `realtime.${key}`, to: "(no equivalent; dropped)" });
    }
    delete config.realtime;
  }
  if (moves.length > 0 || conflicts.length > 0) {
    talk.realtime = realtime;
    config.talk = talk;
  }
  return { config, moves, conflicts };
}
