/**
 * How a call asks its carrier to act on it (transfer, DTMF): one request id
 * for every attempt of one action (carriers that drop repeats use it: Telnyx
 * `command_id`), retries with backoff when the carrier was unreachable or
 * answered 5xx and the action may be repeated, and on a final failure the
 * caller hears the apology at once, never silence, while the error goes back
 * to the model as the tool's error, which it can speak about.
 */
import { randomUUID } from "node:crypto";
import { interruptibleSleep, toTalkError, type TalkLogger } from "../core/index.js";

/** Waits before the 2nd and 3rd attempts, ms (doubling backoff). */
export const RETRY_BACKOFF_MS: readonly number[] = [250, 1000];

export interface CarrierActionContext {
  readonly callSid: string;
  readonly logger: TalkLogger;
  /** The apology to the caller, played after what is already queued. */
  apologize(): Promise<void>;
}

export interface CarrierAction {
  /** For the log: `transfer`, `send_dtmf`. */
  readonly name: string;
  /** The action may be repeated (a retry cannot do it twice): outages are retried. */
  readonly idempotent: boolean;
  readonly signal: AbortSignal;
  /** One attempt; the request id is the same for every attempt. */
  run(requestId: string): Promise<void>;
}

/**
 * Runs `action`. provider_unavailable (unreachable, timed out, 5xx) is tried
 * again after 250 ms and 1 s when the action is idempotent; a refusal
 * (provider_error) or any other error is not. A failure that is not a
 * cancellation is apologised for, then rethrown (the tool's error).
 */
export async function runCarrierAction(ctx: CarrierActionContext, action: CarrierAction): Promise<void> {
  const requestId = randomUUID();
  const waits = action.idempotent ? RETRY_BACKOFF_MS : [];
  for (let attempt = 0; ; attempt++) {
    try {
      await action.run(requestId);
      return;
    } catch (err) {
      const error = toTalkError(err);
      const wait = waits[attempt];
      if (action.signal.aborted || error.code === "cancelled") throw err;
      if (wait !== undefined && error.code === "provider_unavailable") {
        ctx.logger.warn(
          { callSid: ctx.callSid, action: action.name, attempt: attempt + 1, err: error.message },
          "call: carrier unavailable, retrying",
        );
        await interruptibleSleep(wait, action.signal);
        continue;
      }
      ctx.logger.warn(
        { callSid: ctx.callSid, action: action.name, code: error.code, err: error.message },
        "call: the carrier did not do it",
      );
      await ctx.apologize().catch(() => undefined);
      throw err;
    }
  }
}
