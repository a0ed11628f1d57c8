import { toTalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { RealtimeProviderEvent, RealtimeVoiceSession } from "../../core/index.js";
import type { TalkSession } from "../../core/index.js";
import { AGENT_CONSULT_TOOL } from "../tools/agent-consult-tool.js";
import type { ToolOwnership } from "./brain-options.js";
import type { PipelineToolDispatcher } from "./pipeline-options.js";
import type { ProgressiveSpeech } from "./progressive-speech.js";

type ToolCallEvent = Extract<RealtimeProviderEvent, { type: "tool_call" }>;

/** What a realtime session's tool calls need: narrow, no back-reference to the pipeline. */
export interface RealtimeToolCallsContext {
  session: TalkSession;
  tools: PipelineToolDispatcher | undefined;
  ownership: ToolOwnership;
  /** agent.realtime.progressive: agent_consult's chunks are spoken while it runs. */
  progressive: boolean;
  speech: ProgressiveSpeech;
  /** The connected provider session, if any. */
  voice(): RealtimeVoiceSession | undefined;
  logger: TalkLogger;
}

/**
 * A realtime provider's tool calls, through core's one dispatch path (policy,
 * tool.* events): a registered tool runs on the server, any other is
 * completed by the client with submitToolResult. The provider always gets an
 * output, so it never waits on a call that failed.
 */
export class RealtimeToolCalls {
  readonly #ctx: RealtimeToolCallsContext;

  constructor(ctx: RealtimeToolCallsContext) {
    this.#ctx = ctx;
  }

  handle(event: ToolCallEvent): void {
    const { session, tools, logger } = this.#ctx;
    if (this.#ctx.ownership === "transport_only") {
      // The brain owns planning and tools here; the provider was offered none (seed 003: ignored, not run).
      logger.warn(
        { sessionId: session.id, name: event.name },
        "tool call from a transport-only provider session ignored",
      );
      return;
    }
    if (!tools) {
      // No tools were offered to this session; a call can only be a provider error. Answer it so the provider does not wait.
      logger.warn({ name: event.name }, "realtime provider called a tool in a session without tools");
      this.#submitError(event.callId, "tool_not_found", "No tools are available.");
      return;
    }
    const turn = session.activeTurn ?? session.ensureTurn({ source: "provider" });
    const request = {
      name: event.name,
      argumentsJson: event.argumentsJson,
      callId: event.callId,
      turnId: turn.id,
      itemId: event.itemId,
      parentId: event.responseId,
      ...(session.provider ? { provider: session.provider } : {}),
    };
    const progress = this.#listenProgress(event, turn.id, turn.signal);
    tools.handleProviderCall(session, request).then(
      (outcome) => {
        const submit = (): void => {
          if (outcome.ok) this.#handOff(event.callId, outcome.output);
          // The provider still waits for an output; tell it the tool failed rather than leave it hanging.
          else if (outcome.error.code !== "cancelled")
            this.#submitError(event.callId, outcome.error.code, outcome.error.message);
        };
        // Progressive: the output follows the chunks already being spoken, never overlapping them.
        if (progress) progress.settle(submit);
        else submit();
        progress?.close();
      },
      (err: unknown) => {
        progress?.close();
        const error = toTalkError(err);
        logger.warn({ name: event.name, code: error.code }, "realtime tool call rejected before dispatch");
        this.#submitError(event.callId, error.code, error.message);
      },
    );
  }

  #submitError(callId: string, code: string, message: string): void {
    this.#handOff(callId, JSON.stringify({ error: code, message }));
  }

  /**
   * Gives the provider session a call's output. It runs when the call ends,
   * outside the provider's event loop: a session that can no longer take it
   * (its socket went away meanwhile) throws, and that must not become an
   * unhandled rejection of the process. The failure path reports the lost
   * session itself.
   */
  #handOff(callId: string, output: string): void {
    try {
      this.#ctx.voice()?.submitToolResult(callId, output);
    } catch (err) {
      const error = toTalkError(err);
      this.#ctx.logger.warn(
        { sessionId: this.#ctx.session.id, callId, code: error.code },
        "realtime tool output not delivered to the provider",
      );
    }
  }

  /**
   * agent_consult in a session with agent.realtime.progressive: its chunks are
   * spoken while the consult runs, its output follows them (seed 002).
   * Undefined when that does not apply (other tools, option off, provider
   * without speakText, no progress channel).
   */
  #listenProgress(event: ToolCallEvent, turnId: string, signal: AbortSignal) {
    const { tools, speech, session, logger } = this.#ctx;
    const channel = tools?.progress;
    if (!channel || !this.#ctx.progressive || event.name !== AGENT_CONSULT_TOOL) return undefined;
    if (!speech.supported) {
      logger.warn(
        { sessionId: session.id },
        "progressive answers need a provider session with speakText; answering at once",
      );
      return undefined;
    }
    // Each cue and chunk the consult reports is a tool.progress of its call, as it is queued to be spoken.
    const report = (kind: "cue" | "chunk", text: string): void => {
      if (signal.aborted || session.state !== "active") return;
      try {
        session.emit({
          type: "tool.progress",
          turnId,
          callId: event.callId,
          itemId: event.itemId,
          parentId: event.responseId,
          payload: { name: event.name, message: text, kind },
        });
      } catch (err) {
        logger.debug({ err, sessionId: session.id }, "tool.progress could not be emitted");
      }
    };
    return speech.listen(channel, session.id, event.callId, signal, report);
  }
}
