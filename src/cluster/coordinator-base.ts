import { TalkError } from "../core/index.js";
import type {
  ClaimOptions,
  CommandReply,
  CoordinatorEvents,
  CoordinatorState,
  ReadyReport,
  SendCommandOptions,
  SessionCommandHandler,
  SessionCommandOf,
  SessionCommandResult,
  SessionCommandVerb,
  SessionEventListener,
  SubscribeEventsOptions,
  WorkerInfo,
  WorkerRole,
  WorkerState,
} from "./coordinator.js";
import {
  type CoordinatorOptions,
  type ResolvedCoordinatorOptions,
  resolveCoordinatorOptions,
} from "./coordinator-options.js";
import { CpuSampler } from "./cpu-sampler.js";
import { EventHub } from "./event-hub.js";
import { type HeldLease, LeaseKeeper, type LostLease } from "./lease-keeper.js";
import { orderedListener, type OrderedListener } from "./ordered-listener.js";
import {
  applyCommand,
  checkSessionId,
  commandCancelled,
  type ParsedSessionCommand,
  parseSessionCommand,
  unwrapReply,
} from "./session-command.js";
import { SettingFanout } from "./shared-settings.js";
import {
  applyWorkerCommand,
  checkWorkerId,
  type ParsedWorkerCommand,
  parseWorkerCommand,
  type WorkerCommandHandlers,
  type WorkerCommandOf,
  type WorkerCommandResult,
  type WorkerCommandVerb,
} from "./worker-command.js";

/**
 * The worker-local half both coordinators share: resolved options, the
 * lifecycle state, owned leases, the one command handler, event
 * subscriptions, notifications and the delivery of setting changes. A backend adds the directory, command
 * routing and event fan-out, and its own part of close.
 */
export abstract class CoordinatorBase {
  abstract readonly backend: ReadyReport["detail"]["backend"];
  protected readonly opts: ResolvedCoordinatorOptions;
  protected readonly events: EventHub<CoordinatorEvents>;
  protected readonly leases: LeaseKeeper;
  /** This worker's delivery of shared-setting changes (each revision once); the backend feeds it. */
  protected readonly settingChanges: SettingFanout;
  readonly #cpu = new CpuSampler();
  readonly #subscriptions = new Set<() => void>();
  readonly #startedAt = Date.now();
  #state: CoordinatorState = "starting";
  #workerState: WorkerState = "ready";
  #handler: SessionCommandHandler | undefined;
  /** Each verb's handler, installed by whichever layer answers it (ops, telephony...). */
  #workerHandlers: Partial<WorkerCommandHandlers> = {};
  #closing: Promise<void> | undefined;

  constructor(options: CoordinatorOptions) {
    this.opts = resolveCoordinatorOptions(options);
    this.events = new EventHub(this.opts.logger);
    this.settingChanges = new SettingFanout(this.opts.logger);
    this.leases = new LeaseKeeper(
      {
        renew: (leases) => this.renewLeases(leases),
        onLost: (lost) => this.events.emit("lease-lost", { type: "lease-lost", ...lost, at: Date.now() }),
        logger: this.opts.logger,
      },
      this.opts.leaseTtlSec,
    );
  }

  get workerId(): string {
    return this.opts.workerId;
  }
  get roles(): readonly WorkerRole[] {
    return this.opts.roles;
  }
  get state(): CoordinatorState {
    return this.#state;
  }
  get workerState(): WorkerState {
    return this.#workerState;
  }
  get ownedSessions(): number {
    return this.leases.size;
  }

  async setWorkerState(state: WorkerState): Promise<void> {
    this.assert("ready");
    this.#workerState = state;
    await this.workerStateChanged();
  }

  onCommand(handler: SessionCommandHandler): () => void {
    if (this.#handler) throw new TalkError("invalid_state", "A command handler is already installed.");
    this.#handler = handler;
    return () => {
      if (this.#handler === handler) this.#handler = undefined;
    };
  }

  onWorkerCommand(handlers: Partial<WorkerCommandHandlers>): () => void {
    const verbs = Object.keys(handlers) as WorkerCommandVerb[];
    const taken = verbs.filter((verb) => this.#workerHandlers[verb]);
    if (taken.length > 0)
      throw new TalkError(
        "invalid_state",
        `Worker command handlers are already installed for ${taken.join(", ")}.`,
      );
    const installed = this.#workerHandlers as Record<WorkerCommandVerb, unknown>;
    for (const verb of verbs) installed[verb] = handlers[verb];
    return () => {
      for (const verb of verbs) if (installed[verb] === handlers[verb]) delete installed[verb];
    };
  }

  /** The sender's side of the worker command table: parsed here, applied directly when addressed to this worker. */
  async sendWorkerCommand<V extends WorkerCommandVerb>(
    workerId: string,
    command: WorkerCommandOf<V>,
    options: SendCommandOptions = {},
  ): Promise<WorkerCommandResult<V>> {
    checkWorkerId(workerId);
    const checked = parseWorkerCommand(command);
    const { signal } = options;
    if (signal?.aborted) throw commandCancelled(signal);
    this.assert("ready");
    const reply =
      workerId === this.workerId
        ? await this.applyWorker(checked)
        : await this.sendWorkerRemote(
            workerId,
            checked,
            options.timeoutMs ?? this.opts.commandTimeoutMs,
            signal,
          );
    return unwrapReply(reply, workerId) as WorkerCommandResult<V>;
  }

  on<K extends keyof CoordinatorEvents>(
    type: K,
    listener: (event: CoordinatorEvents[K]) => void,
  ): () => void {
    return this.events.on(type, listener);
  }

  ready(): ReadyReport {
    return {
      ok: this.#state === "ready" && this.#workerState === "ready",
      detail: {
        state: this.#state,
        workerId: this.workerId,
        workerState: this.#workerState,
        backend: this.backend,
        redis: this.redisStatus(),
        sessions: this.leases.size,
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

  owns(sessionId: string): boolean {
    return this.leases.has(sessionId);
  }

  /**
   * The sender's side of the command table: the command is parsed against it
   * here, so a bad one never travels; the result is typed by its verb.
   */
  async sendCommand<V extends SessionCommandVerb>(
    sessionId: string,
    command: SessionCommandOf<V>,
    options: SendCommandOptions = {},
  ): Promise<SessionCommandResult<V>> {
    checkSessionId(sessionId);
    const checked = parseSessionCommand(command);
    const { signal } = options;
    if (signal?.aborted) throw commandCancelled(signal);
    this.assert("ready");
    // A session owned here is commanded directly: no backend, so it works during a Redis outage too.
    const reply = this.leases.has(sessionId)
      ? await this.applyLocal(sessionId, checked)
      : await this.sendRemote(sessionId, checked, options.timeoutMs ?? this.opts.commandTimeoutMs, signal);
    return unwrapReply(reply, sessionId) as SessionCommandResult<V>;
  }

  subscribeEvents(
    sessionId: string,
    afterSeq: number,
    listener: SessionEventListener,
    options: SubscribeEventsOptions = {},
  ): () => void {
    checkSessionId(sessionId);
    if (!Number.isInteger(afterSeq) || afterSeq < 0)
      throw new TalkError("invalid_params", "afterSeq must be a non-negative integer.");
    this.assert("ready");
    if (options.signal?.aborted) return () => {};
    const ordered = orderedListener(afterSeq, listener, this.opts.logger);
    return this.track(this.subscribeBackend(sessionId, afterSeq, ordered), options.signal);
  }

  /** Sends a checked command to the worker that owns a session not held here; throws when none does. */
  protected abstract sendRemote(
    sessionId: string,
    command: ParsedSessionCommand,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<CommandReply>;
  /** Sends a checked worker command to another worker. */
  protected abstract sendWorkerRemote(
    workerId: string,
    command: ParsedWorkerCommand,
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<CommandReply>;
  /**
   * Delivers a session's events after `afterSeq` (replay, then live) to `ordered`, which drops repeats and
   * keeps seq order; returns the unsubscription.
   */
  protected abstract subscribeBackend(
    sessionId: string,
    afterSeq: number,
    ordered: OrderedListener,
  ): () => void;

  /** Renews (or re-writes) every held lease in the backend; returns those lost. */
  protected abstract renewLeases(leases: HeldLease[]): Promise<LostLease[]>;
  /** The backend's part of close, after leases and subscriptions stopped; `held` were owned until now. */
  protected abstract closeBackend(orderly: boolean, wasReady: boolean, held: HeldLease[]): Promise<void>;
  /** Redis connectivity for ready(); "n/a" without Redis. */
  protected abstract redisStatus(): ReadyReport["detail"]["redis"];

  /** Called after setWorkerState changed the state (default: nothing to tell). */
  protected async workerStateChanged(): Promise<void> {}

  protected setState(state: CoordinatorState): void {
    this.#state = state;
  }

  /** Checks a claim that may proceed here (ready, not draining); returns its TTL. */
  protected checkClaim(sessionId: string, options: ClaimOptions): number {
    checkSessionId(sessionId);
    options.signal?.throwIfAborted();
    this.assert("ready");
    if (this.#workerState === "draining") {
      throw new TalkError("shutting_down", "This worker is draining and takes no new sessions.");
    }
    const ttlSec = options.ttlSec ?? this.opts.leaseTtlSec;
    if (!Number.isInteger(ttlSec) || ttlSec < 1)
      throw new TalkError("invalid_params", "ttlSec must be a positive integer.");
    return ttlSec;
  }

  /** Runs a command on a session owned here through the installed handler (parsed again, as received). */
  protected applyLocal(sessionId: string, command: unknown): Promise<CommandReply> {
    return applyCommand(this.#handler, sessionId, command, this.opts.logger);
  }

  /** A worker command addressed to this worker, as received (parsed again). Never throws. */
  protected applyWorker(command: unknown): Promise<CommandReply> {
    return applyWorkerCommand(this.#workerHandlers, command, this.opts.logger);
  }

  /**
   * A command that reached this worker from another, as received (not
   * trusted): parsed against the table and applied when the session is still
   * ours, refused otherwise. Never throws.
   */
  protected applyRemote(sessionId: string, command: unknown): Promise<CommandReply> {
    if (!this.leases.has(sessionId))
      return Promise.resolve({
        ok: false,
        error: {
          code: "session_not_found",
          message: `Worker ${this.workerId} does not own session ${String(sessionId).slice(0, 256)}.`,
        },
      });
    return this.applyLocal(sessionId, command);
  }

  /** Keeps a subscription until it is removed, `signal` aborts, or the coordinator closes; returns its removal. */
  protected track(off: () => void, signal: AbortSignal | undefined): () => void {
    const onAbort = (): void => unsubscribe();
    const unsubscribe = (): void => {
      off();
      signal?.removeEventListener("abort", onAbort);
      this.#subscriptions.delete(unsubscribe);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    this.#subscriptions.add(unsubscribe);
    return unsubscribe;
  }

  protected info(): WorkerInfo {
    return {
      id: this.workerId,
      roles: this.roles,
      state: this.#workerState,
      load: { sessions: this.leases.size, cpu: this.#cpu.sample() },
      maxSessions: this.opts.maxSessions,
      heartbeatAt: Date.now(),
      startedAt: this.#startedAt,
    };
  }

  protected assert(state: CoordinatorState): void {
    if (this.#state !== state)
      throw new TalkError("invalid_state", `The coordinator is ${this.#state}, not ${state}.`);
  }

  async #close(orderly: boolean): Promise<void> {
    const wasReady = this.#state === "ready";
    this.#state = "closing";
    const held = this.leases.leases();
    this.leases.close();
    for (const unsubscribe of [...this.#subscriptions]) unsubscribe();
    await this.closeBackend(orderly, wasReady, held);
    this.#handler = undefined;
    this.#workerHandlers = {};
    this.events.clear();
    this.settingChanges.clear();
    this.#state = "closed";
  }
}
