import type { BotSubCode, EndedCode, FatalCode } from "../bot-status.js";
import {
  UNKNOWN_SCREEN,
  type MeetingObservation,
  type MeetingPhase,
  type ScreenRule,
} from "../platforms/platform-driver.js";
import type { Outcome } from "./bot-outcome.js";

/** How an end phase ends the bot when its rule names no sub-code. */
const END_OF_PHASE: Partial<Record<MeetingPhase, Outcome>> = {
  ended: { state: "ended", subCode: "meeting_ended" },
  removed: { state: "ended", subCode: "kicked" },
  denied: { state: "ended", subCode: "admission_denied" },
  not_found: { state: "fatal", subCode: "meeting_not_found" },
  sign_in_required: { state: "fatal", subCode: "sign_in_required" },
  blocked: { state: "fatal", subCode: "blocked_by_platform" },
};

const FATAL: ReadonlySet<BotSubCode> = new Set<FatalCode>([
  "meeting_not_found",
  "blocked_by_platform",
  "sign_in_required",
  "browser_crashed",
  "capture_failed",
]);

function outcomeOf(subCode: BotSubCode, message: string): Outcome {
  return FATAL.has(subCode)
    ? { state: "fatal", subCode: subCode as FatalCode, message }
    : { state: "ended", subCode: subCode as EndedCode, message };
}

export interface ScreenMachineLimits {
  /** An unknown screen during the join this long is recorded and the page reloaded, ms. */
  unknownScreenMs: number;
  /** Reloads for unknown screens per bot; then fatal / blocked_by_platform. */
  unknownScreenRetries: number;
}

/** What the bot does after one reading of the page. */
export interface ScreenStep {
  screen: string;
  reason: string;
  /** The lifecycle the screen means ("joining" for an unknown screen). */
  phase: MeetingPhase;
  /** The screen differs from the previous reading's. */
  changed: boolean;
  /** Run the screen's act now. */
  act?: ScreenRule["act"];
  /** Load the join URL again now (a retried screen, or an unknown one). */
  reload?: { why: string };
  /** Save a screenshot with the bot's record (an unknown screen, once per appearance). */
  record?: boolean;
  /** The bot ends. */
  end?: Outcome;
}

/**
 * The join state machine every platform runs (platform-driver.ts says what
 * drivers give it): a reading of the page in, what to do out. Pure: the bot
 * (meeting-bot.ts) carries the steps out, and tests drive it with readings.
 */
export class ScreenMachine {
  readonly #screens: Readonly<Record<string, ScreenRule>>;
  readonly #limits: ScreenMachineLimits;
  #screen: string | undefined;
  #since = 0;
  #lastActAt: number | undefined;
  #recorded = false;
  readonly #retries = new Map<string, number>();
  #unknownReloads = 0;

  constructor(screens: Readonly<Record<string, ScreenRule>>, limits: ScreenMachineLimits) {
    this.#screens = screens;
    this.#limits = limits;
  }

  /** Times each retried screen was reloaded so far (the probe's report, tests). */
  get retries(): ReadonlyMap<string, number> {
    return this.#retries;
  }

  /** The page is being loaded again: the next reading starts afresh. */
  reloaded(): void {
    this.#screen = undefined;
  }

  step(seen: Pick<MeetingObservation, "screen" | "reason">, now: number, joined: boolean): ScreenStep {
    const changed = seen.screen !== this.#screen;
    if (changed) {
      this.#screen = seen.screen;
      this.#since = now;
      this.#lastActAt = undefined;
      this.#recorded = false;
    }
    const base = { screen: seen.screen, reason: seen.reason, changed };
    const rule = seen.screen === UNKNOWN_SCREEN ? undefined : this.#screens[seen.screen];
    if (!rule) return this.#unknown(base, now, joined);

    const shownFor = now - this.#since;
    if (rule.retry) {
      if (shownFor < rule.retry.waitMs) return { ...base, phase: rule.phase, ...this.#act(rule, now) };
      const done = this.#retries.get(seen.screen) ?? 0;
      if (done < rule.retry.max) {
        this.#retries.set(seen.screen, done + 1);
        return {
          ...base,
          phase: rule.phase,
          reload: { why: `${seen.screen} (${done + 1} of ${rule.retry.max}): ${seen.reason}` },
        };
      }
      const subCode = rule.subCode ?? END_OF_PHASE[rule.phase]?.subCode ?? "blocked_by_platform";
      return {
        ...base,
        phase: rule.phase,
        end: outcomeOf(subCode, `${seen.reason} (still after ${rule.retry.max} retries)`),
      };
    }
    const end = rule.subCode && END_OF_PHASE[rule.phase] ? rule.subCode : END_OF_PHASE[rule.phase]?.subCode;
    if (end) return { ...base, phase: rule.phase, end: outcomeOf(end, seen.reason) };
    return { ...base, phase: rule.phase, ...this.#act(rule, now) };
  }

  #act(rule: ScreenRule, now: number): Pick<ScreenStep, "act"> {
    if (!rule.act) return {};
    if (this.#lastActAt !== undefined && now - this.#lastActAt < (rule.repeatMs ?? 2000)) return {};
    this.#lastActAt = now;
    return { act: rule.act };
  }

  #unknown(base: Omit<ScreenStep, "phase">, now: number, joined: boolean): ScreenStep {
    const step: ScreenStep = { ...base, screen: UNKNOWN_SCREEN, phase: joined ? "in_call" : "joining" };
    if (now - this.#since < this.#limits.unknownScreenMs) return step;
    const record = !this.#recorded;
    this.#recorded = true;
    // In the call an unknown screen is recorded, never reloaded: a reload would leave the call.
    if (joined) return { ...step, record };
    if (this.#unknownReloads >= this.#limits.unknownScreenRetries)
      return {
        ...step,
        record,
        end: outcomeOf(
          "blocked_by_platform",
          `an unrecognised screen (${base.reason}) after ${this.#limits.unknownScreenRetries} reloads`,
        ),
      };
    this.#unknownReloads++;
    return { ...step, record, reload: { why: `unrecognised screen: ${base.reason}` } };
  }
}
