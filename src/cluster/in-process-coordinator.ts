import type { TalkEvent } from "../core/index.js";
import type {
  ClaimOptions,
  CommandReply,
  Coordinator,
  ReadyReport,
  SessionClaim,
  SessionLocation,
  SessionLostEvent,
  WorkerInfo,
} from "./coordinator.js";
import { TalkError } from "../core/index.js";
import { CoordinatorBase } from "./coordinator-base.js";
import type { CoordinatorOptions } from "./coordinator-options.js";
import { InProcessHub } from "./in-process-hub.js";
import { InProcessSettings } from "./in-process-settings.js";
import type { OneTimeClaims } from "./one-time-claims.js";
import type { SharedSettings } from "./shared-settings.js";
import type { HeldLease, LostLease } from "./lease-keeper.js";
import type { OrderedListener } from "./ordered-listener.js";
import {
  checkSessionId,
  ownerUnreachable,
  type ParsedSessionCommand,
  sessionNotFound,
  withDeadline,
} from "./session-command.js";
import { type ParsedWorkerCommand, workerUnreachable } from "./worker-command.js";

export interface InProcessCoordinatorOptions extends CoordinatorOptions {
  /** Shared state of coordinators that should see each other (default: a private hub, i.e. one worker). */
  hub?: InProcessHub;
  /**
   * Where this worker's private hub persists shared settings (one
   * `<name>.json` each; e.g. `<dataDir>/settings`). Ignored with `hub`, which
   * has its own. Default: memory only.
   */
  settingsDir?: string;
}

/**
 * The embedded default: one process, no Redis. Same semantics as the Redis
 * coordinator (leases lapse, commands route to the owner, events replay from
 * a seq); several of them on one InProcessHub behave like several workers.
 */
export class InProcessCoordinator extends CoordinatorBase implements Coordinator {
  readonly backend = "in-process" as const;
  readonly #hub: InProcessHub;
  readonly settings: SharedSettings;
  readonly claims: OneTimeClaims;

  constructor(options: InProcessCoordinatorOptions = {}) {
    super(options);
    this.#hub =
      options.hub ??
      new InProcessHub(options.settingsDir !== undefined ? { settingsDir: options.settingsDir } : {});
    this.settings = new InProcessSettings(this.#hub.settings, this.settingChanges, this.opts.logger);
    this.claims = this.#hub.claims;
  }

  async start(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.state === "ready") return;
    this.assert("starting");
    this.#hub.attach({
      workerId: this.workerId,
      info: () => this.info(),
      deliver: (sessionId, command) => this.applyRemote(sessionId, command),
      deliverWorker: (command) => this.applyWorker(command),
      holds: (sessionId) => this.leases.has(sessionId),
      onSessionLost: (event) => this.#onSessionLost(event),
    });
    this.#hub.settings.attach(this.settingChanges);
    this.setState("ready");
  }

  async listWorkers(signal?: AbortSignal): Promise<WorkerInfo[]> {
    signal?.throwIfAborted();
    this.assert("ready");
    return this.#hub.workers();
  }

  async claim(sessionId: string, options: ClaimOptions = {}): Promise<SessionClaim> {
    const ttlSec = this.checkClaim(sessionId, options);
    const owner = this.#hub.claim(sessionId, this.workerId, ttlSec);
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
    const workerId = this.#hub.locate(sessionId);
    return workerId === undefined ? undefined : { workerId };
  }

  async release(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    if (!this.leases.remove(sessionId)) return;
    this.#hub.release(sessionId, this.workerId, this.opts.closedRetentionMs);
  }

  protected async sendRemote(
    sessionId: string,
    command: ParsedSessionCommand,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<CommandReply> {
    const ownerId = this.#hub.locate(sessionId);
    if (ownerId === undefined) throw sessionNotFound(sessionId);
    const owner = this.#hub.member(ownerId);
    if (!owner) throw ownerUnreachable(sessionId, `worker ${ownerId} is not connected`);
    return withDeadline(owner.deliver(sessionId, command), timeoutMs, sessionId, signal);
  }

  protected sendWorkerRemote(
    workerId: string,
    command: ParsedWorkerCommand,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<CommandReply> {
    const target = this.#hub.member(workerId);
    const unreachable = (why: string): TalkError => workerUnreachable(workerId, why);
    if (!target) throw unreachable(`worker ${workerId} is not connected`);
    return withDeadline(target.deliverWorker(command), timeoutMs, workerId, signal, unreachable);
  }

  publishEvent(event: TalkEvent, line?: string): void {
    if (this.state !== "ready") return;
    this.#hub.publish(
      event,
      {
        events: this.opts.eventRetention,
        bytes: this.opts.eventRetentionBytes,
        ageMs: this.opts.eventRetentionAgeMs,
      },
      line,
    );
  }

  protected subscribeBackend(sessionId: string, afterSeq: number, ordered: OrderedListener): () => void {
    // Delivered on a microtask, like the Redis path, so a listener never runs inside publishEvent.
    return this.#hub.subscribe(sessionId, afterSeq, (event) => queueMicrotask(() => ordered.deliver(event)));
  }

  protected redisStatus(): ReadyReport["detail"]["redis"] {
    return "n/a";
  }

  protected async renewLeases(leases: HeldLease[]): Promise<LostLease[]> {
    return this.#hub.renew(this.workerId, leases);
  }

  protected async closeBackend(orderly: boolean, _wasReady: boolean, held: HeldLease[]): Promise<void> {
    if (orderly) {
      for (const { sessionId } of held)
        this.#hub.release(sessionId, this.workerId, this.opts.closedRetentionMs);
    }
    this.#hub.detach(this.workerId);
    this.#hub.settings.detach(this.settingChanges);
  }

  #onSessionLost(event: SessionLostEvent): void {
    this.events.emit("session-lost", event);
  }
}
