import { z } from "zod";
import { TalkError, toTalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import type { CommandReply } from "./session-command.js";

/**
 * Commands addressed to a worker rather than to a session, defined once like
 * the session commands (session-command.ts): verb -> params schema and
 * result type. The sender parses a command before it travels, the worker
 * parses what it received again. They ride the same per-worker channels as
 * session commands (command-bus.ts), marked `worker: true`.
 *
 * - `listSessions`: the sessions running on that worker, as its operations
 *   layer summarises them (surface, carrier or platform, state...). The
 *   cluster carries the summaries as JSON and never reads them.
 * - `drain`: the worker stops taking sessions and jobs and is marked
 *   `draining`, as after SIGTERM, but keeps running (an operator's drain).
 * - `listUsage`: that worker's usage ledger records of sessions ended
 *   between two days (UTC, inclusive), carried as JSON like the summaries.
 * - `listErrors`: that worker's latest errors (session and tool errors,
 *   abnormal closes, failed provider calls), carried as JSON.
 * - `closeSession`: ends a session that worker runs the way its surface ends
 *   it (a phone call is hung up at the carrier, then closed).
 * - `machineDetection`: a carrier's answering-machine result for an outbound
 *   call whose detection runs on that worker (the one that dialled it),
 *   relayed by the worker whose status route the carrier's callback reached
 *   after that worker authenticated and decoded it.
 * - `findCall`: the session of a phone call (by the carrier's call id) if
 *   that worker runs it, so any worker can serve the call's events (read
 *   from the session's event stream) whichever worker took its media stream.
 */

export interface WorkerCommandSpec<P extends z.ZodType, R> {
  readonly params: P;
  /** Type-level only: never set. */
  readonly result?: R;
}

function verb<R>(): <P extends z.ZodType>(params: P) => WorkerCommandSpec<P, R> {
  return (params) => ({ params });
}

export const WORKER_COMMANDS = {
  listSessions: verb<{ workerId: string; sessions: unknown[] }>()(z.strictObject({})),
  drain: verb<{ workerId: string; draining: true }>()(z.strictObject({})),
  listUsage: verb<{ workerId: string; records: unknown[] }>()(
    z.strictObject({
      from: z.iso.date(),
      to: z.iso.date(),
      limit: z.number().int().min(1).max(100_000).optional(),
    }),
  ),
  listErrors: verb<{ workerId: string; errors: unknown[] }>()(z.strictObject({})),
  closeSession: verb<{ sessionId: string; closed: true; hungUp: boolean }>()(
    z.strictObject({
      sessionId: z.string().regex(/^\S{1,256}$/, "1-256 characters without whitespace"),
      reason: z
        .string()
        .min(1)
        .max(64)
        .regex(/^[a-z0-9_.-]+$/, "lowercase letters, digits, _ . -")
        .optional(),
    }),
  ),
  machineDetection: verb<{ outcome: "applied" | "ended" | "not_found" }>()(
    z.strictObject({
      carrier: z.string().regex(/^[a-z0-9_-]{1,32}$/, "a carrier id"),
      detection: z.strictObject({
        callId: z.string().regex(/^\S{1,256}$/, "1-256 characters without whitespace"),
        answeredBy: z.enum(["human", "machine", "fax", "unknown"]),
        greetingEnded: z.boolean(),
        carrierResult: z.string().max(256),
        greetingEndReported: z.boolean().optional(),
      }),
    }),
  ),
  findCall: verb<{ sessionId: string | null }>()(
    z.strictObject({
      callId: z.string().regex(/^\S{1,256}$/, "1-256 characters without whitespace"),
    }),
  ),
} as const;

export type WorkerCommandVerb = keyof typeof WORKER_COMMANDS;
export const WORKER_COMMAND_VERBS = Object.keys(WORKER_COMMANDS) as readonly WorkerCommandVerb[];

export type WorkerCommandResult<V extends WorkerCommandVerb> = NonNullable<
  (typeof WORKER_COMMANDS)[V]["result"]
>;
export type ParsedWorkerCommandParams<V extends WorkerCommandVerb> = z.output<
  (typeof WORKER_COMMANDS)[V]["params"]
>;
export interface WorkerCommandOf<V extends WorkerCommandVerb> {
  verb: V;
  params?: z.input<(typeof WORKER_COMMANDS)[V]["params"]>;
}
export type ParsedWorkerCommand = {
  [V in WorkerCommandVerb]: { verb: V; params: ParsedWorkerCommandParams<V> };
}[WorkerCommandVerb];

/** What a worker implements: one typed handler per verb. */
export type WorkerCommandHandlers = {
  [V in WorkerCommandVerb]: (
    params: ParsedWorkerCommandParams<V>,
  ) => WorkerCommandResult<V> | Promise<WorkerCommandResult<V>>;
};

const commandShape = z.object({ verb: z.string().max(64), params: z.unknown().optional() });

/** Parses a worker command against the table; throws invalid_params. */
export function parseWorkerCommand(raw: unknown): ParsedWorkerCommand {
  const shape = commandShape.safeParse(raw);
  const name = shape.success ? shape.data.verb : undefined;
  if (!shape.success || name === undefined || !Object.hasOwn(WORKER_COMMANDS, name)) {
    const shown = JSON.stringify((raw as { verb?: unknown } | null)?.verb) ?? "undefined";
    throw new TalkError("invalid_params", `Unknown worker command verb ${shown.slice(0, 80)}.`, {
      details: { verbs: WORKER_COMMAND_VERBS },
    });
  }
  const verbName = name as WorkerCommandVerb;
  const params = WORKER_COMMANDS[verbName].params.safeParse(shape.data.params ?? {});
  if (!params.success) {
    const summary = params.error.issues
      .map((i) => `${i.path.map(String).join(".") || "params"}: ${i.message}`)
      .join("; ");
    throw new TalkError("invalid_params", `Invalid ${verbName} worker command: ${summary}`);
  }
  return { verb: verbName, params: params.data } as ParsedWorkerCommand;
}

/** The worker's side: parse, run the handler, reply. Never throws. */
export async function applyWorkerCommand(
  handlers: Partial<WorkerCommandHandlers>,
  raw: unknown,
  logger: TalkLogger,
): Promise<CommandReply> {
  let command: ParsedWorkerCommand;
  try {
    command = parseWorkerCommand(raw);
  } catch (err) {
    const error = toTalkError(err);
    logger.warn({ err: error.message }, "malformed worker command refused");
    return { ok: false, error: { code: error.code, message: error.message } };
  }
  const handler = handlers[command.verb] as ((params: unknown) => unknown) | undefined;
  if (!handler) {
    return {
      ok: false,
      error: {
        code: "capability_unsupported",
        message: `This worker does not answer the ${command.verb} worker command.`,
      },
    };
  }
  try {
    const value: unknown = await handler(command.params);
    return { ok: true, value: value === undefined ? null : value };
  } catch (err) {
    const error = toTalkError(err);
    return { ok: false, error: { code: error.code, message: error.message } };
  }
}

export function workerUnreachable(workerId: string, why: string, cause?: unknown): TalkError {
  return new TalkError("owner_unreachable", `Worker ${workerId} did not answer: ${why}.`, {
    details: { workerId },
    cause,
  });
}

const WORKER_ID = /^[^\s]{1,256}$/;

export function checkWorkerId(workerId: string): string {
  if (typeof workerId !== "string" || !WORKER_ID.test(workerId)) {
    throw new TalkError("invalid_params", "A worker id is 1-256 characters without whitespace.");
  }
  return workerId;
}
