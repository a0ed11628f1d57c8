import { z } from "zod";
import { TALK_ERROR_CODES, TalkError, type TalkErrorCode, toTalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";

/**
 * The cross-worker session commands, defined once: verb -> params schema and
 * result type. The sender checks a command against this table before it
 * travels, the owner parses what it received against the same table (a
 * malformed command is answered with a coded error, never applied), and the
 * caller's result is typed by the verb.
 *
 * cancelTurn / cancelOutput / close are the Talk verbs applied on the owner;
 * join / leave move a Gateway session's event delivery to (or away from) a
 * client connected to another worker (talk.session.join there).
 */

const turnId = z.string().min(1).max(128);
const reason = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[a-z0-9_.-]+$/, "lowercase letters, digits, _ . -");
/**
 * The remote client a command comes from, `<workerId>/<connectionId>`: the
 * owner checks that this client joined the session before applying a verb.
 * A Talk verb without it is server-internal (no client to check).
 */
const peer = z
  .string()
  .min(3)
  .max(512)
  .regex(/^\S+\/\S+$/, "<workerId>/<connectionId>");

/** A verb's entry: its params schema, and (as a type only) what the owner answers. */
export interface SessionCommandSpec<P extends z.ZodType, R> {
  readonly params: P;
  /** Type-level only: never set. The result travels as JSON from our own owner. */
  readonly result?: R;
}

function verb<R>(): <P extends z.ZodType>(params: P) => SessionCommandSpec<P, R> {
  return (params) => ({ params });
}

export interface CancelResult {
  sessionId: string;
  cancelled: boolean;
}

/** The owner's answer to a join: the replay comes from its own buffer (the authority), live events after it from the cluster stream. */
export interface JoinReply {
  sessionId: string;
  mode: TalkEvent["mode"];
  transport: TalkEvent["transport"];
  brain: TalkEvent["brain"];
  provider?: string;
  seq: number;
  replayed: number;
  complete: boolean;
  events: TalkEvent[];
}

const cancelParams = z.strictObject({
  turnId: turnId.optional(),
  reason: reason.optional(),
  peer: peer.optional(),
});

/** The table. Add a verb here and both sides see it (and the owner's handlers must implement it). */
export const SESSION_COMMANDS = {
  cancelTurn: verb<CancelResult>()(cancelParams),
  cancelOutput: verb<CancelResult>()(cancelParams),
  close: verb<{ sessionId: string; closed: true }>()(
    z.strictObject({ reason: reason.optional(), peer: peer.optional() }),
  ),
  join: verb<JoinReply>()(
    z.strictObject({
      /** The token the client presented (checked on the owner, which keeps only its hash). */
      joinToken: z.string().min(1).max(256),
      /** The client's replay position. */
      afterSeq: z.number().int().min(0),
      peer,
    }),
  ),
  leave: verb<{ left: true }>()(z.strictObject({ peer })),
} as const;

export type SessionCommandVerb = keyof typeof SESSION_COMMANDS;
export const SESSION_COMMAND_VERBS = Object.keys(SESSION_COMMANDS) as readonly SessionCommandVerb[];

/** What a sender writes for `verb` (params may be left out when the verb needs none). */
export type SessionCommandParams<V extends SessionCommandVerb> = z.input<
  (typeof SESSION_COMMANDS)[V]["params"]
>;
/** What the owner's handler receives for `verb`, parsed. */
export type ParsedSessionCommandParams<V extends SessionCommandVerb> = z.output<
  (typeof SESSION_COMMANDS)[V]["params"]
>;
/** What the owner answers to `verb`. */
export type SessionCommandResult<V extends SessionCommandVerb> = NonNullable<
  (typeof SESSION_COMMANDS)[V]["result"]
>;

/** One command as a sender writes it. */
export type SessionCommandOf<V extends SessionCommandVerb> = {
  verb: V;
} & (object extends SessionCommandParams<V>
  ? { params?: SessionCommandParams<V> }
  : { params: SessionCommandParams<V> });
export type SessionCommand = { [V in SessionCommandVerb]: SessionCommandOf<V> }[SessionCommandVerb];
/** One command as the owner's handler receives it: parsed against the table. */
export type ParsedSessionCommand = {
  [V in SessionCommandVerb]: { verb: V; params: ParsedSessionCommandParams<V> };
}[SessionCommandVerb];

/**
 * Applies a command on the owning worker. Returns a JSON-serialisable result;
 * throwing a TalkError sends its code back to the caller (e.g. stale_turn).
 */
export type SessionCommandHandler = (sessionId: string, command: ParsedSessionCommand) => unknown;

/** One typed handler per verb: what the owner implements. */
export type SessionCommandHandlers = {
  [V in SessionCommandVerb]: (
    sessionId: string,
    params: ParsedSessionCommandParams<V>,
  ) => SessionCommandResult<V> | Promise<SessionCommandResult<V>>;
};

/** Turns a table of typed per-verb handlers into the one handler a coordinator installs. */
export function sessionCommandHandler(handlers: SessionCommandHandlers): SessionCommandHandler {
  return (sessionId, command) =>
    (handlers[command.verb] as (sessionId: string, params: unknown) => unknown)(sessionId, command.params);
}

/** What a remote caller gets back: the handler's value, or the error it threw, by code. */
export type CommandReply =
  { ok: true; value: unknown } | { ok: false; error: { code: TalkErrorCode; message: string } };

const commandShape = z.object({ verb: z.string().max(64), params: z.unknown().optional() });

/**
 * Parses a command against the table: at the sender (a bad command never
 * travels) and at the owner (what arrived is never trusted). Throws
 * invalid_params naming the verb and the offending fields.
 */
export function parseSessionCommand(raw: unknown): ParsedSessionCommand {
  const shape = commandShape.safeParse(raw);
  const name = shape.success ? shape.data.verb : undefined;
  if (!shape.success || name === undefined || !Object.hasOwn(SESSION_COMMANDS, name)) {
    const shown = JSON.stringify((raw as { verb?: unknown } | null)?.verb) ?? "undefined";
    throw new TalkError("invalid_params", `Unknown session command verb ${shown.slice(0, 80)}.`, {
      details: { verbs: SESSION_COMMAND_VERBS },
    });
  }
  const verbName = name as SessionCommandVerb;
  const params = SESSION_COMMANDS[verbName].params.safeParse(shape.data.params ?? {});
  if (!params.success) {
    const issues = params.error.issues.map((i) => ({
      path: i.path.map(String).join(".") || "params",
      message: i.message,
    }));
    const summary = issues.map((i) => `${i.path}: ${i.message}`).join("; ");
    throw new TalkError("invalid_params", `Invalid ${verbName} command: ${summary}`, {
      details: { verb: verbName, issues },
    });
  }
  return { verb: verbName, params: params.data } as ParsedSessionCommand;
}

/**
 * The owner's side: parses what arrived, runs the handler, turns the outcome
 * into a reply. Never throws; a malformed command is logged and answered with
 * its code.
 */
export async function applyCommand(
  handler: SessionCommandHandler | undefined,
  sessionId: string,
  raw: unknown,
  logger: TalkLogger,
): Promise<CommandReply> {
  let command: ParsedSessionCommand;
  try {
    checkSessionId(sessionId);
    command = parseSessionCommand(raw);
  } catch (err) {
    const error = toTalkError(err);
    logger.warn(
      { sessionId: String(sessionId).slice(0, 256), err: error.message },
      "malformed session command refused",
    );
    return { ok: false, error: { code: error.code, message: error.message } };
  }
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
  throw new TalkError(knownCode(reply.error.code), reply.error.message, { details: { sessionId } });
}

/** An error code that crossed the wire: ours, or `internal` for anything else. */
export function knownCode(code: string): TalkErrorCode {
  return Object.hasOwn(TALK_ERROR_CODES, code) ? (code as TalkErrorCode) : "internal";
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

/** The error a command gets when its caller's signal aborted: it stops waiting for the owner. */
export function commandCancelled(signal: AbortSignal): TalkError {
  return new TalkError("cancelled", "The command was cancelled by the caller.", { cause: signal.reason });
}

/** Waits for a reply up to the bounded wait, then owner_unreachable; an abort rejects with cancelled. */
export async function withDeadline<T>(
  reply: Promise<T>,
  timeoutMs: number,
  sessionId: string,
  signal?: AbortSignal,
  unreachable: (why: string) => TalkError = (why) => ownerUnreachable(sessionId, why),
): Promise<T> {
  if (signal?.aborted) throw commandCancelled(signal);
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      reply,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(unreachable(`no answer within ${timeoutMs} ms`)), timeoutMs);
        if (signal) {
          onAbort = () => reject(commandCancelled(signal));
          signal.addEventListener("abort", onAbort, { once: true });
        }
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
    if (onAbort) signal?.removeEventListener("abort", onAbort);
  }
}
