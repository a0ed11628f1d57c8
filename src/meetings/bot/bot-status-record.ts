import type { TalkLogger, TalkSession } from "../../core/index.js";
import {
  isTerminal,
  type BotMode,
  type BotState,
  type BotStatus,
  type BotSubCode,
  type ScreenVisit,
} from "../bot-status.js";
import type { WebhookNotifier } from "./webhook-notifier.js";

/** Screens kept in a bot's status (the newest). */
const MAX_SCREENS = 50;

/** What a bot's status record is given: its first fields and where a change is told. */
export interface BotStatusContext {
  id: string;
  meetingUrl: string;
  platform: string;
  botName: string;
  mode: BotMode;
  joinAt?: string | undefined;
  logger: TalkLogger;
  notifier: WebhookNotifier | undefined;
  /** The session a change also goes out on (once the bot has one). */
  session(): TalkSession | undefined;
}

/**
 * A bot's status and who hears of its changes: the state machine's history
 * (nothing moves after a terminal state), the bot's session, the change
 * listeners and the webhook.
 */
export class BotStatusRecord {
  /** The live record: the bot writes its timings, session ids and participants here. */
  readonly value: BotStatus;
  readonly #ctx: BotStatusContext;
  readonly #listeners = new Set<(status: BotStatus) => void>();

  constructor(ctx: BotStatusContext) {
    this.#ctx = ctx;
    const now = new Date().toISOString();
    this.value = {
      id: ctx.id,
      meetingUrl: ctx.meetingUrl,
      platform: ctx.platform,
      botName: ctx.botName,
      mode: ctx.mode,
      state: "scheduled",
      participants: [],
      history: [{ state: "scheduled", at: now }],
      timings: { requestedAt: now, ...(ctx.joinAt ? { joinAt: ctx.joinAt } : {}) },
    };
  }

  /** A copy of the status. */
  snapshot(): BotStatus {
    return structuredClone(this.value);
  }

  /** Called on every state change. A throwing listener is ignored. */
  onChange(listener: (status: BotStatus) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The participants now in the call: the first report moves the bot in_call; a change is told. */
  setParticipants(participants: string[]): void {
    const changed = participants.join("\n") !== this.value.participants.join("\n");
    this.value.participants = [...participants];
    if (this.value.state !== "in_call") this.transition("in_call");
    else if (changed) this.#emit();
  }

  /** A screen the bot passed (the join state machine); the newest MAX_SCREENS are kept. */
  noteScreen(visit: ScreenVisit): void {
    const screens = (this.value.screens ??= []);
    screens.push(visit);
    if (screens.length > MAX_SCREENS) screens.splice(0, screens.length - MAX_SCREENS);
  }

  transition(state: BotState, subCode?: BotSubCode, message?: string): void {
    const status = this.value;
    if (isTerminal(status.state)) return;
    status.state = state;
    if (subCode !== undefined) status.subCode = subCode;
    if (message !== undefined) status.message = message;
    status.history.push({
      state,
      ...(subCode ? { subCode } : {}),
      ...(message ? { message } : {}),
      at: new Date().toISOString(),
    });
    this.#ctx.logger.info({ botId: status.id, state, subCode }, "meeting bot state");
    this.#emit();
    const notifier = this.#ctx.notifier;
    if (notifier?.wants("meeting.bot.state")) {
      const at = new Date().toISOString();
      // The id names the change (the bot and its place in the history): the same on every retry.
      void notifier.notify(
        { type: "meeting.bot.state", timestamp: at, botId: status.id, state, subCode, message, at },
        `msg_${status.id}_state_${status.history.length - 1}`,
      );
    }
  }

  #emit(): void {
    const s = this.value;
    this.#ctx.session()?.emit({
      type: "session.updated",
      payload: {
        botId: s.id,
        state: s.state,
        subCode: s.subCode,
        participants: s.participants,
        platform: s.platform,
      },
    });
    for (const listener of this.#listeners) {
      try {
        listener(this.snapshot());
      } catch {
        // A listener cannot break the bot.
      }
    }
  }
}
