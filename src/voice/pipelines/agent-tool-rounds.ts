import { TalkError, toTalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { AgentMessage, AgentProvider, AgentToolCall, RealtimeToolDefinition } from "../../core/index.js";
import type { TalkSession } from "../../core/index.js";
import { AGENT_CONSULT_TOOL } from "../tools/agent-consult-tool.js";
import { exportToolsForProvider } from "../../core/index.js";
import type { AgentAnswer } from "./agent-answer.js";
import type { PipelineToolDispatcher } from "./pipeline-options.js";

/**
 * The tools an stt-tts session's agent is offered (seed 003: one registry,
 * one export layer): the canonical definitions the policy lets through,
 * sanitized by the agent's declared `toolSchema`, without agent_consult (the
 * agent is the brain here; consulting itself would recurse). None for an
 * agent that does not declare `capabilities.tools`, a session whose brain is
 * "none", or a session without tools.
 */
export function agentToolsFor(
  session: TalkSession,
  agent: AgentProvider,
  tools: PipelineToolDispatcher | undefined,
  logger: TalkLogger,
): RealtimeToolDefinition[] {
  if (!tools?.definitions || session.brain === "none" || agent.capabilities.tools !== true) return [];
  const usable = tools.definitionsFor?.(session) ?? tools.definitions;
  const canonical = usable.filter((t) => t.name !== AGENT_CONSULT_TOOL);
  const exported = exportToolsForProvider(canonical, agent.capabilities.toolSchema);
  if (exported.skipped.length > 0) {
    logger.warn(
      { provider: agent.id, skipped: exported.skipped },
      "tools the agent cannot declare were left out",
    );
  }
  return exported.tools;
}

/** What the tool rounds of one answer need: narrow, no back-reference to the pipeline. */
export interface AgentToolRoundsContext {
  session: TalkSession;
  turnId: string;
  /** The turn's signal: once aborted, no further tool or round starts. */
  signal: AbortSignal;
  /** The one dispatch path (policy, tool.* events, the turn's cancellation). */
  tools: PipelineToolDispatcher | undefined;
  /** Offered to the agent in every round (agentToolsFor); empty: one round of text. */
  definitions: RealtimeToolDefinition[];
  /** The consult's messages, built by buildAgentMessages. */
  messages: AgentMessage[];
  /** Rounds of tool calls allowed before the agent must answer in text (agent.maxToolRounds). */
  maxRounds: number;
  /** Spoken when a tool failed and the agent then said nothing. */
  toolErrorText: string;
  /** The agent's id: the `provider` of the tool events. */
  provider: string;
  logger: TalkLogger;
  /**
   * Streams and speaks one round of the agent's answer as one output item;
   * resolves once its audio has played (so end_call hangs up after the
   * farewell was heard), undefined when the turn or output was cancelled or
   * the round failed (already reported).
   */
  speakRound(messages: AgentMessage[], tools: RealtimeToolDefinition[]): Promise<AgentAnswer | undefined>;
  /** Speaks a fixed line as one output item (the tool error line). */
  speakLine(text: string): Promise<void>;
  /** Told when the round's tools start and stop running (a line a tool speaks belongs to this turn). */
  toolsRunning?(running: boolean): void;
}

/** A tool's outcome as the agent reads it; undefined: the turn was cancelled. */
type CallResult = { ok: boolean; content: string } | undefined;

/**
 * One answer of an stt-tts agent with function calling: each round is
 * spoken as it streams (its first chunk starts speech, as without tools);
 * when the round ends with tool calls, they run in order through core's one
 * dispatch path, their outputs (or errors) go back to the agent as `tool`
 * messages, and the next round follows, until the agent answers in text.
 * A round of calls past `maxRounds` fails the turn (provider_error,
 * reason tool_rounds_exceeded). Cancelling the turn aborts the running tool
 * (it runs under the turn's signal) and the agent's round (its HTTP stream).
 */
export async function runAgentToolRounds(ctx: AgentToolRoundsContext): Promise<void> {
  let messages = ctx.messages;
  let toolFailed = false;
  for (let round = 0; ; round++) {
    const answer = await ctx.speakRound(messages, ctx.definitions);
    if (!answer || ctx.signal.aborted) return;
    if (answer.toolCalls.length === 0) {
      // A tool failed and the agent said nothing about it: the caller still hears something.
      if (toolFailed && answer.text.trim() === "" && !answer.timedOut) await ctx.speakLine(ctx.toolErrorText);
      return;
    }
    if (round >= ctx.maxRounds) {
      throw new TalkError(
        "provider_error",
        `The agent still called tools after ${ctx.maxRounds} rounds (agent.maxToolRounds); its answer was stopped.`,
        {
          retryable: false,
          details: { reason: "tool_rounds_exceeded", maxToolRounds: ctx.maxRounds },
        },
      );
    }
    messages = [...messages, { role: "assistant", content: answer.text, toolCalls: answer.toolCalls }];
    ctx.toolsRunning?.(true);
    try {
      for (const call of answer.toolCalls) {
        const result = await runCall(ctx, call);
        if (result === undefined || ctx.signal.aborted) return;
        if (!result.ok) toolFailed = true;
        messages.push({ role: "tool", toolCallId: call.callId, content: result.content });
      }
    } finally {
      ctx.toolsRunning?.(false);
    }
  }
}

async function runCall(ctx: AgentToolRoundsContext, call: AgentToolCall): Promise<CallResult> {
  const { session, logger } = ctx;
  if (!ctx.tools || !ctx.definitions.some((d) => d.name === call.name)) {
    // Never offered (or no tools at all): nothing runs, the agent is told so.
    logger.warn({ sessionId: session.id, name: call.name }, "the agent called a tool it was not offered");
    return {
      ok: false,
      content: errorResult("tool_not_found", `No tool named "${call.name}" is available.`),
    };
  }
  try {
    const outcome = await ctx.tools.dispatch(session, {
      name: call.name,
      argumentsJson: call.argumentsJson,
      callId: call.callId,
      turnId: ctx.turnId,
      provider: ctx.provider,
    });
    if (ctx.signal.aborted || (!outcome.ok && outcome.error.code === "cancelled")) return undefined;
    return outcome.ok
      ? { ok: true, content: outcome.output }
      : { ok: false, content: errorResult(outcome.error.code, outcome.error.message) };
  } catch (err) {
    // Rejected before dispatch: the session closed or the turn was superseded meanwhile.
    if (ctx.signal.aborted || session.state !== "active") return undefined;
    const error = toTalkError(err);
    logger.warn({ sessionId: session.id, name: call.name, code: error.code }, "agent tool call rejected");
    return { ok: false, content: errorResult(error.code, error.message) };
  }
}

/** A failed tool's result, as the agent reads it (the same shape the realtime path submits). */
function errorResult(code: string, message: string): string {
  return JSON.stringify({ error: code, message });
}
