import { TalkError } from "../core/errors.js";
import type { TalkLogger } from "../core/logger.js";
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
  SessionLostEvent,
  SubscribeEventsOptions,
  WorkerInfo,
  WorkerRole,
  WorkerState,
} from "./coordinator.js";
import { type CoordinatorOptions, type ResolvedCoordinatorOptions, resolveCoordinatorOptions } from "./coordinator-options.js";
import { CpuSampler } from "./cpu-sampler.js";
import { EventHub } from "./event-hub.js";
import { InProcessHub } from "./in-process-hub.js";
import { LeaseKeeper } from "./lease-keeper.js";
import { orderedListener } from "./ordered-listener.js";
import {
  applyCommand,
  checkSessionId,
  ownerUnreachable,
  sessionNotFound,
  unwrapReply,
  validateCommand,
  withDeadline,
} from "./session-command.js";

export interface InProcessCoordinatorOptions extends CoordinatorOptions {
  /** Shared state of coordinators that should see each other (default: a private hub, i.e. one worker). */
  hub?: InProcessHub;
}

/**
 * The embedded default: one process, no Redis. Same semantics as the Redis
 * coordinator (leases lapse, commands route to the owner, events replay from
 * a seq); several of them on one InProcessHub behave like several workers.
 */
export class InProcessCoordinator implements Coordinator {
  readonly backend = "in-process" as const;
  readonly #opts: ResolvedCoordinatorOptions;
  readonly #hub: InProcessHub;
  readonly #events: EventHub<CoordinatorEvents>;
  readonly #leases: LeaseKeeper;
  readonly #cpu = new CpuSampler();
  readonly #subscriptions = new Set<() => void>();
  readonly #startedAt = Date.now();
  #state: CoordinatorState = "starting";
  #workerState: WorkerState = "ready";
  #handler: SessionCommandHandler | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: InProcessCoordinatorOptions = {}) {
    this.#opts = resolveCoordinatorOptions(options);
    this.#hub = options.hub ?? new InProcessHub();
    this.#events = new EventHub(this.#opts.logger);
    this.#leases = new LeaseKeeper(
      {
        renew: async (leases) => this.#hub.renew(this.workerId, leases),
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
  get #logger(): TalkLogger {
    return this.#opts.logger;
  }

  async start(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.#state === "ready") return;
    this.#assert("starting");
    this.#hub.attach({
      workerId: this.workerId,
      info: () => this.#info(),
      deliver: (sessionId, command) => this.#deliver(sessionId, command),
      onSessionLost: (event) => this.#onSessionLost(event),
    });
    this.#state = "ready";
  }

  async setWorkerState(state: WorkerState): Promise<void> {
    this.#assert("ready");
    this.#workerState = state;
  }

  async listWorkers(signal?: AbortSignal): Promise<WorkerInfo[]> {
    signal?.throwIfAborted();
    this.#assert("ready");
    return this.#hub.workers();
  }

  async claim(sessionId: string, options: ClaimOptions = {}): Promise<SessionClaim> {
    checkSessionId(sessionId);
    options.signal?.throwIfAborted();
    this.#assert("ready");
    if (this.#workerState === "draining") {
      throw new TalkError("shutting_down", "This worker is draining and takes no new sessions.");
    }
    const ttlSec = options.ttlSec ?? this.#opts.leaseTtlSec;
    if (!Number.isInteger(ttlSec) || ttlSec < 1) throw new TalkError("invalid_params", "ttlSec must be a positive integer.");
    const owner = this.#hub.claim(sessionId, this.workerId, ttlSec);
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
    const workerId = this.#hub.locate(sessionId);
    return workerId === undefined ? undefined : { workerId };
  }

  async release(sessionId: string): Promise<void> {
    checkSessionId(sessionId);
    if (!this.#leases.remove(sessionId)) return;
    this.#hub.release(sessionId, this.workerId, this.#opts.closedRetentionMs);
  }

  owns(sessionId: string): boolean {
    return this.#leases.has(sessionId);
  }

  async sendCommand(sessionId: string, command: SessionCommand, options: SendCommandOptions = {}): Promise<unknown> {
    checkSessionId(sessionId);
    const checked = validateCommand(command);
    options.signal?.throwIfAborted();
    this.#assert("ready");
    if (this.#leases.has(sessionId)) return unwrapReply(await applyCommand(this.#handler, sessionId, checked), sessionId);
    const ownerId = this.#hub.locate(sessionId);
    if (ownerId === undefined) throw sessionNotFound(sessionId);
    const owner = this.#hub.member(ownerId);
    if (!owner) throw ownerUnreachable(sessionId, `worker ${ownerId} is not connected`);
    const timeoutMs = options.timeoutMs ?? this.#opts.commandTimeoutMs;
    const reply = await withDeadline(owner.deliver(sessionId, checked), timeoutMs, sessionId, options.signal);
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
    this.#hub.publish(event, this.#opts.eventRetention);
  }

  subscribeEvents(
    sessionId: string,
    afterSeq: number,
    listener: SessionEventListener,
    options: SubscribeEventsOptions = {},
  ): () => void {
    checkSessionId(sessionId);
    this.#assert("ready");
    const ordered = orderedListener(afterSeq, listener, this.#logger);
    // Delivered on a microtask, like the Redis path, so a listener never runs inside publishEvent.
    const offHub = this.#hub.subscribe(sessionId, afterSeq, (event) => queueMicrotask(() => ordered.deliver(event)));
    const onAbort = (): void => unsubscribe();
    const unsubscribe = (): void => {
      offHub();
      options.signal?.removeEventListener("abort", onAbort);
      this.#subscriptions.delete(unsubscribe);
    };
    if (options.signal?.aborted) {
      offHub();
      return () => {};
    }
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
        redis: "n/a",
        sessions: this.#leases.size,
      },
    };
  }

  close(): Promise<void> {
    this.#closing ??= this.#close(true);
    return this.#closing;
  }

  /**
   * Stops as if the process died: no release, no deregistration, renewals
   * stop. Other workers see the leases lapse. For tests and fault injection.
   */
  crash(): Promise<void> {
    this.#closing ??= this.#close(false);
    return this.#closing;
  }

  async #close(orderly: boolean): Promise<void> {
    this.#state = "closing";
    const held = this.#leases.leases();
    this.#leases.close();
    for (const unsubscribe of [...this.#subscriptions]) unsubscribe();
    if (orderly) {
      for (const { sessionId } of held) this.#hub.release(sessionId, this.workerId, this.#opts.closedRetentionMs);
    }
    this.#hub.detach(this.workerId);
    this.#handler = undefined;
    this.#events.clear();
    this.#state = "closed";
  }

  async #deliver(sessionId: string, command: SessionCommand): Promise<CommandReply> {
    if (!this.#leases.has(sessionId)) return { ok: false, error: { code: "session_not_found", message: `No session ${sessionId} here.` } };
    return applyCommand(this.#handler, sessionId, command);
  }

  #onSessionLost(event: SessionLostEvent): void {
    this.#events.emit("session-lost", event);
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
    if (this.#state !== state) {
      throw new TalkError("invalid_state", `The coordinator is ${this.#state}, not ${state}.`);
    }
  }
}
