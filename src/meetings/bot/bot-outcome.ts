import { TalkError } from "../../core/index.js";
import type { EndedCode, FatalCode } from "../bot-status.js";

/** How a run ends: the terminal state and why. */
export type Outcome =
  | { state: "ended"; subCode: EndedCode; message?: string }
  | { state: "fatal"; subCode: FatalCode; message?: string };

/** Thrown inside a bot's run to end it with its outcome. */
export class BotEnd extends Error {
  constructor(readonly outcome: Outcome) {
    super(outcome.message ?? outcome.subCode);
  }
}

export const ended = (subCode: EndedCode, message?: string): BotEnd =>
  new BotEnd({ state: "ended", subCode, ...(message ? { message } : {}) });
export const fatal = (subCode: FatalCode, message?: string): BotEnd =>
  new BotEnd({ state: "fatal", subCode, ...(message ? { message } : {}) });

/** The promise, or a `timeout` TalkError after `ms`. */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new TalkError("timeout")), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
