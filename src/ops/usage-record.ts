import type { TalkEvent } from "../core/index.js";

/** What one provider used in one session. */
export interface ProviderUsage {
  inputTokens: number;
  outputTokens: number;
  sttSeconds: number;
  ttsCharacters: number;
}

/** One finished session in the usage ledger (one JSON line). */
export interface UsageRecord {
  sessionId: string;
  workerId: string;
  surface: string;
  carrier?: string;
  platform?: string;
  mode: string;
  /** ISO 8601. */
  startedAt: string;
  endedAt: string;
  durationSeconds: number;
  /** Caller / meeting audio sent to the providers (STT streams, realtime input). */
  audioInSeconds: number;
  /** Assistant audio produced (output.audio.delta durations). */
  audioOutSeconds: number;
  sttSeconds: number;
  ttsCharacters: number;
  inputTokens: number;
  outputTokens: number;
  /** By provider id. */
  providers: Record<string, ProviderUsage>;
  turns: number;
  toolCalls: number;
  bargeIns: number;
  /**
   * Answers held on a caller's sound and resumed, by why (output.audio.resumed): `noWords` are the
   * self-interruptions caught (echo or noise that the words then did not confirm), `backchannel` the
   * caller's "mm-hm"s. Absent in records written before it was counted.
   */
  resumed?: { noWords: number; backchannel: number };
  /** The phone line's echo as the leg's echo guard saw it (legs with echo cancellation), from its usage.metrics. */
  echo?: LineEcho;
  /**
   * Answers the agent was asked for ahead of the end of turn (talk.input.endOfTurn.prepareAnswer): `used` by
   * the turn they were for, `discarded` because the caller's words went on or changed. A discarded consult
   * was closed early and reports no tokens, so its input tokens are not in `inputTokens`. Absent without any.
   */
  preparedAnswers?: { prepared: number; used: number; discarded: number };
  closeReason: string;
  /** From `ops.usage.prices`; 0 where nothing has a price. */
  cost: { total: number; currency: string };
}

/** A call's echo as its leg's guard measured it (media/echo-guard.ts EchoStats): what tells a bad line. */
export interface LineEcho {
  /** The line's echo return loss, dB: how much quieter than the answer its echo came back; absent until measured. */
  echoReturnLossDb?: number;
  /** 20 ms frames of caller audio while the answer's echo could be on the line. */
  frames: number;
  /** ...attenuated as the answer's residual echo. */
  suppressedFrames: number;
  /** ...under the echo's level but let through as the caller talking over the answer. */
  doubleTalkFrames: number;
  /** The echo's delay as estimated, ms. */
  delayMs?: number;
}

export interface PriceTable {
  prices: Record<
    string,
    {
      inputTokensPer1k?: number | undefined;
      outputTokensPer1k?: number | undefined;
      sttPerMinute?: number | undefined;
      ttsPer1kChars?: number | undefined;
      perMinute?: number | undefined;
    }
  >;
  currency: string;
}

const round = (n: number, places = 3): number => Math.round(n * 10 ** places) / 10 ** places;

/**
 * One session's usage while it runs: fed by its events (`usage.metrics`:
 * tokens, STT seconds, TTS characters, by the provider on the envelope;
 * output audio, tools, barge-ins, turns) and by its realtime provider's
 * connection (its id, its input audio); finished into a `UsageRecord` when it
 * closes. What a client sees as usage is what is recorded: one source.
 */
export class SessionUsage {
  readonly #start: TalkEvent & { type: "session.created" };
  readonly #workerId: string;
  readonly #providers = new Map<string, ProviderUsage>();
  readonly #bargedTurns = new Set<string>();
  /** The realtime provider of the session: usage.metrics without a provider on the envelope are its. */
  #realtimeProvider: string | undefined;
  #audioIn = 0;
  #audioOutMs = 0;
  #turns = 0;
  #toolCalls = 0;
  #bargeIns = 0;
  readonly #resumed = { noWords: 0, backchannel: 0 };
  #echo: LineEcho | undefined;
  #prepared: { prepared: number; used: number; discarded: number } | undefined;

  constructor(created: TalkEvent & { type: "session.created" }, workerId: string) {
    this.#start = created;
    this.#workerId = workerId;
  }

  observe(event: TalkEvent): void {
    switch (event.type) {
      case "usage.metrics": {
        const echo = lineEcho(event.payload["echo"]);
        if (echo) this.#echo = echo;
        const prepared = preparedAnswers(event.payload["preparedAnswers"]);
        if (prepared) this.#prepared = prepared;
        const { inputTokens, outputTokens, sttSeconds, ttsCharacters } = event.payload;
        // A report with nothing to charge (the leg's line report): no provider entry.
        if ([inputTokens, outputTokens, sttSeconds, ttsCharacters].every((n) => count(n) === 0)) return;
        const named = event.provider ?? event.payload["provider"];
        const p = this.#provider(typeof named === "string" ? named : (this.#realtimeProvider ?? "unknown"));
        p.inputTokens += count(inputTokens);
        p.outputTokens += count(outputTokens);
        p.sttSeconds += count(sttSeconds);
        p.ttsCharacters += count(ttsCharacters);
        // What the recognizer heard is audio sent to a provider.
        this.#audioIn += count(sttSeconds);
        return;
      }
      case "output.audio.delta":
        this.#audioOutMs += count(event.payload.durationMs);
        return;
      case "turn.started":
        this.#turns++;
        return;
      case "tool.call":
        this.#toolCalls++;
        return;
      case "output.audio.resumed":
        if (event.payload.reason === "no_words") this.#resumed.noWords++;
        else if (event.payload.reason === "backchannel") this.#resumed.backchannel++;
        return;
      case "output.audio.cancelled":
      case "turn.cancelled": {
        if (event.payload.reason !== "barge_in") return;
        const key = event.turnId ?? `${event.type}:${event.seq}`;
        if (this.#bargedTurns.has(key)) return;
        this.#bargedTurns.add(key);
        this.#bargeIns++;
        return;
      }
      default:
        return;
    }
  }

  realtimeConnected(providerId: string): void {
    this.#realtimeProvider = providerId;
  }

  inputAudio(seconds: number): void {
    this.#audioIn += seconds;
  }

  finish(closed: TalkEvent & { type: "session.closed" }, prices: PriceTable): UsageRecord {
    const meta = this.#start.payload.metadata;
    const started = Date.parse(this.#start.timestamp);
    const ended = Date.parse(closed.timestamp);
    const durationSeconds = round(Math.max(0, ended - started) / 1000);
    const providers: Record<string, ProviderUsage> = {};
    let sttSeconds = 0;
    let ttsCharacters = 0;
    let inputTokens = 0;
    let outputTokens = 0;
    let cost = 0;
    for (const [id, u] of this.#providers) {
      providers[id] = { ...u, sttSeconds: round(u.sttSeconds) };
      sttSeconds += u.sttSeconds;
      ttsCharacters += u.ttsCharacters;
      inputTokens += u.inputTokens;
      outputTokens += u.outputTokens;
      const price = prices.prices[id];
      if (price) {
        cost += (u.inputTokens / 1000) * (price.inputTokensPer1k ?? 0);
        cost += (u.outputTokens / 1000) * (price.outputTokensPer1k ?? 0);
        cost += (u.sttSeconds / 60) * (price.sttPerMinute ?? 0);
        cost += (u.ttsCharacters / 1000) * (price.ttsPer1kChars ?? 0);
      }
    }
    const carrier = meta["carrier"];
    const perMinute = carrier !== undefined ? prices.prices[carrier]?.perMinute : undefined;
    if (perMinute) cost += (durationSeconds / 60) * perMinute;
    return {
      sessionId: this.#start.sessionId,
      workerId: this.#workerId,
      surface: meta["surface"] ?? "unknown",
      ...(carrier !== undefined ? { carrier } : {}),
      ...(meta["platform"] !== undefined ? { platform: meta["platform"] } : {}),
      mode: this.#start.mode,
      startedAt: new Date(started).toISOString(),
      endedAt: new Date(ended).toISOString(),
      durationSeconds,
      audioInSeconds: round(this.#audioIn),
      audioOutSeconds: round(this.#audioOutMs / 1000),
      sttSeconds: round(sttSeconds),
      ttsCharacters,
      inputTokens,
      outputTokens,
      providers,
      turns: this.#turns,
      toolCalls: this.#toolCalls,
      bargeIns: this.#bargeIns,
      resumed: { ...this.#resumed },
      ...(this.#echo ? { echo: this.#echo } : {}),
      ...(this.#prepared ? { preparedAnswers: this.#prepared } : {}),
      closeReason: String(closed.payload.reason),
      cost: { total: round(cost, 6), currency: prices.currency },
    };
  }

  #provider(id: string): ProviderUsage {
    let p = this.#providers.get(id);
    if (!p)
      this.#providers.set(id, (p = { inputTokens: 0, outputTokens: 0, sttSeconds: 0, ttsCharacters: 0 }));
    return p;
  }
}

/** The leg's EchoStats from a usage.metrics payload's `echo`; undefined when absent or malformed. */
function lineEcho(value: unknown): LineEcho | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const whole = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n >= 0;
  if (!whole(v["frames"]) || !whole(v["suppressedFrames"]) || !whole(v["doubleTalkFrames"])) return undefined;
  const finite = (n: unknown): n is number => typeof n === "number" && Number.isFinite(n);
  return {
    ...(finite(v["echoReturnLossDb"]) ? { echoReturnLossDb: v["echoReturnLossDb"] } : {}),
    frames: v["frames"],
    suppressedFrames: v["suppressedFrames"],
    doubleTalkFrames: v["doubleTalkFrames"],
    ...(finite(v["delayMs"]) ? { delayMs: v["delayMs"] } : {}),
  };
}

/** A pipeline's prepared-answer counts from a usage.metrics payload; undefined when absent or malformed. */
function preparedAnswers(value: unknown): UsageRecord["preparedAnswers"] {
  if (typeof value !== "object" || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const whole = (n: unknown): n is number => typeof n === "number" && Number.isInteger(n) && n >= 0;
  if (!whole(v["prepared"]) || !whole(v["used"]) || !whole(v["discarded"])) return undefined;
  return { prepared: v["prepared"], used: v["used"], discarded: v["discarded"] };
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/** The ledger's CSV columns, in order (providers flattened away: their sums are the totals). */
export const USAGE_CSV_COLUMNS = [
  "sessionId",
  "workerId",
  "surface",
  "carrier",
  "platform",
  "mode",
  "startedAt",
  "endedAt",
  "durationSeconds",
  "audioInSeconds",
  "audioOutSeconds",
  "sttSeconds",
  "ttsCharacters",
  "inputTokens",
  "outputTokens",
  "turns",
  "toolCalls",
  "bargeIns",
  "resumedNoWords",
  "resumedBackchannels",
  "echoReturnLossDb",
  "suppressedEchoFrames",
  "doubleTalkFrames",
  "preparedAnswers",
  "preparedAnswersDiscarded",
  "closeReason",
  "cost",
  "currency",
] as const;

/** RFC 4180 CSV of ledger records, with a header line. */
export function usageCsv(records: readonly UsageRecord[]): string {
  const cell = (v: unknown): string => {
    const s = v === undefined ? "" : String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  const lines = [USAGE_CSV_COLUMNS.join(",")];
  for (const r of records) {
    const row: Record<string, unknown> = {
      ...r,
      cost: r.cost.total,
      currency: r.cost.currency,
      // Records written before these fields existed have none: empty cells.
      resumedNoWords: r.resumed?.noWords,
      resumedBackchannels: r.resumed?.backchannel,
      echoReturnLossDb: r.echo?.echoReturnLossDb,
      suppressedEchoFrames: r.echo?.suppressedFrames,
      doubleTalkFrames: r.echo?.doubleTalkFrames,
      preparedAnswers: r.preparedAnswers?.prepared,
      preparedAnswersDiscarded: r.preparedAnswers?.discarded,
    };
    lines.push(USAGE_CSV_COLUMNS.map((c) => cell(row[c])).join(","));
  }
  return `${lines.join("\r\n")}\r\n`;
}
