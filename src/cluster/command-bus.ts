import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { TalkError } from "../core/errors.js";
import type { TalkLogger } from "../core/logger.js";
import type { CommandReply, SessionCommand } from "./coordinator.js";
import { directoryUnavailable, type RedisKeys } from "./redis-connection.js";
import { ownerUnreachable, withDeadline } from "./session-command.js";

interface CommandMessage {
  id: string;
  sessionId: string;
  command: SessionCommand;
  replyTo: string;
}

interface ReplyMessage {
  id: string;
  reply: CommandReply;
}

/** The narrow context the bus needs: connections, names, and how the owner applies a command. */
export interface CommandBusContext {
  commands: Redis;
  subscriber: Redis;
  keys: RedisKeys;
  workerId: string;
  /** Applies a command addressed to this worker (checks ownership, runs the handler). */
  apply(sessionId: string, command: SessionCommand): Promise<CommandReply>;
  logger: TalkLogger;
}

/**
 * Commands to a session's owner over pub/sub: one channel per worker for
 * requests and one for replies. Pub/sub fits because a command is only worth
 * delivering now: PUBLISH says how many workers heard it, so an owner that is
 * gone is reported at once, and one that is slow is bounded by the caller's
 * wait. Nothing is queued to be applied late, after the caller gave up.
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

  async send(
    ownerId: string,
    sessionId: string,
    command: SessionCommand,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<CommandReply> {
    const { commands, keys, workerId } = this.#ctx;
    if (commands.status !== "ready") throw directoryUnavailable("send a command to another worker");
    const id = randomUUID();
    const reply = new Promise<CommandReply>((resolve) => this.#pending.set(id, resolve));
    try {
      const message: CommandMessage = { id, sessionId, command, replyTo: workerId };
      let receivers: number;
      try {
        receivers = await commands.publish(keys.commandChannel(ownerId), JSON.stringify(message));
      } catch (err) {
        throw directoryUnavailable("send a command to another worker", err);
      }
      // Nobody listens on the owner's channel: it died (its lease has not lapsed yet) or lost Redis.
      if (receivers === 0) throw ownerUnreachable(sessionId, `worker ${ownerId} is not connected`);
      return await withDeadline(reply, timeoutMs, sessionId, signal);
    } finally {
      this.#pending.delete(id);
    }
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
    const { keys, workerId } = this.#ctx;
    // The subscriber carries other channels too (shared settings): only ours are parsed here.
    if (channel !== keys.replyChannel(workerId) && channel !== keys.commandChannel(workerId)) return;
    let message: unknown;
    try {
      message = JSON.parse(raw);
    } catch {
      this.#ctx.logger.warn({ channel }, "malformed cluster message ignored");
      return;
    }
    if (channel === keys.replyChannel(workerId)) {
      const { id, reply } = message as ReplyMessage;
      this.#pending.get(id)?.(reply);
    } else if (channel === keys.commandChannel(workerId)) {
      void this.#answer(message as CommandMessage);
    }
  }

  async #answer(message: CommandMessage): Promise<void> {
    const reply = await this.#ctx.apply(message.sessionId, message.command);
    const out: ReplyMessage = { id: message.id, reply };
    try {
      await this.#ctx.commands.publish(this.#ctx.keys.replyChannel(message.replyTo), JSON.stringify(out));
    } catch (err) {
      // The caller will time out with owner_unreachable; the command itself was applied.
      this.#ctx.logger.warn(
        { err: err instanceof TalkError ? err.code : err, sessionId: message.sessionId },
        "command reply lost",
      );
    }
  }
}
