import { randomUUID } from "node:crypto";
import { cancelReason, cancelledError, runAbortable } from "./abortable.js";
import { TalkError, toTalkError } from "./errors.js";
import { KeyedSemaphore } from "./keyed-semaphore.js";
import { NOOP_LOGGER } from "./logger.js";
import type { TalkLogger } from "./logger.js";
import type { TalkSession } from "./session-types.js";
import type { ToolPolicy } from "./tool-policy.js";
import { parseToolArguments } from "./tool-registry.js";
import type { RealtimeToolDefinition } from "./provider-types.js";
import { parseClientTools } from "./tools/client-tools.js";
import type { ToolRegistry } from "./tool-registry.js";

export interface ToolCallRequest {
  name: string;
  argumentsJson: string;
  /** The provider's call id; generated when absent. Unique among the session's open calls. */
  callId?: string;
  /** Defaults to the session's current turn. */
  turnId?: string;
  /** Provider item that carried the call. */
  itemId?: string;
  /** What the call belongs to (a realtime provider's response id): `parentId` of its tool.* events. */
  parentId?: string;
  provider?: string;
  /** Aborts this call alone (e.g. the requesting connection's signal), beside its turn's signal. */
  signal?: AbortSignal;
  /**
   * Runs beside the session's other parallel calls instead of queueing behind
   * its ordered ones (client-owned sessions: each call is the provider's own
   * request), at most maxParallelPerSession at once (`rate_limited` beyond).
   */
  parallel?: boolean;
}

/** How a call ended. Tool failures are outcomes, not exceptions: the model needs the error text. */
export type ToolCallOutcome =
  { ok: true; callId: string; output: string } | { ok: false; callId: string; error: TalkError };

export interface ToolDispatcherOptions {
  registry: ToolRegistry;
  /** The policy, or how to pick one per session; evaluated for every call. */
  policy: ToolPolicy | ((session: TalkSession) => ToolPolicy);
  /** Server-run tools of one session running at once; later calls queue in order (default 1, so side effects keep their order). */
  maxConcurrentPerSession?: number;
  /** Parallel calls (request.parallel) of one session running at once; one more is rate_limited (default 4). */
  maxParallelPerSession?: number;
  /** How long awaitToolResult waits for a client's submitToolResult, ms (default 120 000). */
  clientResultTimeoutMs?: number;
  logger?: TalkLogger;
}

interface OpenCall {
  sessionId: string;
  turnId: string;
  /** Aborts this call alone (cancelCall). */
  controller: AbortController;
  /** Set for calls a client completes; absent for server-run tools. */
  complete?: (output: string) => void;
}

const callKey = (sessionId: string, callId: string): string => `${sessionId}\u0000${callId}`;

function reasonOf(signal: AbortSignal | undefined): string {
  const reason: unknown = signal?.reason;
  if (reason instanceof TalkError && typeof reason.details?.["reason"] === "string")
    return reason.details["reason"];
  return "cancelled";
}

/**
 * The one tool dispatch path (seed 003): provider-native calls, client
 * toolCall requests and relay calls completed by a client all go through
 * here. Each call emits `tool.call`, is checked against policy, runs under
 * its turn's signal via session.runWork, and ends with exactly one of
 * `tool.result`, `tool.error` or `tool.cancelled`.
 */
export class ToolDispatcher {
  readonly #registry: ToolRegistry;
  readonly #policyFor: (session: TalkSession) => ToolPolicy;
  readonly #slots: KeyedSemaphore;
  readonly #clientTimeoutMs: number;
  readonly #logger: TalkLogger;
  readonly #open = new Map<string, OpenCall>();
  readonly #parallelLimit: number;
  readonly #parallel = new Map<string, number>();

  constructor(options: ToolDispatcherOptions) {
    const limit = options.maxConcurrentPerSession ?? 1;
    const timeout = options.clientResultTimeoutMs ?? 120_000;
    const parallel = options.maxParallelPerSession ?? 4;
    if (!Number.isInteger(limit) || limit < 1)
      throw new TalkError("config_invalid", "maxConcurrentPerSession must be a positive integer.");
    if (!Number.isInteger(parallel) || parallel < 1)
      throw new TalkError("config_invalid", "maxParallelPerSession must be a positive integer.");
    this.#parallelLimit = parallel;
    if (!Number.isFinite(timeout) || timeout <= 0)
      throw new TalkError("config_invalid", "clientResultTimeoutMs must be positive.");
    const policy = options.policy;
    this.#policyFor = typeof policy === "function" ? policy : () => policy;
    this.#registry = options.registry;
    this.#slots = new KeyedSemaphore(limit);
    this.#clientTimeoutMs = timeout;
    this.#logger = options.logger ?? NOOP_LOGGER;
  }

  /** Calls awaiting a result (server-run or client-completed). */
  get openCalls(): number {
    return this.#open.size;
  }

  /**
   * Runs a registered tool for a call. Rejects (without emitting) when the
   * session is closed or the turn is missing or stale; every later failure is
   * an outcome with its terminal event.
   */
  async dispatch(session: TalkSession, request: ToolCallRequest): Promise<ToolCallOutcome> {
    if (!request.parallel) return this.#dispatchOpen(session, request);
    const running = this.#parallel.get(session.id) ?? 0;
    if (running >= this.#parallelLimit)
      throw new TalkError(
        "rate_limited",
        `At most ${this.#parallelLimit} tool calls run at once per session.`,
        {
          details: { sessionId: session.id, limit: this.#parallelLimit },
        },
      );
    this.#parallel.set(session.id, running + 1);
    try {
      return await this.#dispatchOpen(session, request);
    } finally {
      const left = (this.#parallel.get(session.id) ?? 1) - 1;
      if (left > 0) this.#parallel.set(session.id, left);
      else this.#parallel.delete(session.id);
    }
  }

  /**
   * Aborts one open call (running, queued or awaiting a client's result): it
   * ends with `tool.cancelled` carrying `reason`. False when no such call is open.
   */
  cancelCall(sessionId: string, callId: string, reason = "cancelled"): boolean {
    const call = this.#open.get(callKey(sessionId, callId));
    if (!call || call.controller.signal.aborted) return false;
    call.controller.abort(cancelReason(reason));
    return true;
  }

  async #dispatchOpen(session: TalkSession, request: ToolCallRequest): Promise<ToolCallOutcome> {
    const call = this.#open_(session, request);
    try {
      return await this.#run(session, call);
    } finally {
      this.#open.delete(callKey(session.id, call.callId));
    }
  }

  /** The call's own signal: its turn's, its cancelCall controller's and the request's, whichever aborts first. */
  #signalOf(turn: AbortSignal, call: OpenCall & { request: ToolCallRequest }): AbortSignal {
    const extra = call.request.signal;
    return AbortSignal.any(extra ? [turn, call.controller.signal, extra] : [turn, call.controller.signal]);
  }

  async #run(
    session: TalkSession,
    call: OpenCall & { callId: string; request: ToolCallRequest },
  ): Promise<ToolCallOutcome> {
    const { callId, turnId, request } = call;
    const fail = (error: TalkError): ToolCallOutcome => this.#fail(session, call, error);
    const denied = this.#checkPolicy(session, request.name);
    if (denied) return fail(denied);
    const tool = this.#registry.get(request.name);
    if (!tool)
      return fail(
        new TalkError("tool_not_found", `No tool named "${request.name}".`, {
          details: { name: request.name },
        }),
      );
    let args: Record<string, unknown>;
    try {
      args = parseToolArguments(tool, request.argumentsJson);
    } catch (err) {
      return fail(toTalkError(err, "invalid_params"));
    }
    let started = false;
    let signalSeen: AbortSignal | undefined;
    try {
      const output = await session.runWork(
        "tool",
        async (turnSignal) => {
          const signal = this.#signalOf(turnSignal, call);
          signalSeen = signal;
          const release = request.parallel ? () => {} : await this.#slots.acquire(session.id, signal);
          try {
            // Re-checked after the wait: a queued tool never starts once its turn is cancelled.
            if (signal.aborted) throw cancelledError(signal);
            started = true;
            // Settles on abort even if the tool ignores its signal (cancelCall must end the call).
            return await runAbortable(signal, (s) =>
              tool.handler(args, { signal: s, sessionId: session.id, turnId, callId, logger: this.#logger }),
            ).result;
          } finally {
            release();
          }
        },
        { turnId },
      );
      if (typeof output !== "string")
        throw new TalkError("internal", `Tool "${tool.name}" returned ${typeof output}, not text.`);
      return this.#succeed(session, call, output);
    } catch (err) {
      const error = toTalkError(err);
      if (error.code === "cancelled")
        return this.#cancelled(session, call, error, { started, reason: reasonOf(signalSeen) });
      return fail(
        err instanceof TalkError
          ? err
          : new TalkError(error.code, err instanceof Error ? err.message : String(err), { cause: err }),
      );
    }
  }

  /**
   * Registers a provider tool call that a client completes (gateway-relay
   * sessions: talk.session.submitToolResult). Policy is checked here as for
   * every call; the returned outcome settles when the client submits, the
   * turn is cancelled, or the wait times out.
   */
  async awaitToolResult(session: TalkSession, request: ToolCallRequest): Promise<ToolCallOutcome> {
    const call = this.#open_(session, request);
    const { callId, turnId } = call;
    const denied = this.#checkPolicy(session, request.name);
    if (denied) {
      this.#open.delete(callKey(session.id, callId));
      return this.#fail(session, call, denied);
    }
    let signalSeen: AbortSignal | undefined;
    try {
      const output = await session.runWork(
        "tool",
        (turnSignal) =>
          new Promise<string>((resolve, reject) => {
            const signal = this.#signalOf(turnSignal, call);
            signalSeen = signal;
            const finish = (settle: () => void): void => {
              clearTimeout(timer);
              signal.removeEventListener("abort", onAbort);
              settle();
            };
            const timer = setTimeout(
              () =>
                finish(() =>
                  reject(new TalkError("timeout", `No result for tool call ${callId} from the client.`)),
                ),
              this.#clientTimeoutMs,
            );
            timer.unref();
            const onAbort = (): void => finish(() => reject(cancelledError(signal)));
            if (signal.aborted) return onAbort();
            signal.addEventListener("abort", onAbort, { once: true });
            call.complete = (value) => finish(() => resolve(value));
          }),
        { turnId },
      );
      return this.#succeed(session, call, output);
    } catch (err) {
      const error = toTalkError(err);
      if (error.code === "cancelled")
        return this.#cancelled(session, call, error, { started: true, reason: reasonOf(signalSeen) });
      return this.#fail(session, call, error);
    } finally {
      this.#open.delete(callKey(session.id, callId));
    }
  }

  /**
   * A tool call a realtime provider emitted: a tool registered here runs on
   * the server (dispatch); any other is completed by the session's client
   * with talk.session.submitToolResult (awaitToolResult). Either way policy
   * is checked and exactly one terminal tool event is emitted.
   */
  handleProviderCall(session: TalkSession, request: ToolCallRequest): Promise<ToolCallOutcome> {
    return this.#registry.has(request.name)
      ? this.dispatch(session, request)
      : this.awaitToolResult(session, request);
  }

  /**
   * Checks the client-completed tools a session declares (talk.session.create
   * `clientTools`): no server tool shadowed, allowed by the session's policy,
   * sizes bounded; `invalid_params` naming the field otherwise.
   */
  checkClientTools(session: TalkSession, value: unknown): RealtimeToolDefinition[] {
    const policy = this.#policyFor(session);
    return parseClientTools(value, {
      isServerTool: (name) => this.#registry.has(name),
      isAllowed: (name) => session.brain !== "none" && policy.evaluate(name).allowed,
    });
  }

  /** Completes a call registered by awaitToolResult. Unknown, finished or cancelled calls throw tool_not_found. */
  submitToolResult(sessionId: string, callId: string, output: string): void {
    if (typeof output !== "string") throw new TalkError("invalid_params", "A tool result must be a string.");
    const call = this.#open.get(callKey(sessionId, callId));
    const complete = call?.complete;
    if (!call || !complete)
      throw new TalkError("tool_not_found", `No open tool call ${callId} awaits a result.`, {
        details: { callId },
      });
    // Removed now so a second submit for the same call is rejected, not raced.
    this.#open.delete(callKey(sessionId, callId));
    complete(output);
  }

  #open_(
    session: TalkSession,
    request: ToolCallRequest,
  ): OpenCall & { callId: string; request: ToolCallRequest } {
    if (session.state !== "active")
      throw new TalkError("session_closed", undefined, { details: { sessionId: session.id } });
    const current = session.activeTurn;
    const turnId = request.turnId ?? current?.id;
    if (turnId === undefined) throw new TalkError("no_active_turn");
    if (current?.id !== turnId)
      throw new TalkError("stale_turn", undefined, { details: { turnId, activeTurnId: current?.id } });
    if (typeof request.name !== "string" || typeof request.argumentsJson !== "string") {
      throw new TalkError("invalid_params", "A tool call needs a name and argumentsJson.");
    }
    const callId = request.callId ?? randomUUID();
    const key = callKey(session.id, callId);
    if (this.#open.has(key))
      throw new TalkError("invalid_params", `Tool call ${callId} is already open.`, { details: { callId } });
    const call = { sessionId: session.id, turnId, callId, request, controller: new AbortController() };
    session.emit({
      type: "tool.call",
      ...this.#correlation(call),
      payload: { name: request.name, argumentsJson: request.argumentsJson },
    });
    this.#open.set(key, call);
    return call;
  }

  #checkPolicy(session: TalkSession, name: string): TalkError | undefined {
    if (session.brain === "none")
      return new TalkError("tool_denied", "This session's brain strategy has no tool access.", {
        details: { name },
      });
    const decision = this.#policyFor(session).evaluate(name);
    if (decision.allowed) return undefined;
    return new TalkError("tool_denied", `Tool policy denies "${name}".`, { details: { name, ...decision } });
  }

  #correlation(call: { turnId: string; callId: string; request: ToolCallRequest }) {
    return {
      turnId: call.turnId,
      callId: call.callId,
      ...(call.request.itemId !== undefined ? { itemId: call.request.itemId } : {}),
      ...(call.request.parentId !== undefined ? { parentId: call.request.parentId } : {}),
      ...(call.request.provider !== undefined ? { provider: call.request.provider } : {}),
    };
  }

  #succeed(
    session: TalkSession,
    call: { turnId: string; callId: string; request: ToolCallRequest },
    output: string,
  ): ToolCallOutcome {
    session.emit({
      type: "tool.result",
      ...this.#correlation(call),
      final: true,
      payload: { name: call.request.name, output },
    });
    return { ok: true, callId: call.callId, output };
  }

  #fail(
    session: TalkSession,
    call: { turnId: string; callId: string; request: ToolCallRequest },
    error: TalkError,
  ): ToolCallOutcome {
    this.#safeEmit(session, {
      type: "tool.error",
      ...this.#correlation(call),
      payload: { name: call.request.name, code: error.code, message: error.message },
    });
    return { ok: false, callId: call.callId, error };
  }

  #cancelled(
    session: TalkSession,
    call: { turnId: string; callId: string; request: ToolCallRequest },
    error: TalkError,
    info: { started: boolean; reason: string },
  ): ToolCallOutcome {
    this.#safeEmit(session, {
      type: "tool.cancelled",
      ...this.#correlation(call),
      payload: { name: call.request.name, ...info },
    });
    return { ok: false, callId: call.callId, error };
  }

  #safeEmit(session: TalkSession, init: Parameters<TalkSession["emit"]>[0]): void {
    try {
      session.emit(init);
    } catch (err) {
      this.#logger.error({ err, sessionId: session.id, type: init.type }, "tool event could not be emitted");
    }
  }
}
