/**
 * How a realtime phone leg hears its caller, as configuration:
 *
 * - talk.input.echoCancellation.realtime: the leg decodes the caller's audio,
 *   runs the echo canceller (and the noise suppressor when configured) with
 *   the line's played audio as the reference, sends the cleaned PCM to the
 *   provider, and its own speech gate on that audio decides barge-in (the one
 *   BargeInPolicy); the provider's speech_started no longer cuts the answer.
 *   Off by default: it gives up u-law passthrough (decode, resample to the
 *   provider's PCM and back) and costs the canceller's time per frame
 *   (docs/performance.md).
 * - talk.input.turnEnd: who ends the caller's turn. "provider": its server
 *   VAD ends it and answers by itself (its own interruption stays off:
 *   `interrupt_response: false`). "talkgate": the provider's turn detection is
 *   off for the whole session and the leg's endpoint (TurnEndpoint, the
 *   end-of-turn rule) commits the caller's audio and asks for the answer.
 */
import { TalkError } from "../../core/index.js";

/** talk.input.turnEnd. */
export type TurnEnd = "provider" | "talkgate";

export const TURN_ENDS: readonly TurnEnd[] = Object.freeze(["provider", "talkgate"]);

/** Validates talk.input.turnEnd (config_invalid naming the key). Default "provider". */
export function resolveTurnEnd(value: unknown = "provider", key = "talk.input.turnEnd"): TurnEnd {
  if (typeof value === "string" && (TURN_ENDS as readonly string[]).includes(value)) return value as TurnEnd;
  throw new TalkError(
    "config_invalid",
    `${key} must be "provider" or "talkgate", got ${JSON.stringify(value)}.`,
  );
}

/** Validates talk.input.echoCancellation.realtime (config_invalid naming the key). Default false. */
export function resolveRealtimeEcho(
  value: unknown = false,
  key = "talk.input.echoCancellation.realtime",
): boolean {
  if (typeof value !== "boolean") throw new TalkError("config_invalid", `${key} must be true or false.`);
  return value;
}
