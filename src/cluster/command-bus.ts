import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { z } from "zod";
import { TalkError } from "../core/index.js";
import type { TalkLogger } from "../core/index.js";
import { directoryUnavailable } from "./directory-errors.js";
import type { RedisKeys } from "./redis-connection.js";
import {
  type CommandReply,
  commandCancelled,
  knownCode,
  ownerUnreachable,
  type ParsedSessionCommand,
  withDeadline,
} from "./session-command.js";
import { type ParsedWorkerCommand, workerUnreachable } from "./worker-command.js";

const id = z.string().min(1).max(128);
const workerId = z.string().min(1).max(256);

/**
 * A request on the owner's channel. The command inside is parsed against the
 * table by the owner (coordinator-base), so a bad verb is answered invalid_params.
 */
const commandMessage = z.object({
  id,
  sessionId: z.string().min(1).max(256),
  command: z.unknown(),
  replyTo: workerId,
  /** A worker command (worker-command.ts): addressed to the worker, `sessionId` is unused. */
  worker: z.literal(true).optional(),
});
type CommandMessage = z.infer<typeof commandMessage>;

const replyMessage = z.object({
  id,
  reply: z.discriminatedUnion("ok", [
    z.object({ ok: z.literal(true), value: z.unknown() }),
    z.object({
      ok: z.literal(false),
      error: z.object({ code: z.string().max(64).transform(knownCode), message: z.string().max(4096) }),
    }),
  ]),
});
type ReplyMessage = z.input<typeof replyMessage>;

/** Where a malformed request can still be answered: its id and replyTo, when those are sound. */
const replyAddress = z.object({ id, replyTo: workerId });

/** The narrow context the bus needs: connections, names, and how the owner applies a command. */
export interface CommandBusContext {
  commands: Redis;
  subscriber: Redis;
  keys: RedisKeys;
  workerId: string;
  /** Applies a command addressed to this worker, as received (parses it, checks ownership, runs the handler). */
  apply(sessionId: string, command: unknown): Promise<CommandReply>;
  /** Applies a worker command addressed to this worker, as received (parses it, runs the handler). */
  applyWorker(command: unknown): Promise<CommandReply>;
  logger: TalkLogger;
}

/**
 * Commands to a session's owner over pub/sub: one channel per worker for
 * requests and one for replies. Pub/sub fits because a command is only worth
 * delivering now: PUBLISH says how many workers heard it, so an owner that is
 * gone is reported at once, and one that is slow is bounded by the caller's
 * wait. Nothing is queued to be applied late, after the caller gave up.
 *
 * Every message received is parsed (zod), never cast: a malformed request is
 * logged and, when it says where to reply, answered with a coded error; a
 * malformed reply is logged and dropped (its caller times out). Neither stops
 * the bus.
 */
export class CommandBus {
  readonly #ctx: CommandBusContext;
  readonly #pending = new Map<string, (reply: CommandReply) => void>();
  readonly #onMessage = (channel: string, message: string): void => this.#route(channel, message);

  constructor(ctx: CommandBusContext) {
    this.#ctx = ctx;
  }

  async start(): Promise<void> {
    const { subscriber, keys, workerId } = this.#ctx;
    subscriber.on("message", this.#onMessage);
    await subscriber.subscribe(keys.commandChannel(workerId), keys.replyChannel(workerId));
  }

  send(
    ownerId: string,
    sessionId: string,
    command: ParsedSessionCommand,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<CommandReply> {
    return this.#send(ownerId, { sessionId, command }, timeoutMs, signal, (why) =>
      ownerUnreachable(sessionId, why),
    );
  }

  /** A worker command (worker-command.ts) to `targetId`; the same channel, reply and deadline as a session command. */
  sendWorker(
    targetId: string,
    command: ParsedWorkerCommand,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<CommandReply> {
    return this.#send(targetId, { sessionId: targetId, command, worker: true }, timeoutMs, signal, (why) =>
      workerUnreachable(targetId, why),
    );
  }

  async #send(
    targetId: string,
    body: Pick<CommandMessage, "sessionId" | "command" | "worker">,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    unreachable: (why: string) => TalkError,
  ): Promise<CommandReply> {
    const { commands, keys, workerId } = this.#ctx;
    if (signal?.aborted) throw commandCancelled(signal);
    if (commands.status !== "ready") throw directoryUnavailable("send a command to another worker");
    const id = randomUUID();
    const reply = new Promise<CommandReply>((resolve) => this.#pending.set(id, resolve));
    try {
      const message: CommandMessage = { id, ...body, replyTo: workerId };
      let receivers: number;
      try {
        receivers = await commands.publish(keys.commandChannel(targetId), JSON.stringify(message));
      } catch (err) {
        throw directoryUnavailable("send a command to another worker", err);
      }
      // Nobody listens on the worker's channel: it died (its lease has not lapsed yet) or lost Redis.
      if (receivers === 0) throw unreachable(`worker ${targetId} is not connected`);
      return await withDeadline(reply, timeoutMs, body.sessionId, signal, unreachable);
    } finally {
      this.#pending.delete(id);
    }
  }

  /** Replies awaited now (each released when answered, timed out, or its caller's signal aborted). */
  get pending(): number {
    return this.#pending.size;
  }

  /** Rejects nothing new; replies still in flight resolve as owner_unreachable for their callers. */
  close(): void {
    this.#ctx.subscriber.off("message", this.#onMessage);
    for (const resolve of this.#pending.values()) {
      resolve({
        ok: false,
        error: { code: "owner_unreachable", message: "This worker closed before the owner answered." },
      });
    }
    this.#pending.clear();
  }

  #route(channel: string, raw: string): void {
    const { keys, workerId, logger } = this.#ctx;
    // The subscriber carries other channels too (shared settings): only ours are parsed here.
    const isReply = channel === keys.replyChannel(workerId);
    if (!isReply && channel !== keys.commandChannel(workerId)) return;
    let message: unknown;
    try {
      message = JSON.parse(raw);
    } catch {
      logger.warn({ channel, bytes: raw.length }, "malformed cluster message ignored (not JSON)");
      return;
    }
    if (isReply) {
      const reply = replyMessage.safeParse(message);
      if (!reply.success) {
        logger.warn({ channel, issues: summary(reply.error) }, "malformed command reply ignored");
        return;
      }
      this.#pending.get(reply.data.id)?.(reply.data.reply as CommandReply);
      return;
    }
    const request = commandMessage.safeParse(message);
    if (request.success) {
      void this.#answer(request.data);
      return;
    }
    const issues = summary(request.error);
    logger.warn({ channel, issues }, "malformed session command refused");
    const address = replyAddress.safeParse(message);
    if (address.success) {
      void this.#publishReply(address.data.replyTo, {
        id: address.data.id,
        reply: {
          ok: false,
          error: { code: "invalid_request", message: `Malformed session command: ${issues}` },
        },
      });
    }
  }

  async #answer(message: CommandMessage): Promise<void> {
    const reply = message.worker
      ? await this.#ctx.applyWorker(message.command)
      : await this.#ctx.apply(message.sessionId, message.command);
    await this.#publishReply(message.replyTo, { id: message.id, reply });
  }

  async #publishReply(replyTo: string, out: ReplyMessage): Promise<void> {
    try {
      await this.#ctx.commands.publish(this.#ctx.keys.replyChannel(replyTo), JSON.stringify(out));
    } catch (err) {
      // The caller will time out with owner_unreachable; the command itself was applied.
      this.#ctx.logger.warn(
        { err: err instanceof TalkError ? err.code : err, replyTo },
        "command reply lost",
      );
    }
  }
}

function summary(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((i) => `${i.path.map(String).join(".") || "message"}: ${i.message}`)
    .join("; ");
}
