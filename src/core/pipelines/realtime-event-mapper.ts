import type { RealtimeProviderEvent } from "../provider-types.js";
import type { TalkOutput, TalkSession } from "../session-types.js";
import type { BargeInPolicy } from "./barge-in-policy.js";
import type { RealtimeOutput } from "./realtime-output.js";
import type { RealtimeToolCalls } from "./realtime-tool-calls.js";
import type { ProviderFault } from "../faults/fault-options.js";

type EventOf<T extends RealtimeProviderEvent["type"]> = Extract<RealtimeProviderEvent, { type: T }>;

/** What the mapping needs from its pipeline: the session, the stages it feeds and two verbs. */
export interface RealtimeEventMapperContext {
  session: TalkSession;
  output: RealtimeOutput;
  toolCalls: RealtimeToolCalls;
  bargeIn: BargeInPolicy;
  /** Interrupts the answer that plays (the line is cleared first). */
  interrupt(output: TalkOutput): void;
  /**
   * The provider failed: a fatal or server-side error, a failed response, the
   * provider gone. `fatal`: its session cannot go on (without a failure path
   * the pipeline then closes).
   */
  fault(fault: ProviderFault, fatal: boolean): void;
  /** True once the pipeline is closing on its own (the provider's close is then expected). */
  closing(): boolean;
}

/**
 * Maps a realtime provider's events onto the Talk turn model:
 *
 * - speech_started ensures a turn; while an answer plays it interrupts it
 *   when the barge-in policy says so (real speech only, never raw audio),
 *   otherwise the speech is only noted;
 * - speech_stopped ends the user turn, the response flows under it;
 * - audio goes to the output stage, events carry metadata only;
 * - tool calls go to the tool stage.
 */
export class RealtimeEventMapper {
  readonly #ctx: RealtimeEventMapperContext;

  constructor(ctx: RealtimeEventMapperContext) {
    this.#ctx = ctx;
  }

  handle(event: RealtimeProviderEvent): void {
    const { output } = this.#ctx;
    switch (event.type) {
      case "ready":
        return;
      case "speech_started":
        this.#speechStarted(event);
        return;
      case "speech_stopped":
        this.#speechStopped(event);
        return;
      case "response_started":
        this.#responseStarted();
        return;
      case "audio_delta":
        output.audioDelta(event);
        return;
      case "audio_done":
        output.audioDone(event.itemId);
        return;
      case "text_delta":
        this.#textDelta(event);
        return;
      case "transcript_delta":
      case "transcript_done":
        this.#transcript(event);
        return;
      case "tool_call":
        this.#ctx.toolCalls.handle(event);
        return;
      case "response_done": {
        const active = this.#ctx.session.activeOutput;
        if (active) output.audioDone(active.itemId);
        if (event.status === "failed")
          this.#ctx.fault(
            { kind: "provider_error", provider: "realtime", message: "The provider's response failed." },
            false,
          );
        return;
      }
      case "usage": {
        const { type: _type, ...usage } = event;
        this.#ctx.session.emit({ type: "usage.metrics", payload: usage });
        return;
      }
      case "error":
      case "closed":
        this.#failure(event);
        return;
    }
  }

  #speechStopped(event: EventOf<"speech_stopped">): void {
    const { session } = this.#ctx;
    const turn = session.activeTurn;
    if (!turn || turn.state !== "active") return;
    session.emit({
      type: "input.audio.speech_stopped",
      turnId: turn.id,
      ...(event.itemId ? { itemId: event.itemId } : {}),
      payload: { ...(event.audioEndMs !== undefined ? { audioEndMs: event.audioEndMs } : {}) },
    });
    // The provider answers after the user stops: end the user turn so its response flows under it.
    session.endTurn(turn.id);
  }

  /**
   * A response nobody asked for by speaking (a greeting) still needs a turn to belong to; it takes
   * no user input, so it is ended at once and the next speech starts a turn of its own.
   */
  #responseStarted(): void {
    const { session } = this.#ctx;
    if (session.activeTurn) return;
    const turn = session.startTurn({ source: "provider" });
    session.endTurn(turn.id);
  }

  #textDelta(event: EventOf<"text_delta">): void {
    const { session, output } = this.#ctx;
    const turn = session.activeTurn;
    if (!turn || output.isCancelled(event.itemId)) return;
    session.emit({
      type: "output.text.delta",
      turnId: turn.id,
      itemId: event.itemId,
      payload: { text: event.text },
    });
  }

  #transcript(event: EventOf<"transcript_delta" | "transcript_done">): void {
    const { session } = this.#ctx;
    const turn = session.activeTurn;
    if (!turn) return;
    const done = event.type === "transcript_done";
    session.emit({
      type: done ? "transcript.done" : "transcript.delta",
      turnId: turn.id,
      itemId: event.itemId,
      ...(done ? { final: true } : {}),
      payload: { role: event.role, text: event.text },
    });
  }

  /**
   * A provider error or the provider gone while we did not close it. A
   * request the provider refused (a cancel with nothing to cancel) is only
   * reported; a fatal or server-side error and the provider's close are faults.
   */
  #failure(event: EventOf<"error" | "closed">): void {
    const { session } = this.#ctx;
    if (event.type === "error") {
      if (!event.fatal && event.server !== true) {
        session.emit({
          type: "session.error",
          payload: { code: "provider_error", upstreamCode: event.code, message: event.message, fatal: false },
        });
        return;
      }
      this.#ctx.fault(
        {
          kind: event.code === "connection_lost" ? "connection_lost" : "provider_error",
          provider: "realtime",
          message: event.message,
          upstreamCode: event.code,
        },
        event.fatal,
      );
      return;
    }
    if (this.#ctx.closing()) return;
    this.#ctx.fault(
      {
        kind: "connection_lost",
        provider: "realtime",
        message: `The provider session closed: ${event.reason}`,
      },
      true,
    );
  }

  #speechStarted(event: EventOf<"speech_started">): void {
    const { session } = this.#ctx;
    const item = event.itemId ? { itemId: event.itemId } : {};
    const payload = event.audioStartMs !== undefined ? { audioStartMs: event.audioStartMs } : {};
    const output = session.activeOutput;
    if (output && !this.#ctx.bargeIn.interrupts(output)) {
      // Speech over the answer is only noted; the answer keeps playing.
      session.emit({ type: "input.audio.speech_started", turnId: output.turnId, ...item, payload });
      return;
    }
    if (output) this.#ctx.interrupt(output);
    const turn = session.ensureTurn({ reason: "barge_in" });
    session.startCapture(turn.id);
    session.emit({ type: "input.audio.speech_started", turnId: turn.id, ...item, payload });
  }
}
