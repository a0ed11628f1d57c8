/**
 * An answer prepared while the caller is still silent: the agent is consulted
 * on the turn's running words before the end-of-turn rule has ended the turn,
 * and its stream is buffered, unseen. When the turn ends and the pipeline asks
 * the agent for exactly the request that was prepared (the same messages, the
 * same tools: the final words are the running ones), it gets the prepared
 * stream, already under way, so the caller hears the answer a model's
 * time-to-first-token sooner. Anything else discards it (aborted: its HTTP
 * stream closed) and the agent is asked afresh. Nothing of a prepared consult
 * reaches the session until it is taken: no text, no tool call, no speech; so
 * a turn the caller goes on with loses nothing but the consult's tokens.
 *
 * One prepared consult per pipeline at a time; the end-of-turn rule decides
 * when to prepare (TurnEndpoint.prepareDue), the pipeline what (its messages).
 */
import { cancelledError, TalkError } from "../../core/index.js";
import type { AgentConsultRequest, AgentDelta, AgentProvider } from "../../core/index.js";

/** Why a prepared consult ended without being taken. */
export type PreparedDiscard = "words_changed" | "superseded" | "turn_over" | "failed" | "closed";

export interface PreparedAnswerStats {
  /** Consults started ahead of the end of turn. */
  prepared: number;
  /** Of them, the ones the turn's answer used. */
  used: number;
  /** Of them, the ones thrown away (their tokens spent for nothing), by why. */
  discarded: Partial<Record<PreparedDiscard, number>>;
}

interface Prepared {
  readonly turnId: string;
  readonly key: string;
  readonly abort: AbortController;
  readonly deltas: AgentDelta[];
  /** The stream ended: normally (undefined) or with this error. */
  ended: { error: unknown } | undefined;
  /** Wakes a reader waiting for the next delta. */
  wake: (() => void) | undefined;
  taken: boolean;
}

/** The request as the prepared consult's key: what the agent is asked, not who asks or how it is cancelled. */
function requestKey(messages: AgentConsultRequest["messages"], tools: AgentConsultRequest["tools"]): string {
  return JSON.stringify({ messages, tools: tools && tools.length > 0 ? tools : [] });
}

export class PreparedAnswer {
  #current: Prepared | undefined;
  #closed = false;
  readonly #stats: PreparedAnswerStats = { prepared: 0, used: 0, discarded: {} };

  get stats(): Readonly<PreparedAnswerStats> {
    return this.#stats;
  }

  /**
   * Consults `agent` now for `request` (the turn's answer as it would be asked for if the turn ended now)
   * and buffers the stream. A prepared consult for another request is discarded first; one for the same
   * request is kept (the words did not change).
   */
  prepare(agent: AgentProvider, request: Omit<AgentConsultRequest, "signal">, turnSignal: AbortSignal): void {
    if (this.#closed || turnSignal.aborted) return;
    const key = requestKey(request.messages, request.tools);
    const current = this.#current;
    if (
      current &&
      current.turnId === request.turnId &&
      current.key === key &&
      current.ended?.error === undefined
    )
      return;
    if (current) this.#discard(current, current.turnId === request.turnId ? "words_changed" : "superseded");
    const abort = new AbortController();
    const p: Prepared = {
      turnId: request.turnId,
      key,
      abort,
      deltas: [],
      ended: undefined,
      wake: undefined,
      taken: false,
    };
    this.#current = p;
    this.#stats.prepared++;
    const onTurnAborted = (): void => this.#discard(p, "turn_over");
    turnSignal.addEventListener("abort", onTurnAborted, { once: true });
    const unlisten = (): void => turnSignal.removeEventListener("abort", onTurnAborted);
    abort.signal.addEventListener("abort", unlisten, { once: true });
    void this.#buffer(p, agent, { ...request, signal: abort.signal }).finally(() => {
      // Taken, the taker's signal cancels it from here on; ended, there is nothing left to cancel.
      if (p.taken || p.ended) unlisten();
    });
  }

  /**
   * `base` with one difference: a consult for exactly the prepared request, in the prepared turn, streams
   * the prepared consult (what it buffered, then the rest as it comes); any other consult discards what
   * was prepared and asks `base`.
   */
  agent(base: AgentProvider): AgentProvider {
    const take = (request: AgentConsultRequest): AsyncIterable<AgentDelta> | undefined => this.#take(request);
    return {
      id: base.id,
      kind: "agent",
      label: base.label,
      capabilities: base.capabilities,
      health: () => base.health(),
      consult(request: AgentConsultRequest): AsyncIterable<AgentDelta> {
        return take(request) ?? base.consult(request);
      },
    };
  }

  /** Throws away what is prepared (the turn was cancelled, the pipeline closes). Idempotent. */
  discard(reason: PreparedDiscard): void {
    if (this.#current) this.#discard(this.#current, reason);
  }

  close(): void {
    this.discard("closed");
    this.#closed = true;
  }

  #take(request: AgentConsultRequest): AsyncIterable<AgentDelta> | undefined {
    const p = this.#current;
    if (!p) return undefined;
    const usable =
      !p.taken &&
      p.turnId === request.turnId &&
      p.key === requestKey(request.messages, request.tools) &&
      !p.abort.signal.aborted &&
      // A prepared consult that failed is asked again, as the answer would have been (the chain's retries).
      p.ended?.error === undefined;
    if (!usable) {
      this.#discard(
        p,
        p.ended?.error !== undefined
          ? "failed"
          : p.turnId === request.turnId
            ? "words_changed"
            : "superseded",
      );
      return undefined;
    }
    p.taken = true;
    this.#current = undefined;
    this.#stats.used++;
    // The taker's cancellation is the prepared consult's from now on (a barge-in closes its HTTP stream).
    if (request.signal.aborted) p.abort.abort(request.signal.reason);
    else request.signal.addEventListener("abort", () => p.abort.abort(request.signal.reason), { once: true });
    return replay(p, request.signal);
  }

  #discard(p: Prepared, reason: PreparedDiscard): void {
    if (this.#current === p) this.#current = undefined;
    if (p.taken || p.abort.signal.aborted) return;
    this.#stats.discarded[reason] = (this.#stats.discarded[reason] ?? 0) + 1;
    p.abort.abort(
      new TalkError("cancelled", `The answer prepared ahead of the end of turn was not used (${reason}).`),
    );
  }

  async #buffer(p: Prepared, agent: AgentProvider, request: AgentConsultRequest): Promise<void> {
    try {
      for await (const delta of agent.consult(request)) {
        if (request.signal.aborted) break;
        p.deltas.push(delta);
        p.wake?.();
        if (delta.type === "done") break;
      }
      p.ended = { error: request.signal.aborted ? cancelledError(request.signal) : undefined };
    } catch (err) {
      p.ended = { error: err ?? new Error("agent consult failed") };
    }
    p.wake?.();
  }
}

/** The prepared consult's deltas in order: those buffered, then each as it comes, then its end. */
async function* replay(p: Prepared, signal: AbortSignal): AsyncGenerator<AgentDelta> {
  // Woken by the next delta, the stream's end, or the taker's cancellation (whichever comes first).
  let wake: (() => void) | undefined;
  const onAbort = (): void => wake?.();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (let next = 0; ;) {
      if (signal.aborted) throw cancelledError(signal);
      if (next < p.deltas.length) {
        yield p.deltas[next++]!;
        continue;
      }
      if (p.ended) {
        if (p.ended.error !== undefined) throw p.ended.error;
        return;
      }
      await new Promise<void>((resolve) => (wake = p.wake = resolve));
      wake = p.wake = undefined;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
}
