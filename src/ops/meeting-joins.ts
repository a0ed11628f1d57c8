import { Counter, type Registry } from "prom-client";
import type { TalkEvent } from "../core/index.js";

/** One platform's join figures on this worker since it started. */
export interface MeetingJoinRow {
  platform: string;
  /** Bots that started joining (reached `joining`). */
  attempts: number;
  /** Of those, admitted to the call (reached `in_call`). */
  joined: number;
  /** Ends, by terminal state and sub-code, and whether the bot had been in the call. */
  outcomes: { state: string; subCode: string; joined: boolean; count: number }[];
}

/**
 * Join attempts and outcomes of meeting bots, per platform and sub-code, from
 * the bots' own `session.updated` events ({botId, state, subCode, platform}):
 * `talkgate_meeting_join_attempts_total{platform}`,
 * `talkgate_meeting_joined_total{platform}` and
 * `talkgate_meeting_bot_ends_total{platform,state,sub_code,joined}` in
 * /metrics, and the same table for the console (`admin.meetings.joins`), so an
 * operator sees the join success rate. Labels are bounded: platforms and the
 * sub-code catalogue, never bot ids.
 */
export class MeetingJoins {
  readonly #attempts: Counter<"platform">;
  readonly #joined: Counter<"platform">;
  readonly #ends: Counter<"platform" | "state" | "sub_code" | "joined">;
  /** Bots seen and not yet ended: their platform and whether they got in. */
  readonly #bots = new Map<string, { platform: string; joined: boolean }>();
  readonly #rows = new Map<string, MeetingJoinRow>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.#attempts = new Counter({
      name: "talkgate_meeting_join_attempts_total",
      help: "Meeting bots that started joining, by platform",
      labelNames: ["platform"],
      registers,
    });
    this.#joined = new Counter({
      name: "talkgate_meeting_joined_total",
      help: "Meeting bots admitted to the call, by platform",
      labelNames: ["platform"],
      registers,
    });
    this.#ends = new Counter({
      name: "talkgate_meeting_bot_ends_total",
      help: "Meeting bots that ended, by platform, terminal state, sub-code and whether they had been in the call",
      labelNames: ["platform", "state", "sub_code", "joined"],
      registers,
    });
  }

  observe(event: TalkEvent): void {
    if (event.type !== "session.updated") return;
    const p = event.payload as Record<string, unknown>;
    const botId = p["botId"];
    const state = p["state"];
    if (typeof botId !== "string" || typeof state !== "string") return;
    const platform = typeof p["platform"] === "string" ? p["platform"] : "unknown";
    let bot = this.#bots.get(botId);
    if (!bot && state !== "ended" && state !== "fatal") {
      bot = { platform, joined: false };
      this.#bots.set(botId, bot);
      this.#attempts.inc({ platform });
      this.#row(platform).attempts++;
    }
    if (!bot) return;
    if (state === "in_call" && !bot.joined) {
      bot.joined = true;
      this.#joined.inc({ platform });
      this.#row(platform).joined++;
    }
    if (state === "ended" || state === "fatal") {
      this.#bots.delete(botId);
      const subCode = typeof p["subCode"] === "string" ? p["subCode"] : "none";
      this.#ends.inc({ platform, state, sub_code: subCode, joined: String(bot.joined) });
      const outcomes = this.#row(platform).outcomes;
      const row = outcomes.find((o) => o.state === state && o.subCode === subCode && o.joined === bot.joined);
      if (row) row.count++;
      else outcomes.push({ state, subCode, joined: bot.joined, count: 1 });
    }
  }

  /** The table, per platform (a copy). */
  snapshot(): MeetingJoinRow[] {
    return [...this.#rows.values()].map((r) => ({ ...r, outcomes: r.outcomes.map((o) => ({ ...o })) }));
  }

  #row(platform: string): MeetingJoinRow {
    let row = this.#rows.get(platform);
    if (!row) {
      row = { platform, attempts: 0, joined: 0, outcomes: [] };
      this.#rows.set(platform, row);
    }
    return row;
  }
}
