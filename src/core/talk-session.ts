import { randomUUID } from "node:crypto";
import { cancelReason } from "./abortable.js";
import { TalkError } from "./errors.js";
import type { CorrelationState } from "./event-sequencer.js";
import { JoinTokenStore } from "./join-token-store.js";
import type { TalkLogger } from "./logger.js";
import { SessionEventChannel, type SessionEventSinks } from "./session-event-channel.js";
import type {
  CreateSessionOptions,
  SessionProviders,
  StartTurnOptions,
  TalkCapture,
  TalkEventListener,
  TalkOutput,
  TalkSession,
  TalkSessionState,
  TalkSessionStats,
  TalkTurn,
  TalkWorkKind,
} from "./session-types.js";
import { WorkRegistry } from "./work-registry.js";
import type {
  TalkEvent,
  TalkEventInitOf,
  TalkEventOf,
  TalkEventType,
  TerminalReason,
  TurnCancelledPayload,
} from "./talk-events.js";
import type { TalkBrain, TalkMode, TalkSessionOwner, TalkTransport } from "./talk-types.js";
import { OutputRecord, RecentIds, TurnRecord } from "./talk-turn.js";

/** Where a session's events go besides its own subscribers. Narrow on purpose: no back-reference to the runtime. */
export interface TalkSessionHooks extends SessionEventSinks {
  /** Called once, after session.closed was delivered. */
  onClosed?: () => void;
}

export interface LiveTalkSessionOptions extends CreateSessionOptions {
  id: string;
  replayLimit: number;
  /** Serialized bytes of events kept for replay (default: no byte bound). */
  replayMaxBytes?: number;
  /** Events older than this leave the replay ring beyond its newest 100, ms (0 or absent: no age bound). */
  replayMaxAgeMs?: number;
  closeGraceMs: number;
  logger: TalkLogger;
  hooks?: TalkSessionHooks;
}

/** Lifecycle events only the session emits, so "exactly one terminal event" holds. */
const RESERVED_TYPES: ReadonlySet<string> = new Set([
  "session.created",
  "session.closed",
  "turn.started",
  "turn.ended",
  "turn.cancelled",
  "capture.started",
  "capture.stopped",
  "output.audio.cancelled",
]);

/** The TalkSession implementation; created by the runtime (session-runtime.ts). */
export class LiveTalkSession implements TalkSession {
  readonly id: string;
  readonly mode: TalkMode;
  readonly transport: TalkTransport;
  readonly brain: TalkBrain;
  readonly owner: TalkSessionOwner;
  readonly provider: string | undefined;
  readonly providers?: SessionProviders;
  readonly metadata: Readonly<Record<string, string>>;
  readonly createdAt = Date.now();

  readonly #controller = new AbortController();
  readonly #events: SessionEventChannel;
  readonly #tokens = new JoinTokenStore();
  readonly #work = new WorkRegistry();
  readonly #cancelledTurns = new RecentIds(64);
  readonly #cancelledItems = new RecentIds(256);
  readonly #logger: TalkLogger;
  readonly #hooks: TalkSessionHooks;
  readonly #closeGraceMs: number;
  readonly #correlation: CorrelationState;
  #state: TalkSessionState = "active";
  #turn: TurnRecord | undefined;
  #capture: TalkCapture | undefined;
  #output: OutputRecord | undefined;
  #droppedClosed = 0;
  #closePromise: Promise<void> | undefined;

  constructor(options: LiveTalkSessionOptions) {
    this.id = options.id;
    this.mode = options.mode;
    this.transport = options.transport;
    this.brain = options.brain;
    this.owner = options.owner;
    this.provider = options.provider;
    if (options.providers) this.providers = Object.freeze({ ...options.providers });
    this.metadata = Object.freeze({ ...(options.metadata ?? {}) });
    this.#logger = options.logger;
    this.#hooks = options.hooks ?? {};
    this.#closeGraceMs = options.closeGraceMs;
    this.#events = new SessionEventChannel(options);
    this.#correlation = {
      activeCaptureId: undefined,
      activeCaptureTurnId: undefined,
      acceptsOutput: (turnId) => this.#turn?.id === turnId,
      isCancelledItem: (itemId) => this.#cancelledItems.has(itemId),
    };
    // The capture fields are live views of this session's state.
    Object.defineProperties(this.#correlation, {
      activeCaptureId: { get: () => this.#capture?.id },
      activeCaptureTurnId: { get: () => this.#capture?.turnId },
    });
    this.#publish({
      type: "session.created",
      payload: {
        owner: this.owner,
        metadata: this.metadata,
        ...(this.providers ? { providers: this.providers } : {}),
        ...(options.inputFormat ? { inputFormat: options.inputFormat } : {}),
        ...(options.outputFormat ? { outputFormat: options.outputFormat } : {}),
      },
    });
  }

  get state(): TalkSessionState {
    return this.#state;
  }
  get signal(): AbortSignal {
    return this.#controller.signal;
  }
  get activeTurn(): TalkTurn | undefined {
    return this.#turn;
  }
  get activeCapture(): TalkCapture | undefined {
    return this.#capture;
  }
  get activeOutput(): TalkOutput | undefined {
    return this.#output;
  }
  get lastSeq(): number {
    return this.#events.lastSeq;
  }
  get stats(): TalkSessionStats {
    return {
      events: this.#events.lastSeq,
      droppedStale: this.#events.droppedStale,
      droppedClosed: this.#droppedClosed,
      pendingWork: this.#work.size,
    };
  }

  emit<T extends TalkEventType>(init: TalkEventInitOf<T>): TalkEventOf<T> | undefined {
    if (RESERVED_TYPES.has(init.type)) {
      throw new TalkError("invalid_params", `"${init.type}" is emitted by the session itself; use its verb.`);
    }
    if (this.#state === "closed") {
      // Work winding down after close may still report; it has nowhere to go.
      this.#droppedClosed += 1;
      return undefined;
    }
    return this.#publish(init);
  }

  startTurn(options: StartTurnOptions = {}): TalkTurn {
    this.#assertOpen("startTurn");
    const previous = this.#turn;
    if (previous?.state === "active") {
      throw new TalkError("turn_already_active", undefined, { details: { turnId: previous.id } });
    }
    if (previous) {
      this.#retireTurn(previous, options.reason ?? "superseded");
      // Ended quietly (nothing of it running) or cancelled: either way the session no longer holds a link to it.
      previous.unlink();
    }
    const turn = new TurnRecord(randomUUID(), this.id, this.#controller.signal, Date.now());
    this.#turn = turn;
    this.#publish({
      type: "turn.started",
      turnId: turn.id,
      payload: options.source !== undefined ? { source: options.source } : {},
      ...(options.source !== undefined ? { source: options.source } : {}),
    });
    return turn;
  }

  ensureTurn(options: StartTurnOptions = {}): TalkTurn {
    this.#assertOpen("ensureTurn");
    if (this.#turn?.state === "active") return this.#turn;
    return this.startTurn(options);
  }

  endTurn(turnId: string): void {
    this.#assertOpen("endTurn");
    const turn = this.#turn;
    // Every check happens before any mutation: a stale endTurn must not clear the live turn.
    if (!turn) throw new TalkError("no_active_turn", undefined, { details: { turnId } });
    if (turn.id !== turnId)
      throw new TalkError("stale_turn", undefined, { details: { turnId, activeTurnId: turn.id } });
    if (turn.state !== "active") throw new TalkError("invalid_state", `Turn ${turnId} has already ended.`);
    this.stopCapture();
    turn.state = "ending";
    this.#publish({ type: "turn.ended", turnId, payload: { reason: "completed" } });
  }

  cancelTurn(turnId: string | undefined, reason: TerminalReason): boolean {
    if (this.#state === "closed")
      throw new TalkError("session_closed", undefined, { details: { sessionId: this.id } });
    if (this.#state === "closing") return false; // close is already cancelling everything
    const turn = this.#resolveTurnForCancel(turnId);
    if (!turn) return false;
    this.#cancelTurn(turn, reason);
    return true;
  }

  cancelOutput(turnId: string | undefined, reason: TerminalReason): boolean {
    if (this.#state === "closed")
      throw new TalkError("session_closed", undefined, { details: { sessionId: this.id } });
    if (this.#state === "closing") return false;
    if (turnId !== undefined && !this.#resolveTurnForCancel(turnId)) return false;
    const output = this.#output;
    if (!output) return false;
    this.#output = undefined;
    const turn = this.#turn;
    if (turn) turn.lastOutputCancelled = true;
    this.#cancelledItems.add(output.itemId);
    this.#publish({
      type: "output.audio.cancelled",
      turnId: output.turnId,
      itemId: output.itemId,
      payload: { reason },
    });
    output.controller.abort(cancelReason(String(reason)));
    return true;
  }

  interruptOutput(reason: TerminalReason): boolean {
    if (this.#state !== "active") return false;
    const output = this.#output;
    if (!output) return false;
    const turn = this.#turn;
    // The turn goes on while its agent, tool or provider response runs; its output's synthesis and
    // playout, and a recognizer hearing the speech over that output (it runs in the answer's turn), do not.
    const otherWork =
      turn?.id === output.turnId &&
      this.#work
        .kindsFor(turn.id)
        .some((kind) => kind !== "tts" && kind !== "output-stream" && kind !== "stt");
    if (turn && otherWork) {
      this.#cancelTurn(turn, reason);
      return true;
    }
    return this.cancelOutput(output.turnId, reason);
  }

  startCapture(turnId?: string): TalkCapture {
    this.#assertOpen("startCapture");
    const turn = this.#requireCurrentTurn(turnId);
    if (turn.state !== "active")
      throw new TalkError("invalid_state", `Turn ${turn.id} has ended; capture needs an active turn.`);
    if (this.#capture?.turnId === turn.id) return this.#capture;
    this.stopCapture();
    const capture: TalkCapture = Object.freeze({ id: randomUUID(), turnId: turn.id, startedAt: Date.now() });
    this.#capture = capture;
    this.#publish({ type: "capture.started", turnId: turn.id, captureId: capture.id, payload: {} });
    return capture;
  }

  stopCapture(): void {
    const capture = this.#capture;
    if (!capture || this.#state === "closed") return;
    this.#publish({ type: "capture.stopped", turnId: capture.turnId, captureId: capture.id, payload: {} });
    this.#capture = undefined;
  }

  beginOutput(options: { itemId?: string; turnId?: string } = {}): TalkOutput {
    this.#assertOpen("beginOutput");
    const turn = this.#requireCurrentTurn(options.turnId);
    const itemId = options.itemId ?? randomUUID();
    if (this.#output?.itemId === itemId) return this.#output;
    const output = new OutputRecord(turn, itemId, Date.now());
    this.#output = output;
    turn.lastOutputCancelled = false;
    return output;
  }

  endOutput(itemId?: string): void {
    if (this.#output && (itemId === undefined || itemId === this.#output.itemId)) this.#output = undefined;
  }

  runWork<T>(
    kind: TalkWorkKind,
    work: (signal: AbortSignal) => Promise<T>,
    options: { turnId?: string; scope?: "turn" | "output" } = {},
  ): Promise<T> {
    let signal: AbortSignal;
    let turnId: string | undefined;
    try {
      this.#assertOpen("runWork");
      signal = this.#signalForWork(options.turnId, options.scope ?? "turn");
      turnId = options.turnId ?? this.#turn?.id;
    } catch (err) {
      return Promise.reject(err);
    }
    return this.#work.run(kind, turnId, signal, work);
  }

  replay(afterSeq: number): { events: TalkEvent[]; complete: boolean } {
    return this.#events.replay(afterSeq);
  }

  subscribe(listener: TalkEventListener): () => void {
    return this.#events.subscribe(listener);
  }

  issueJoinToken(): string {
    this.#assertOpen("issueJoinToken");
    return this.#tokens.issue();
  }

  verifyJoinToken(token: string): boolean {
    return this.#state === "active" && this.#tokens.verify(token);
  }

  revokeJoinTokens(): void {
    this.#tokens.revoke();
  }

  close(reason: TerminalReason, message?: string): Promise<void> {
    if (this.#closePromise) return this.#closePromise;
    // Set before #close runs: an abort listener that calls close() from inside it gets this promise, not a second close.
    let settle!: { resolve: () => void; reject: (err: unknown) => void };
    this.#closePromise = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
    this.#close(reason, message).then(settle.resolve, settle.reject);
    return this.#closePromise;
  }

  toJSON(): Record<string, unknown> {
    return {
      id: this.id,
      mode: this.mode,
      transport: this.transport,
      brain: this.brain,
      owner: this.owner,
      provider: this.provider,
      state: this.#state,
      lastSeq: this.lastSeq,
      activeTurn: this.#turn?.toJSON(),
      activeCapture: this.#capture,
      activeOutput: this.#output?.toJSON(),
    };
  }

  async #close(reason: TerminalReason, message: string | undefined): Promise<void> {
    this.#state = "closing";
    this.#tokens.revoke();
    const turn = this.#turn;
    if (turn) this.#retireTurn(turn, reason);
    this.#controller.abort(cancelReason(String(reason), message));
    const stuck = await this.#work.settle(this.#closeGraceMs);
    if (stuck.length > 0) {
      this.#logger.warn(
        { sessionId: this.id, kinds: stuck },
        "work ignored its abort signal past the close grace period",
      );
    }
    try {
      this.#publish({
        type: "session.closed",
        payload: { reason, ...(message !== undefined ? { message } : {}) },
      });
    } catch (err) {
      this.#logger.error({ err, sessionId: this.id }, "session.closed could not be emitted");
    }
    this.#state = "closed";
    this.#events.close();
    try {
      this.#hooks.onClosed?.();
    } catch (err) {
      this.#logger.error({ err, sessionId: this.id }, "onClosed hook failed");
    }
  }

  /** Ends a turn that is being left behind: cancelled if anything of it is still running, else quietly ended. */
  #retireTurn(turn: TurnRecord, reason: TerminalReason): void {
    const busy =
      turn.state === "active" || this.#output?.turnId === turn.id || this.#work.hasWorkFor(turn.id);
    if (busy) {
      this.#cancelTurn(turn, reason);
      return;
    }
    turn.state = "ended";
    if (this.#turn === turn) this.#turn = undefined;
  }

  #cancelTurn(turn: TurnRecord, reason: TerminalReason): void {
    const aborted = new Set<string>(this.#work.kindsFor(turn.id));
    if (this.#output?.turnId === turn.id) {
      aborted.add("output");
      this.#cancelledItems.add(this.#output.itemId);
      this.#output = undefined;
    }
    if (this.#capture?.turnId === turn.id) {
      aborted.add("capture");
      this.#capture = undefined;
    }
    // State first, so anything the abort triggers already sees the turn as stale.
    turn.state = "cancelled";
    if (this.#turn === turn) this.#turn = undefined;
    this.#cancelledTurns.add(turn.id);
    const payload: TurnCancelledPayload = { reason, aborted: [...aborted] };
    this.#publish({ type: "turn.cancelled", turnId: turn.id, payload });
    turn.controller.abort(cancelReason(String(reason)));
  }

  #resolveTurnForCancel(turnId: string | undefined): TurnRecord | undefined {
    if (turnId === undefined || this.#turn?.id === turnId) return this.#turn;
    if (this.#cancelledTurns.has(turnId)) return undefined;
    throw new TalkError("stale_turn", undefined, { details: { turnId, activeTurnId: this.#turn?.id } });
  }

  #requireCurrentTurn(turnId: string | undefined): TurnRecord {
    const turn = this.#turn;
    if (!turn) throw new TalkError("no_active_turn");
    if (turnId !== undefined && turnId !== turn.id) {
      throw new TalkError("stale_turn", undefined, { details: { turnId, activeTurnId: turn.id } });
    }
    return turn;
  }

  #signalForWork(turnId: string | undefined, scope: "turn" | "output"): AbortSignal {
    if (turnId !== undefined && this.#cancelledTurns.has(turnId)) {
      throw new TalkError("cancelled", `Turn ${turnId} was cancelled; its work does not start.`);
    }
    if (turnId === undefined && !this.#turn) {
      if (scope === "output")
        throw new TalkError("invalid_state", "Output-scoped work needs an active output.");
      return this.#controller.signal; // session-scoped work, e.g. a provider connection
    }
    const turn = this.#requireCurrentTurn(turnId);
    if (scope === "turn") return turn.signal;
    if (this.#output?.turnId === turn.id) return this.#output.signal;
    if (turn.lastOutputCancelled)
      throw new TalkError("cancelled", "The turn's output was cancelled; its work does not start.");
    throw new TalkError("invalid_state", "Output-scoped work needs an active output (beginOutput).");
  }

  #assertOpen(verb: string): void {
    if (this.#state !== "active") {
      throw new TalkError("session_closed", `Cannot ${verb}: the session is ${this.#state}.`, {
        details: { sessionId: this.id },
      });
    }
  }

  #publish<T extends TalkEventType>(init: TalkEventInitOf<T>): TalkEventOf<T> | undefined {
    return this.#events.publish(init, this.#correlation);
  }
}
