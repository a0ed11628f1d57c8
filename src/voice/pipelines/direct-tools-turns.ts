import { randomUUID } from "node:crypto";
import { TalkError } from "../../core/index.js";
import type { TalkSession, TalkTurn } from "../../core/index.js";
import type {
  DirectToolCall,
  DirectToolResult,
  TalkDirectTools,
  TalkSessionController,
} from "./controller-types.js";
import type { PipelineToolDispatcher } from "./pipeline-options.js";

/** What the pipeline lends: its turns and its voice, nothing else of itself. */
export interface DirectToolTurnsContext {
  session: TalkSession;
  tools: PipelineToolDispatcher | undefined;
  /** A turn of its own for a call that names none, its user input already ended. */
  openTurn(): TalkTurn;
  /**
   * Speaks `text` as one output item of `turn` (output.text.* then
   * output.audio.*), the TTS job's `parentId` the call. Settles once played,
   * cancelled or failed; failures are the pipeline's to report.
   */
  speak(turn: TalkTurn, text: string, parentId: string): Promise<unknown>;
}

/**
 * The `direct-tools` brain (seed 000: "a trusted first-party surface can call
 * selected tools directly through Gateway policy"): no agent and no model
 * choose the tool. The surface names the tool and its arguments; the call
 * goes through the one dispatch path (policy, argument check, per-session
 * ordering, the turn's signal, `tool.*` events), and a result answers the
 * turn aloud and as text. A refused or failed call ends with its `tool.error`
 * event and rejects with that error; nothing is spoken for it.
 */
export class DirectToolTurns {
  readonly #ctx: DirectToolTurnsContext;
  /** Results are spoken in the order their calls ended, one output item at a time. */
  #speech: Promise<unknown> = Promise.resolve();

  constructor(ctx: DirectToolTurnsContext) {
    this.#ctx = ctx;
  }

  async call(request: DirectToolCall): Promise<DirectToolResult> {
    const { session, tools } = this.#ctx;
    if (session.brain !== "direct-tools") {
      throw new TalkError(
        "invalid_state",
        `A ${session.brain} session answers turns itself, not by direct tool calls.`,
        {
          details: { brain: session.brain },
        },
      );
    }
    if (!tools) throw new TalkError("tool_not_found", "No tools are configured for this session.");
    const turn = request.turnId === undefined ? this.#ctx.openTurn() : this.#answerable(request.turnId);
    const callId = randomUUID();
    const outcome = await tools.dispatch(session, {
      name: request.name,
      argumentsJson: request.argumentsJson,
      callId,
      turnId: turn.id,
    });
    if (!outcome.ok) throw outcome.error;
    const text = spokenText(outcome.output);
    if (text && !turn.signal.aborted) {
      this.#speech = this.#speech
        .catch(() => undefined)
        .then(() => (turn.signal.aborted ? undefined : this.#ctx.speak(turn, text, callId)));
    }
    return { turnId: turn.id, callId, output: outcome.output };
  }

  /** The session's current turn, its user input over and not cancelled; stale or capturing turns are refused. */
  #answerable(turnId: string): TalkTurn {
    const turn = this.#ctx.session.activeTurn;
    if (!turn || turn.id !== turnId) {
      throw new TalkError("stale_turn", undefined, { details: { turnId, activeTurnId: turn?.id } });
    }
    if (turn.state === "active") {
      throw new TalkError(
        "invalid_state",
        `Turn ${turnId} is still capturing: end it (talk.session.endTurn) first.`,
        {
          details: { turnId, state: turn.state },
        },
      );
    }
    if (turn.state !== "ending" || turn.signal.aborted) {
      throw new TalkError("invalid_state", `Turn ${turnId} was cancelled or is over.`, {
        details: { turnId, state: turn.state },
      });
    }
    return turn;
  }
}

/** True for controllers whose turns a surface can answer with direct tool calls (stt-tts). */
export function hasDirectTools(
  controller: TalkSessionController,
): controller is TalkSessionController & TalkDirectTools {
  return typeof (controller as Partial<TalkDirectTools>).callTool === "function";
}

/**
 * What a result sounds like: tools answer in text meant for a model, often
 * JSON. A JSON string is said as itself; an object or array by its values
 * (strings, numbers, booleans) in order, so `{"text":"hello"}` says "hello"
 * and no braces or keys are read out. Anything else is said as it is.
 */
export function spokenText(output: string): string {
  const trimmed = output.trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return trimmed;
  }
  const values: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === "string") {
      if (value.trim()) values.push(value.trim());
    } else if (typeof value === "number" || typeof value === "boolean") {
      values.push(String(value));
    } else if (Array.isArray(value)) {
      for (const v of value) collect(v);
    } else if (value !== null && typeof value === "object") {
      for (const v of Object.values(value)) collect(v);
    }
  };
  collect(parsed);
  return values.join(". ");
}
