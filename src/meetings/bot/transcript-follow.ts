import type { TalkLogger } from "../../core/index.js";
import { isTerminal, type BotStatus } from "../bot-status.js";
import { interruptibleSleep } from "../../core/index.js";
import type { MeetingBot } from "./meeting-bot.js";
import { readTranscript, type TranscriptLine } from "./transcript-log.js";

/**
 * What a follower of a bot hears, in order: every line with an index above
 * the one it asked to start after (the index is the line's position in the
 * bot's transcript, so a follower that reconnects resumes without a gap or a
 * repeat), each status change, and once the bot ended and its last line was
 * delivered, `end`. Listener errors are the caller's: they stop nothing.
 */
export interface FollowListener {
  line(index: number, line: TranscriptLine): void;
  status(status: BotStatus): void;
  end(status: BotStatus): void;
}

/** Only what shows on a status change (the history and timings grow with it). */
function statusKey(s: BotStatus): string {
  return JSON.stringify([s.state, s.subCode, s.participants]);
}

function safely(logger: TalkLogger, fn: () => void): void {
  try {
    fn();
  } catch (err) {
    logger.debug({ err }, "meeting: a transcript follower failed");
  }
}

/**
 * Follows a bot running in this process: its transcript file, then its
 * lines as they are written (all delivered from within this call, then live). The file is read and the listener subscribed in
 * the same tick, and a line is appended to the file and announced in one tick
 * too, so no line is missed or repeated between the two.
 */
export function followLocal(
  bot: MeetingBot,
  transcriptPath: string,
  afterIndex: number,
  listener: FollowListener,
  signal: AbortSignal,
  logger: TalkLogger,
): void {
  if (signal.aborted) return;
  const existing = readTranscript(transcriptPath);
  let next = existing.length;
  let done = false;
  const offs: (() => void)[] = [];
  const stop = (): void => {
    done = true;
    for (const off of offs.splice(0)) off();
    signal.removeEventListener("abort", stop);
  };
  const end = (status: BotStatus): void => {
    if (done) return;
    stop();
    safely(logger, () => listener.end(status));
  };
  offs.push(
    bot.onLine((line) => {
      const index = next++;
      if (!done && index > afterIndex) safely(logger, () => listener.line(index, line));
    }),
  );
  offs.push(
    bot.onChange((status) => {
      if (done) return;
      safely(logger, () => listener.status(status));
      if (isTerminal(status.state)) end(status);
    }),
  );
  signal.addEventListener("abort", stop, { once: true });
  existing.forEach((line, index) => {
    if (index > afterIndex && !done) safely(logger, () => listener.line(index, line));
  });
  if (isTerminal(bot.status.state)) end(bot.status);
}

/** What a remote follow reads: a bot's job record from any worker (AppJobs.inspect). */
export type InspectBotJob = (
  id: string,
  logsFrom: number,
) => Promise<{ status: BotStatus | undefined; logs: string[] } | undefined>;

/**
 * Follows a bot running on another worker through its job in Redis: every
 * `pollMs`, the log lines from the next index on (the job log holds one JSON
 * transcript line each, in the owner's order) and the recorded status. The
 * final status is recorded after the bot's last line, so the poll that sees
 * it also reads every line. A job that disappears (expired) ends the follow
 * with the last status seen; a Redis error waits for the next poll.
 */
export async function followRemote(
  inspect: InspectBotJob,
  first: BotStatus,
  afterIndex: number,
  listener: FollowListener,
  signal: AbortSignal,
  options: { pollMs: number; logger: TalkLogger },
): Promise<void> {
  const { logger } = options;
  let next = Math.max(0, afterIndex + 1);
  let last = first;
  let lastKey = "";
  while (!signal.aborted) {
    let record: Awaited<ReturnType<InspectBotJob>>;
    try {
      record = await inspect(first.id, next);
    } catch (err) {
      logger.debug({ err, botId: first.id }, "meeting: follow poll failed");
      await interruptibleSleep(options.pollMs, signal);
      continue;
    }
    if (signal.aborted) return;
    if (!record) {
      safely(logger, () => listener.end(last));
      return;
    }
    for (const raw of record.logs) {
      const index = next++;
      let line: TranscriptLine;
      try {
        line = JSON.parse(raw) as TranscriptLine;
      } catch {
        continue;
      }
      safely(logger, () => listener.line(index, line));
    }
    const status = record.status;
    if (status && statusKey(status) !== lastKey) {
      lastKey = statusKey(status);
      last = status;
      safely(logger, () => listener.status(status));
    }
    if (status && isTerminal(status.state)) {
      safely(logger, () => listener.end(status));
      return;
    }
    await interruptibleSleep(options.pollMs, signal);
  }
}
