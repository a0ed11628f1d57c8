import type { RealtimeProviderEvent } from "../../core/index.js";
import type { TalkSession } from "../../core/index.js";
import type { SpeechOverOutput } from "./pipeline-options.js";
import type { RealtimeOutput } from "./realtime-output.js";
import type { RealtimeToolCalls } from "./realtime-tool-calls.js";
import type { ProviderFault } from "../../core/index.js";

/** Assistant items remembered with their response (parentId of late transcripts). */
const ITEM_MEMORY = 64;

type EventOf<T extends RealtimeProviderEvent["type"]> = Extract<RealtimeProviderEvent, { type: T }>;

/** What the mapping needs from its pipeline: the session, the stages it feeds and two verbs. */
export interface RealtimeEventMapperContext {
  session: TalkSession;
  output: RealtimeOutput;
  toolCalls: RealtimeToolCalls;
  /**
   * The provider heard speech over the answer that plays: a trigger for the media leg, which decides and
   * interrupts (true) or keeps the answer playing (false: the speech is only noted).
   */
  speechOverOutput: SpeechOverOutput;
  /** True for the turn the client started and ends itself (push-to-talk): the provider's speech_stopped does not end it. */
  clientEndsTurn?(turnId: string): boolean;
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
 * - speech_started ensures a turn; while an answer plays it is a trigger
 *   for the media leg (its one barge-in policy decides and interrupts),
 *   otherwise the speech is only noted;
 * - speech_stopped ends the user turn, the response flows under it, unless
 *   the client started the turn (it ends it with endTurn); speech the leg
 *   kept an answer playing over that ends while that answer still plays
 *   waits for its end (outputEnded) to become a turn, and the provider's
 *   events after it wait with it;
 * - audio goes to the output stage, events carry metadata only;
 * - the assistant's text ends with one output.text.done per item (its
 *   transcript, or the text deltas of a text response);
 * - tool calls go to the tool stage.
 *
 * Events of a provider item under a response carry the response's id as
 * `parentId`.
 */
export class RealtimeEventMapper {
  readonly #ctx: RealtimeEventMapperContext;
  /** The response each recent assistant item belongs to (parentId of its events). */
  readonly #itemResponses = new Map<string, string>();
  /** Text deltas of items whose output.text.done has not been emitted yet. */
  readonly #texts = new Map<string, string>();
  /** The provider's speech noted over an answer the leg kept playing (and why), until its speech_stopped. */
  #notedSpeech: { event: EventOf<"speech_started">; verdict: "kept" | "deferred" } | undefined;
  /**
   * Speech over a kept answer that ended while that answer still plays: its turn waits for the answer's
   * end (one active turn per session, and a new one would cut the answer), and so do the provider's events
   * after it (its words, the answer to them), held here in order; the playing answer's own events go on.
   */
  #waiting:
    | {
        /** The turn whose output plays, and that output's provider response. */
        turnId: string;
        responseId: string | undefined;
        speech: EventOf<"speech_started">;
        stopped: EventOf<"speech_stopped">;
        held: RealtimeProviderEvent[];
      }
    | undefined;

  constructor(ctx: RealtimeEventMapperContext) {
    this.#ctx = ctx;
  }

  handle(event: RealtimeProviderEvent): void {
    const { output } = this.#ctx;
    if (this.#waiting && this.#holds(event, this.#waiting.responseId)) {
      this.#waiting.held.push(event);
      return;
    }
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
        this.#noteItem(event.itemId, event.responseId);
        output.audioDelta(event);
        return;
      case "tool_call":
        // A call of a response the caller interrupted is not run: the model no longer waits for it.
        if (output.isCancelledResponse(event.responseId)) return;
        this.#ctx.toolCalls.handle(event);
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
      case "response_done": {
        // The response's own item: another response's may play by now (one held while an answer played out).
        const active = this.#ctx.session.activeOutput;
        if (
          active &&
          !output.isCancelledResponse(event.responseId) &&
          this.#itemResponses.get(active.itemId) === event.responseId
        )
          output.audioDone(active.itemId);
        this.#flushTexts(event.responseId);
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
    const noted = this.#notedSpeech;
    this.#notedSpeech = undefined;
    const { session } = this.#ctx;
    // Real speech the policy let the answer play over (a protected greeting): a turn of its own, so its words
    // and the answer to them are not stamped with the greeting's turn; at once when that answer is over, else
    // when it ends (outputEnded). Speech left to the leg's gate that the gate never confirmed was the
    // answer's echo: no turn.
    if (noted?.verdict === "kept" && session.activeTurn?.state !== "active") {
      const playing = session.activeOutput;
      if (!playing) this.#startCallerTurn(noted.event);
      else {
        // More speech over the same answer joins the turn already waiting for its end.
        this.#waiting ??= {
          turnId: playing.turnId,
          responseId: this.#itemResponses.get(playing.itemId),
          speech: noted.event,
          stopped: event,
          held: [],
        };
        return;
      }
    }
    this.#callerStopped(event);
  }

  /**
   * An output ended (played out, or cancelled): once none of the waiting turn's plays, the speech that
   * ended over it starts its turn (ended at once: its speech is over) unless a turn is live by now (a
   * client's push-to-talk), and the provider's events held meanwhile follow, in order.
   */
  outputEnded(): void {
    const waiting = this.#waiting;
    const { session } = this.#ctx;
    if (!waiting || session.activeOutput?.turnId === waiting.turnId) return;
    this.#waiting = undefined;
    if (session.state !== "active") return;
    if (session.activeTurn?.state !== "active") {
      this.#startCallerTurn(waiting.speech);
      this.#callerStopped(waiting.stopped);
    }
    for (const event of waiting.held) this.handle(event);
  }

  /**
   * While a turn waits for a playing answer's end: the events that wait with it (anything but that
   * answer's own audio, text and end, the provider's speech detection, usage and failures).
   */
  #holds(event: RealtimeProviderEvent, responseId: string | undefined): boolean {
    switch (event.type) {
      case "ready":
      case "speech_started":
      case "speech_stopped":
      case "usage":
      case "error":
      case "closed":
        return false;
      case "response_started":
        return true;
      case "transcript_delta":
      case "transcript_done": {
        const of = this.#itemResponses.get(event.itemId);
        return of === undefined || of !== responseId;
      }
      default:
        return event.responseId !== responseId;
    }
  }

  /** The caller's speech ended: input.audio.speech_stopped, and the turn ends unless the client ends it. */
  #callerStopped(event: EventOf<"speech_stopped">): void {
    const { session } = this.#ctx;
    const turn = session.activeTurn;
    if (!turn || turn.state !== "active") return;
    session.emit({
      type: "input.audio.speech_stopped",
      turnId: turn.id,
      ...(event.itemId ? { itemId: event.itemId } : {}),
      payload: { ...(event.audioEndMs !== undefined ? { audioEndMs: event.audioEndMs } : {}) },
    });
    // The client ends the turn it started (push-to-talk); otherwise the provider's end of speech ends it.
    if (this.#ctx.clientEndsTurn?.(turn.id) === true) return;
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
    this.#noteItem(event.itemId, event.responseId);
    if (!turn || output.isCancelled(event.itemId) || output.isCancelledResponse(event.responseId)) return;
    this.#texts.set(event.itemId, (this.#texts.get(event.itemId) ?? "") + event.text);
    session.emit({
      type: "output.text.delta",
      turnId: turn.id,
      itemId: event.itemId,
      parentId: event.responseId,
      payload: { text: event.text },
    });
  }

  #transcript(event: EventOf<"transcript_delta" | "transcript_done">): void {
    const { session, output } = this.#ctx;
    const turn = session.activeTurn;
    if (!turn) return;
    const done = event.type === "transcript_done";
    const parentId = event.role === "assistant" ? this.#itemResponses.get(event.itemId) : undefined;
    // The words of a cancelled response, still arriving, belong to no turn (the next turn's least of all).
    if (parentId !== undefined && output.isCancelledResponse(parentId)) return;
    const parent = parentId !== undefined ? { parentId } : {};
    session.emit({
      type: done ? "transcript.done" : "transcript.delta",
      turnId: turn.id,
      itemId: event.itemId,
      ...parent,
      ...(done ? { final: true } : {}),
      payload: { role: event.role, text: event.text },
    });
    // The assistant's words, final: text-ready (not audio-ready) for clients that show the answer.
    if (done && event.role === "assistant") this.#textDone(event.itemId, event.text);
  }

  /** One output.text.done per assistant item, unless the item was cancelled (its text was never heard). */
  #textDone(itemId: string, text: string): void {
    const { session, output } = this.#ctx;
    this.#texts.delete(itemId);
    const turn = session.activeTurn;
    if (!turn || output.isCancelled(itemId)) return;
    const parentId = this.#itemResponses.get(itemId);
    session.emit({
      type: "output.text.done",
      turnId: turn.id,
      itemId,
      ...(parentId !== undefined ? { parentId } : {}),
      final: true,
      payload: { text },
    });
  }

  /** A response ended: items that streamed text but no final transcript get their output.text.done now. */
  #flushTexts(responseId: string): void {
    for (const [itemId, text] of [...this.#texts]) {
      if (this.#itemResponses.get(itemId) === responseId) this.#textDone(itemId, text);
    }
  }

  #noteItem(itemId: string, responseId: string): void {
    if (this.#itemResponses.get(itemId) === responseId) return;
    this.#itemResponses.set(itemId, responseId);
    if (this.#itemResponses.size > ITEM_MEMORY) {
      const oldest = this.#itemResponses.keys().next().value;
      if (oldest !== undefined) {
        this.#itemResponses.delete(oldest);
        this.#texts.delete(oldest);
      }
    }
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
    const output = session.activeOutput;
    const verdict = output ? this.#ctx.speechOverOutput(output) : "interrupted";
    if (output && verdict !== "interrupted") {
      // Kept playing (the policy, or the leg's own gate decides): noted, and the caller's turn once it is cut.
      this.#notedSpeech = { event, verdict };
      session.emit(speechStartedEvent(event, output.turnId));
      return;
    }
    this.#startCallerTurn(event);
  }

  /**
   * The answer was interrupted (the pipeline's `interrupt`): speech the provider reported over it and
   * still hears is the caller's turn now, so its speech_stopped ends that turn and the answer flows under it.
   */
  callerSpeaking(): void {
    const noted = this.#notedSpeech;
    this.#notedSpeech = undefined;
    if (noted && this.#ctx.session.state === "active") this.#startCallerTurn(noted.event);
  }

  #startCallerTurn(event: EventOf<"speech_started">): void {
    const { session } = this.#ctx;
    const turn = session.ensureTurn({ reason: "barge_in" });
    session.startCapture(turn.id);
    session.emit(speechStartedEvent(event, turn.id));
  }
}

/** The session's input.audio.speech_started for the provider's speech_started, on `turnId`. */
function speechStartedEvent(event: EventOf<"speech_started">, turnId: string) {
  return {
    type: "input.audio.speech_started" as const,
    turnId,
    ...(event.itemId ? { itemId: event.itemId } : {}),
    payload: event.audioStartMs !== undefined ? { audioStartMs: event.audioStartMs } : {},
  };
}
