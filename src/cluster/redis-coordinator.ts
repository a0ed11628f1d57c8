import type { Redis } from "ioredis";
import { TalkError } from "../core/errors.js";
import type { TalkEvent } from "../core/talk-events.js";
import type {
  ClaimOptions,
  CommandReply,
  Coordinator,
  CoordinatorEvents,
  CoordinatorState,
  ReadyReport,
  SendCommandOptions,
  SessionClaim,
  SessionCommand,
  SessionCommandHandler,
  SessionEventListener,
  SessionLocation,
  SubscribeEventsOptions,
  WorkerInfo,
  WorkerRole,
  WorkerState,
} from "./coordinator.js";
import { type CoordinatorOptions, type ResolvedCoordinatorOptions, resolveCoordinatorOptions } from "./coordinator-options.js";
import { CommandBus } from "./command-bus.js";
import { CpuSampler } from "./cpu-sampler.js";
import { EventHub } from "./event-hub.js";
import { EventStream } from "./event-stream.js";
import { LeaseKeeper } from "./lease-keeper.js";
import { orderedListener } from "./ordered-listener.js";
import { createRedisConnection, directoryUnavailable, parseRedisUrl, RedisKeys } from "./redis-connection.js";
import { RedisDirectory } from "./redis-directory.js";
import { applyCommand, checkSessionId, sessionNotFound, unwrapReply, validateCommand } from "./session-command.js";
import { WorkerRegistry } from "./worker-registry.js";

export interface RedisCoordinatorOptions extends CoordinatorOptions {
  /** redis:// or rediss:// URL (required). */
  redisUrl: string;
  /** Prefix of every key and channel (required; e.g. "talkgate:"). */
  keyPrefix: string;
  /** Events held per worker while Redis is down (default 10 000; the oldest are dropped beyond it). */
  maxPendingEvents?: number;
  /** Longest blocking stream read, ms (default 2000). */
  readBlockMs?: number;
}

/**
 * The coordinator for many workers behind one Redis. Three connections:
 * commands (fail fast while Redis is down), a pub/sub subscriber (command
 * bus), and a reader that only blocks on XREAD. Everything a live call needs
 * is local (owned leases, the command handler, queued events), so a Redis
 * outage delays bookkeeping, never media; on reconnect the leases are
 * re-written, held events sent, and reads resume where they stopped.
 */
export class RedisCoordinator implements Coordinator {
  readonly backend = "redis" as const;
  readonly #opts: ResolvedCoordinatorOptions;
  readonly #keys: RedisKeys;
  readonly #commands: Redis;
  readonly #subscriber: Redis;
  readonly #reader: Redis;
  readonly #directory: RedisDirectory;
  readonly #registry: WorkerRegistry;
  readonly #bus: CommandBus;
  readonly #stream: EventStream;
  readonly #leases: LeaseKeeper;
  readonly #events: EventHub<CoordinatorEvents>;
  readonly #cpu = new CpuSampler();
  readonly #pendingReleases = new Set<string>();
  readonly #subscriptions = new Set<() => void>();
  readonly #startedAt = Date.now();
  readonly #timers: NodeJS.Timeout[] = [];
  #state: CoordinatorState = "starting";
  #workerState: WorkerState = "ready";
  #redisStatus: "ready" | "reconnecting" = "reconnecting";
  #handler: SessionCommandHandler | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: RedisCoordinatorOptions) {
    this.#opts = resolveCoordinatorOptions(options);
    this.#keys = new RedisKeys(options.keyPrefix);
    const base = parseRedisUrl(options.redisUrl);
    const name = `talkgate-${this.#opts.workerId}`.replace(/[^A-Za-z0-9._-]/g, "-");
    this.#commands = createRedisConnection(base, "commands", `${name}-cmd`);
    this.#subscriber = createRedisConnection(base, "subscriber", `${name}-sub`);
    this.#reader = createRedisConnection(base, "reader", `${name}-read`);
    for (const conn of [this.#commands, this.#subscriber, this.#reader]) {
      // ioredis reports every failed reconnect attempt; an unhandled 'error' would crash the process.
      conn.on("error", (err: Error) => this.#opts.logger.debug({ err: err.message }, "redis connection error"));
    }
    this.#events = new EventHub(this.#opts.logger);
    this.#directory = new RedisDirectory(this.#commands, this.#keys, this.workerId, this.#opts.closedRetentionMs);
    this.#registry = new WorkerRegistry(this.#commands, this.#keys, this.#opts.heartbeatMs);
    this.#bus = new CommandBus({
      commands: this.#commands,
      subscriber: this.#subscriber,
      keys: this.#keys,
      workerId: this.workerId,
      apply: (sessionId, command) => this.#apply(sessionId, command),
      logger: this.#opts.logger,
    });
    this.#stream = new EventStream({
      commands: this.#commands,
      reader: this.#reader,
      keys: this.#keys,
      retention: this.#opts.eventRetention,
      maxPending: positive("maxPendingEvents", options.maxPendingEvents ?? 10_000),
      blockMs: positive("readBlockMs", options.readBlockMs ?? 2000),
      onSessionLost: (event) => this.#events.emit("session-lost", event),
      logger: this.#opts.logger,
    });
    this.#leases = new LeaseKeeper(
      {
        renew: (leases) => {
          if (this.#commands.status !== "ready") return Promise.reject(directoryUnavailable("renew leases"));
          return this.#directory.renew(leases);
        },
        onLost: (lost) => this.#events.emit("lease-lost", { type: "lease-lost", ...lost, at: Date.now() }),
        logger: this.#opts.logger,
      },
      this.#opts.leaseTtlSec,
    );
  }

  get workerId(): string {
    return this.#opts.workerId;
  }
  get roles(): readonly WorkerRole[] {
    return this.#opts.roles;
  }
  get state(): CoordinatorState {
    return this.#state;
  }
  get workerState(): WorkerState {
    return this.#workerState;
  }
  get ownedSessions(): number {
    return this.#leases.size;
  }
  /** The key prefix, for tools and tests that clean up after themselves. */
  get keyPrefix(): string {
    return this.#keys.prefix;
  }

  async start(signal?: AbortSignal): Promise<void> {
    if (this.#state === "ready") return;
    this.#assert("starting");
    signal?.throwIfAborted();
    try {
      await Promise.all([this.#commands.connect(), this.#subscriber.connect(), this.#reader.connect()]);
      await this.#bus.start();
      await this.#stream.start();
      await this.#registry.publish(this.#info());
    } catch (err) {
      this.#disconnectAll();
      this.#state = "closed";
      throw directoryUnavailable("start the cluster coordinator", err);
    }
    if (signal?.aborted) {
      await this.close();
      signal.throwIfAborted();
    }
    this.#redisStatus = "ready";
    this.#commands.on("ready", () => this.#onReconnected());
    this.#commands.on("close", () => this.#setRedisStatus("reconnecting"));
    this.#every(this.#opts.heartbeatMs, () => this.#registry.publish(this.#info()));
    this.#every(this.#opts.sweepIntervalMs, () => this.#directory.sweep());
    this.#state = "ready";
    this.#opts.logger.info({ workerId: this.workerId, roles: this.roles }, "cluster coordinator ready (redis)");
  }

  async setWorkerState(state: WorkerState): Promise<void> {
    this.#assert("ready");
    this.#workerState = state;
    // Best effort now; the next heartbeat carries it if Redis is down, so drain never waits on Redis.
    if (this.#commands.status === "ready") await this.#registry.publish(this.#info()).catch(() => undefined);
  }

  async listWorkers(signal?: AbortSignal): Promise<WorkerInfo[]> {
    signal?.throwIfAborted();
    this.#assert("ready");
    if (this.#commands.status !== "ready") throw directoryUnavailable("list workers");
    return this.#registry.list();
  }

  async claim(sessionId: string, options: ClaimOptions = {}): Promise<SessionClaim> {
    checkSessionId(sessionId);
    options.signal?.throwIfAborted();
    this.#assert("ready");
    if (this.#workerState === "draining") throw new TalkError("shutting_down", "This worker is draining and takes no new sessions.");
    const ttlSec = options.ttlSec ?? this.#opts.leaseTtlSec;
    if (!Number.isInteger(ttlSec) || ttlSec < 1) throw new TalkError("invalid_params", "ttlSec must be a positive integer.");
    if (this.#leases.has(sessionId)) return { workerId: this.workerId, synced: true };
    this.#pendingReleases.delete(sessionId);
    let owner: string;
    try {
      if (this.#commands.status !== "ready") throw directoryUnavailable("claim");
      owner = await this.#directory.claim(sessionId, ttlSec);
    } catch {
      // The media is here either way: hold the lease locally, the keeper writes it when Redis is back.
      this.#leases.add(sessionId, ttlSec);
      return { workerId: this.workerId, synced: false };
    }
    if (owner !== this.workerId) {
      throw new TalkError("invalid_state", `Session ${sessionId} is owned by worker ${owner}.`, { details: { workerId: owner } });
    }
    this.#leases.add(sessionId, ttlSec);
    return { workerId: this.workerId, synced: true };
  }

  async locate(sessionId: string, signal?: AbortSignal): Promise<SessionLocation | undefined> {
    checkSessionId(sessionId);
    signal?.throwIfAborted();
    this.#assert("ready");
    if (this.#leases.has(sessionId)) return { workerId: this.workerId };
    if (this.#commands.status !== "ready") throw directoryUnavailable("locate a session");
    const workerId = await this.#directory.locate(sessionId).catch((err: unknown) => {
      throw directoryUnavailable("locate a session", err);
    });
    return workerId === undefined ? undefined : { workerId };
  }

  async release(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    if (!this.#leases.remove(sessionId)) return;
    try {
      if (this.#commands.status !== "ready") throw directoryUnavailable("release");
      await this.#directory.release(sessionId);
    } catch {
      // Released when Redis is back; until then the lease would lapse into a false session-lost.
      this.#pendingReleases.add(sessionId);
    }
  }

  owns(sessionId: string): boolean {
    return this.#leases.has(sessionId);
  }

  async sendCommand(sessionId: string, command: SessionCommand, options: SendCommandOptions = {}): Promise<unknown> {
    checkSessionId(sessionId);
    const checked = validateCommand(command);
    options.signal?.throwIfAborted();
    this.#assert("ready");
    // A session owned here is commanded directly: no Redis, so it works during an outage too.
    if (this.#leases.has(sessionId)) return unwrapReply(await applyCommand(this.#handler, sessionId, checked), sessionId);
    const owner = await this.locate(sessionId, options.signal);
    if (owner === undefined || owner.workerId === this.workerId) throw sessionNotFound(sessionId);
    const timeoutMs = options.timeoutMs ?? this.#opts.commandTimeoutMs;
    const reply = await this.#bus.send(owner.workerId, sessionId, checked, timeoutMs, options.signal);
    return unwrapReply(reply, sessionId);
  }

  onCommand(handler: SessionCommandHandler): () => void {
    if (this.#handler) throw new TalkError("invalid_state", "A command handler is already installed.");
    this.#handler = handler;
    return () => {
      if (this.#handler === handler) this.#handler = undefined;
    };
  }

  publishEvent(event: TalkEvent): void {
    if (this.#state !== "ready") return;
    this.#stream.publish(event);
  }

  subscribeEvents(
    sessionId: string,
    afterSeq: number,
    listener: SessionEventListener,
    options: SubscribeEventsOptions = {},
  ): () => void {
    checkSessionId(sessionId);
    if (!Number.isInteger(afterSeq) || afterSeq < 0) throw new TalkError("invalid_params", "afterSeq must be a non-negative integer.");
    this.#assert("ready");
    if (options.signal?.aborted) return () => {};
    const off = this.#stream.subscribe(sessionId, orderedListener(afterSeq, listener, this.#opts.logger));
    const onAbort = (): void => unsubscribe();
    const unsubscribe = (): void => {
      off();
      options.signal?.removeEventListener("abort", onAbort);
      this.#subscriptions.delete(unsubscribe);
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });
    this.#subscriptions.add(unsubscribe);
    return unsubscribe;
  }

  on<K extends keyof CoordinatorEvents>(type: K, listener: (event: CoordinatorEvents[K]) => void): () => void {
    return this.#events.on(type, listener);
  }

  ready(): ReadyReport {
    return {
      ok: this.#state === "ready" && this.#workerState === "ready",
      detail: {
        state: this.#state,
        workerId: this.workerId,
        workerState: this.#workerState,
        backend: this.backend,
        redis: this.#commands.status === "ready" ? "ready" : "reconnecting",
        sessions: this.#leases.size,
      },
    };
  }

  close(): Promise<void> {
    this.#closing ??= this.#close(true);
    return this.#closing;
  }

  /**
   * Drops every connection as if the process died: no release, no
   * deregistration. Other workers see the leases lapse. For tests and fault injection.
   */
  crash(): Promise<void> {
    this.#closing ??= this.#close(false);
    return this.#closing;
  }

  async #close(orderly: boolean): Promise<void> {
    const wasReady = this.#state === "ready";
    this.#state = "closing";
    for (const timer of this.#timers) clearInterval(timer);
    const held = this.#leases.leases();
    this.#leases.close();
    for (const unsubscribe of [...this.#subscriptions]) unsubscribe();
    if (orderly && wasReady && this.#commands.status === "ready") {
      const releases = [...held.map((l) => l.sessionId), ...this.#pendingReleases].map((id) => this.#directory.release(id));
      await Promise.allSettled([...releases, this.#registry.remove(this.workerId)]);
    }
    this.#bus.close();
    await this.#stream.close(orderly && wasReady);
    if (orderly) await Promise.allSettled([this.#commands.quit(), this.#subscriber.quit()]);
    this.#disconnectAll();
    this.#handler = undefined;
    this.#events.clear();
    this.#state = "closed";
  }

  async #apply(sessionId: string, command: SessionCommand): Promise<CommandReply> {
    if (!this.#leases.has(sessionId)) return { ok: false, error: { code: "session_not_found", message: `Worker ${this.workerId} does not own session ${sessionId}.` } };
    return applyCommand(this.#handler, sessionId, command);
  }

  /** Redis is back (same server or a restarted one): restore everything it should know about us. */
  #onReconnected(): void {
    if (this.#state !== "ready") return;
    this.#setRedisStatus("ready");
    void (async () => {
      await this.#leases.renewNow();
      for (const sessionId of [...this.#pendingReleases]) {
        try {
          await this.#directory.release(sessionId);
          this.#pendingReleases.delete(sessionId);
        } catch {
          break; // down again: the next reconnect retries
        }
      }
      await this.#registry.publish(this.#info()).catch(() => undefined);
      await this.#stream.flush();
    })();
  }

  #setRedisStatus(status: "ready" | "reconnecting"): void {
    if (this.#redisStatus === status || this.#state !== "ready") return;
    this.#redisStatus = status;
    this.#opts.logger.warn({ workerId: this.workerId, redis: status }, "cluster redis connection changed");
    this.#events.emit("connection", { type: "connection", status, at: Date.now() });
  }

  #every(ms: number, task: () => Promise<unknown>): void {
    const timer = setInterval(() => {
      if (this.#commands.status !== "ready") return;
      task().catch((err: unknown) => this.#opts.logger.debug({ err }, "cluster periodic task failed"));
    }, ms);
    timer.unref();
    this.#timers.push(timer);
  }

  #disconnectAll(): void {
    for (const conn of [this.#commands, this.#subscriber, this.#reader]) conn.disconnect();
  }

  #info(): WorkerInfo {
    return {
      id: this.workerId,
      roles: this.roles,
      state: this.#workerState,
      load: { sessions: this.#leases.size, cpu: this.#cpu.sample() },
      maxSessions: this.#opts.maxSessions,
      heartbeatAt: Date.now(),
      startedAt: this.#startedAt,
    };
  }

  #assert(state: CoordinatorState): void {
    if (this.#state !== state) throw new TalkError("invalid_state", `The coordinator is ${this.#state}, not ${state}.`);
  }
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) throw new TalkError("config_invalid", `cluster: ${name} must be a positive integer.`);
  return value;
}
