/**
 * A meeting bot's lifecycle, with the state and sub-code vocabulary of the
 * hosted meeting-bot services: a state, and for the two terminal states a
 * sub-code that says why.
 */
export const BOT_STATES = [
  "scheduled",
  "joining",
  "in_waiting_room",
  "in_call",
  "leaving",
  "ended",
  "fatal",
] as const;
export type BotState = (typeof BOT_STATES)[number];

/** Why a bot ended normally. */
export const ENDED_CODES = [
  "left_alone",
  "meeting_ended",
  "kicked",
  "admission_denied",
  "waiting_room_timeout",
  "host_not_started",
  "silence_timeout",
  "requested",
  "max_duration",
  "session_closed",
] as const;
export type EndedCode = (typeof ENDED_CODES)[number];

/** Why a bot failed. */
export const FATAL_CODES = [
  "meeting_not_found",
  "blocked_by_platform",
  "sign_in_required",
  "browser_crashed",
  "capture_failed",
] as const;
export type FatalCode = (typeof FATAL_CODES)[number];

export type BotSubCode = EndedCode | FatalCode;

export type BotMode = "transcribe" | "agent";

export interface BotTransition {
  state: BotState;
  subCode?: BotSubCode;
  /** Human-readable detail (never secrets). */
  message?: string;
  at: string;
}

/** A screen the bot's join state machine recognised (or not), in the bot's status. */
export interface ScreenVisit {
  at: string;
  /** The driver's screen id ("prejoin", "lobby", "cant_join"...), or "unknown". */
  screen: string;
  /** What it meant for the lifecycle (MeetingPhase). */
  phase: string;
  /** The fact that decided it. */
  reason: string;
  /** An unknown screen's screenshot (every screen's with `meetings.recordScreens: "all"`), saved with the bot's record (`<dataDir>/meetings/<botId>.screens/NNN-<screen>.png`). */
  screenshot?: string;
  /** Beside it, what the page showed (JSON: title, url, buttons, labels, headings, dialogs). */
  description?: string;
}

/** What GET /meetings/bots/:id answers. */
export interface BotStatus {
  id: string;
  meetingUrl: string;
  platform: string;
  botName: string;
  mode: BotMode;
  state: BotState;
  subCode?: BotSubCode;
  message?: string;
  /** The core session carrying the bot's captions and lifecycle events. */
  sessionId?: string;
  /** Agent mode: the core stt-tts session that answers (output.* events, barge-in). */
  assistantSessionId?: string;
  /** Other participants currently seen in the meeting. */
  participants: string[];
  /** Every state change, in order. */
  history: BotTransition[];
  /** The screens the bot passed, in order (the newest 50). */
  screens?: ScreenVisit[];
  timings: {
    requestedAt: string;
    joinAt?: string;
    joinedAt?: string;
    endedAt?: string;
  };
}

export function isTerminal(state: BotState): boolean {
  return state === "ended" || state === "fatal";
}
