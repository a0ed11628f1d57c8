import { TALK_ERROR_CODES, TalkError, type TalkErrorCode, toTalkError } from "../core/errors.js";
import {
  type CommandReply,
  SESSION_COMMAND_VERBS,
  type SessionCommand,
  type SessionCommandHandler,
} from "./coordinator.js";

const VERBS: ReadonlySet<string> = new Set(SESSION_COMMAND_VERBS);

/** Checks a command at the sender, so a bad verb never travels to the owner. */
export function validateCommand(command: SessionCommand): SessionCommand {
  if (typeof command !== "object" || command === null || !VERBS.has(command.verb)) {
    throw new TalkError(
      "invalid_params",
      `Unknown session command verb ${JSON.stringify((command as { verb?: unknown })?.verb)}.`,
    );
  }
  const params = command.params ?? {};
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && typeof value !== "string") {
      throw new TalkError("invalid_params", `Session command param ${key} must be a string.`);
    }
  }
  return { verb: command.verb, params: { ...params } };
}

/** Runs the owner's handler and turns the outcome into a reply (never throws). */
export async function applyCommand(
  handler: SessionCommandHandler | undefined,
  sessionId: string,
  command: SessionCommand,
): Promise<CommandReply> {
  if (!handler) {
    return {
      ok: false,
      error: { code: "session_not_found", message: "The owning worker has no command handler." },
    };
  }
  try {
    const value: unknown = await handler(sessionId, command);
    return { ok: true, value: value === undefined ? null : value };
  } catch (err) {
    const talkError = toTalkError(err);
    return { ok: false, error: { code: talkError.code, message: talkError.message } };
  }
}

/** The caller's side of a reply: the value, or the owner's error rebuilt as a TalkError. */
export function unwrapReply(reply: CommandReply, sessionId: string): unknown {
  if (reply.ok) return reply.value;
  const code: TalkErrorCode = reply.error.code in TALK_ERROR_CODES ? reply.error.code : "internal";
  throw new TalkError(code, reply.error.message, { details: { sessionId } });
}

export function ownerUnreachable(sessionId: string, why: string, cause?: unknown): TalkError {
  return new TalkError(
    "owner_unreachable",
    `The worker owning session ${sessionId} did not answer: ${why}.`,
    {
      details: { sessionId },
      cause,
    },
  );
}

export function sessionNotFound(sessionId: string): TalkError {
  return new TalkError("session_not_found", `No worker owns session ${sessionId}.`, {
    details: { sessionId },
  });
}

const SESSION_ID = /^[^\s]{1,256}$/;

export function checkSessionId(sessionId: string): string {
  if (typeof sessionId !== "string" || !SESSION_ID.test(sessionId)) {
    throw new TalkError("invalid_params", "A session id is 1-256 characters without whitespace.");
  }
  return sessionId;
}

/** Waits for a reply up to the bounded wait, then owner_unreachable; an abort rejects with cancelled. */
export async function withDeadline<T>(
  reply: Promise<T>,
  timeoutMs: number,
  sessionId: string,
  signal?: AbortSignal,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      reply,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(ownerUnreachable(sessionId, `no answer within ${timeoutMs} ms`)),
          timeoutMs,
        );
        if (signal) {
          onAbort = () =>
            reject(
              new TalkError("cancelled", "The command was cancelled by the caller.", {
                cause: signal.reason,
              }),
            );
          signal.addEventListener("abort", onAbort, { once: true });
        }
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}
