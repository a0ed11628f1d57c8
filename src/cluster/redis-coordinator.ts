import type { Redis } from "ioredis";
import { TalkError } from "../core/index.js";
import type { TalkEvent } from "../core/index.js";
import type {
  ClaimOptions,
  CommandReply,
  Coordinator,
  ReadyReport,
  SessionClaim,
  SessionLocation,
  WorkerInfo,
} from "./coordinator.js";
import { CoordinatorBase } from "./coordinator-base.js";
import type { CoordinatorOptions } from "./coordinator-options.js";
import { CommandBus } from "./command-bus.js";
import { EventStream } from "./event-stream.js";
import type { HeldLease, LostLease } from "./lease-keeper.js";
import type { OrderedListener } from "./ordered-listener.js";
import { directoryUnavailable } from "./directory-errors.js";
import { createRedisConnection, parseRedisUrl, RedisKeys } from "./redis-connection.js";
import { RedisDirectory } from "./redis-directory.js";
import { RedisOneTimeClaims } from "./one-time-claims.js";
import { RedisSettings } from "./redis-settings.js";
import { checkSessionId, type ParsedSessionCommand, sessionNotFound } from "./session-command.js";
import type { ParsedWorkerCommand } from "./worker-command.js";
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
 * re-written, held events sent, and reads resume where they stopped. Redis
 * counts as back only once both the commands connection and the subscriber
 * are: a lease restored while this worker's command channel had no
 * subscriber again told other workers to command an owner that could not hear
 * them (owner_unreachable, "not connected"; cluster-redis-outage.test.ts).
 */
export class RedisCoordinator extends CoordinatorBase implements Coordinator {
  readonly backend = "redis" as const;
  readonly #keys: RedisKeys;
  readonly #commands: Redis;
  readonly #subscriber: Redis;
  readonly #reader: Redis;
  readonly #directory: RedisDirectory;
  readonly #registry: WorkerRegistry;
  readonly #bus: CommandBus;
  readonly #stream: EventStream;
  readonly #settings: RedisSettings;
  readonly claims: RedisOneTimeClaims;
  readonly #pendingReleases = new Set<string>();
  readonly #timers: NodeJS.Timeout[] = [];
  #redisStatus: "ready" | "reconnecting" = "reconnecting";
  /** The subscriber is connected and subscribed to this worker's channels (again, after a reconnect). */
  #subscribed = false;

  constructor(options: RedisCoordinatorOptions) {
    super(options);
    this.#keys = new RedisKeys(options.keyPrefix);
    const base = parseRedisUrl(options.redisUrl);
    const name = `talkgate-${this.opts.workerId}`.replace(/[^A-Za-z0-9._-]/g, "-");
    this.#commands = createRedisConnection(base, "commands", `${name}-cmd`);
    this.#subscriber = createRedisConnection(base, "subscriber", `${name}-sub`);
    this.#reader = createRedisConnection(base, "reader", `${name}-read`);
    for (const conn of [this.#commands, this.#subscriber, this.#reader]) {
      // ioredis reports every failed reconnect attempt; an unhandled 'error' would crash the process.
      conn.on("error", (err: Error) =>
        this.opts.logger.debug({ err: err.message }, "redis connection error"),
      );
    }
    this.#directory = new RedisDirectory(
      this.#commands,
      this.#keys,
      this.workerId,
      this.opts.closedRetentionMs,
    );
    this.#registry = new WorkerRegistry(this.#commands, this.#keys, this.opts.heartbeatMs);
    this.#bus = new CommandBus({
      commands: this.#commands,
      subscriber: this.#subscriber,
      keys: this.#keys,
      workerId: this.workerId,
      apply: (sessionId, command) => this.applyRemote(sessionId, command),
      applyWorker: (command) => this.applyWorker(command),
      logger: this.opts.logger,
    });
    this.#stream = new EventStream({
      commands: this.#commands,
      reader: this.#reader,
      keys: this.#keys,
      retention: this.opts.eventRetention,
      maxPending: positive("maxPendingEvents", options.maxPendingEvents ?? 10_000),
      blockMs: positive("readBlockMs", options.readBlockMs ?? 2000),
      onSessionLost: (event) => this.events.emit("session-lost", event),
      logger: this.opts.logger,
    });
    this.claims = new RedisOneTimeClaims(this.#commands, this.#keys.prefix);
    this.#settings = new RedisSettings({
      commands: this.#commands,
      subscriber: this.#subscriber,
      keys: this.#keys,
      fanout: this.settingChanges,
      logger: this.opts.logger,
    });
  }

  /** Shared settings, stored in Redis (docs/cluster.md, "Shared settings"). */
  get settings(): RedisSettings {
    return this.#settings;
  }

  /** The key prefix, for tools and tests that clean up after themselves. */
  get keyPrefix(): string {
    return this.#keys.prefix;
  }

  async start(signal?: AbortSignal): Promise<void> {
    if (this.state === "ready") return;
    this.assert("starting");
    signal?.throwIfAborted();
    try {
      await Promise.all([this.#commands.connect(), this.#subscriber.connect(), this.#reader.connect()]);
      await this.#bus.start();
      this.#subscribed = true;
      await this.#settings.start();
      await this.#stream.start();
      await this.#registry.publish(this.info());
    } catch (err) {
      this.#disconnectAll();
      this.setState("closed");
      throw directoryUnavailable("start the cluster coordinator", err);
    }
    if (signal?.aborted) {
      await this.close();
      signal.throwIfAborted();
    }
    this.#redisStatus = "ready";
    this.#commands.on("ready", () => this.#onReconnected());
    this.#commands.on("close", () => this.#setRedisStatus("reconnecting"));
    this.#subscriber.on("close", () => {
      this.#subscribed = false;
      this.#setRedisStatus("reconnecting");
    });
    this.#subscriber.on("ready", () => this.#onSubscriberReady());
    this.#every(this.opts.heartbeatMs, () => this.#registry.publish(this.info()));
    this.#every(this.opts.sweepIntervalMs, () => this.#directory.sweep());
    this.setState("ready");
    this.opts.logger.info(
      { workerId: this.workerId, roles: this.roles },
      "cluster coordinator ready (redis)",
    );
  }

  protected override async workerStateChanged(): Promise<void> {
    // Best effort now; the next heartbeat carries it if Redis is down, so drain never waits on Redis.
    if (this.#commands.status === "ready") await this.#registry.publish(this.info()).catch(() => undefined);
  }

  async listWorkers(signal?: AbortSignal): Promise<WorkerInfo[]> {
    signal?.throwIfAborted();
    this.assert("ready");
    if (this.#commands.status !== "ready") throw directoryUnavailable("list workers");
    return this.#registry.list();
  }

  async claim(sessionId: string, options: ClaimOptions = {}): Promise<SessionClaim> {
    const ttlSec = this.checkClaim(sessionId, options);
    if (this.leases.has(sessionId)) return { workerId: this.workerId, synced: true };
    this.#pendingReleases.delete(sessionId);
    let owner: string;
    try {
      // Not while the subscriber is away either: a lease written then sends other workers' commands to an owner
      // that cannot hear them (owner_unreachable) until it has re-subscribed.
      if (!this.#redisBack()) throw directoryUnavailable("claim");
      owner = await this.#directory.claim(sessionId, ttlSec);
    } catch {
      // The media is here either way: hold the lease locally, the keeper writes it when Redis is back.
      this.leases.add(sessionId, ttlSec);
      return { workerId: this.workerId, synced: false };
    }
    if (owner !== this.workerId) {
      throw new TalkError("invalid_state", `Session ${sessionId} is owned by worker ${owner}.`, {
        details: { workerId: owner },
      });
    }
    this.leases.add(sessionId, ttlSec);
    return { workerId: this.workerId, synced: true };
  }

  async locate(sessionId: string, signal?: AbortSignal): Promise<SessionLocation | undefined> {
    checkSessionId(sessionId);
    signal?.throwIfAborted();
    this.assert("ready");
    if (this.leases.has(sessionId)) return { workerId: this.workerId };
    if (this.#commands.status !== "ready") throw directoryUnavailable("locate a session");
    const workerId = await this.#directory.locate(sessionId).catch((err: unknown) => {
      throw directoryUnavailable("locate a session", err);
    });
    return workerId === undefined ? undefined : { workerId };
  }

  async release(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    if (!this.leases.remove(sessionId)) return;
    try {
      if (this.#commands.status !== "ready") throw directoryUnavailable("release");
      await this.#directory.release(sessionId);
    } catch {
      // Released when Redis is back; until then the lease would lapse into a false session-lost.
      this.#pendingReleases.add(sessionId);
    }
  }

  protected async sendRemote(
    sessionId: string,
    command: ParsedSessionCommand,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<CommandReply> {
    const owner = await this.locate(sessionId, signal);
    if (owner === undefined || owner.workerId === this.workerId) throw sessionNotFound(sessionId);
    return this.#bus.send(owner.workerId, sessionId, command, timeoutMs, signal);
  }

  protected sendWorkerRemote(
    workerId: string,
    command: ParsedWorkerCommand,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<CommandReply> {
    return this.#bus.sendWorker(workerId, command, timeoutMs, signal);
  }

  publishEvent(event: TalkEvent, line?: string): void {
    if (this.state !== "ready") return;
    this.#stream.publish(event, line);
  }

  protected subscribeBackend(sessionId: string, _afterSeq: number, ordered: OrderedListener): () => void {
    // The stream reads from the listener's lastSeq (replay, then live), again after a reconnect.
    return this.#stream.subscribe(sessionId, ordered);
  }

  protected redisStatus(): ReadyReport["detail"]["redis"] {
    return this.#redisBack() ? "ready" : "reconnecting";
  }

  protected renewLeases(leases: HeldLease[]): Promise<LostLease[]> {
    // Not while the subscriber is away: a lease written then names an owner that cannot hear commands.
    if (!this.#redisBack()) return Promise.reject(directoryUnavailable("renew leases"));
    return this.#directory.renew(leases);
  }

  protected async closeBackend(orderly: boolean, wasReady: boolean, held: HeldLease[]): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    if (orderly && wasReady && this.#commands.status === "ready") {
      const releases = [...held.map((l) => l.sessionId), ...this.#pendingReleases].map((id) =>
        this.#directory.release(id),
      );
      await Promise.allSettled([...releases, this.#registry.remove(this.workerId)]);
    }
    this.#bus.close();
    this.#settings.close();
    await this.#stream.close(orderly && wasReady);
    if (orderly) await Promise.allSettled([this.#commands.quit(), this.#subscriber.quit()]);
    this.#disconnectAll();
  }

  /** Both connections up and this worker's channels subscribed: what other workers may rely on. */
  #redisBack(): boolean {
    return this.#commands.status === "ready" && this.#subscribed;
  }

  /**
   * ioredis emits "ready" before it sends the subscriptions again (event_handler.js, readyHandler), so a PING
   * sent after that handler has run is answered after them: only then is this worker's command channel heard.
   */
  #onSubscriberReady(): void {
    setImmediate(() => {
      if (this.state !== "ready") return;
      this.#subscriber.ping().then(
        () => {
          this.#subscribed = true;
          this.#onReconnected();
        },
        () => undefined, // down again: the next "ready" tries again
      );
    });
  }

  /**
   * Redis is back (same server or a restarted one) on both connections: restore everything it should know about
   * us, changes announced while the subscriber was away read back from their hashes included.
   */
  #onReconnected(): void {
    if (this.state !== "ready" || !this.#redisBack()) return;
    this.#setRedisStatus("ready");
    void (async () => {
      await this.leases.renewNow();
      for (const sessionId of [...this.#pendingReleases]) {
        try {
          await this.#directory.release(sessionId);
          this.#pendingReleases.delete(sessionId);
        } catch {
          break; // down again: the next reconnect retries
        }
      }
      await this.#registry.publish(this.info()).catch(() => undefined);
      await this.#stream.flush();
      await this.#settings.resync();
    })();
  }

  #setRedisStatus(status: "ready" | "reconnecting"): void {
    if (this.#redisStatus === status || this.state !== "ready") return;
    this.#redisStatus = status;
    this.opts.logger.warn({ workerId: this.workerId, redis: status }, "cluster redis connection changed");
    this.events.emit("connection", { type: "connection", status, at: Date.now() });
  }

  #every(ms: number, task: () => Promise<unknown>): void {
    const timer = setInterval(() => {
      if (this.#commands.status !== "ready") return;
      task().catch((err: unknown) => this.opts.logger.debug({ err }, "cluster periodic task failed"));
    }, ms);
    timer.unref();
    this.#timers.push(timer);
  }

  #disconnectAll(): void {
    for (const conn of [this.#commands, this.#subscriber, this.#reader]) conn.disconnect();
  }
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new TalkError("config_invalid", `cluster: ${name} must be a positive integer.`);
  return value;
}
