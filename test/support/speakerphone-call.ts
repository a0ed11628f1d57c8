/**
 * One speakerphone call on a telephony harness (the Twilio stand-in at 1x):
 * the answer plays and comes back into the caller's channel through an echo
 * path, with the caller's own speech mixed in when given. Resolves when the
 * answer ended, played out or cut (and `until` holds, when given). Shared by
 * the echo, realtime echo and turn-taking tests. Test-only.
 */
import type { TalkEvent } from "../../src/core/talk-events.js";
import { EchoPath, speakerphone } from "./echo-path.js";
import { sessionOfCall, type TelephonyHarness } from "./telephony-harness.js";
import type { TwilioStreamClient } from "./twilio-stream-client.js";

/** The caller's speech: u-law at 8 kHz, from `atMs` into the stream, raised by `gainDb`. */
export interface SpeakerphoneCaller {
  ulaw: Uint8Array;
  atMs: number;
  gainDb?: number;
}

export interface SpeakerphoneCallOptions {
  caller?: SpeakerphoneCaller | undefined;
  /** Default: 120 ms, 6 dB echo return loss (a speakerphone). */
  echo?: EchoPath;
  /** Also wait for this after the answer ended. */
  until?: (sessionId: string) => boolean;
  /** How long the call may take, ms. Default 40 000. */
  timeoutMs?: number;
}

export interface SpeakerphoneOutcome {
  client: TwilioStreamClient;
  sessionId: string;
  /** The session's events (of one type when given). */
  of(type?: string): TalkEvent[];
}

/** Polls `check` every 20 ms until it holds; rejects after `ms`. */
export async function waitUntil(check: () => boolean, ms = 40_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function speakerphoneCall(
  h: TelephonyHarness,
  options: SpeakerphoneCallOptions = {},
): Promise<SpeakerphoneOutcome> {
  const client = await h.dial({ playback: "realtime" });
  const sessionId = sessionOfCall(h, client.callSid)!;
  const echo = options.echo ?? new EchoPath({ delayMs: 120, lossDb: 6 });
  const line = speakerphone(client, echo, options.caller);
  const of = (type?: string): TalkEvent[] => h.eventsOf(sessionId, type);
  const ms = options.timeoutMs ?? 40_000;
  try {
    await waitUntil(() => of("output.audio.done").length + of("output.audio.cancelled").length > 0, ms);
    const { until } = options;
    if (until) await waitUntil(() => until(sessionId), ms);
  } finally {
    await line.stop();
    await client.stop();
  }
  return { client, sessionId, of };
}
