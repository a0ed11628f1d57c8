import { TalkError } from "../../core/index.js";
import type { AgentMessage, AgentProvider } from "../../core/index.js";
import { streamAgentAnswer } from "../pipelines/agent-answer.js";
import { isProviderStall } from "../faults/resilient-providers.js";
import { buildAgentMessages } from "../pipelines/agent-context.js";
import type { ResolvedBrainOptions } from "../pipelines/brain-options.js";
import type { ToolDefinition } from "../../core/index.js";
import type { ConsultProgressChannel } from "../../core/index.js";

export const AGENT_CONSULT_TOOL = "agent_consult";

export interface AgentConsultToolOptions {
  /** The agent that answers for a session (the configured agent-consult provider); undefined: none configured. */
  agent(sessionId: string): AgentProvider | undefined;
  /** Session facts for the context: surface metadata and recent transcript. Undefined: an unknown session. */
  session(
    sessionId: string,
  ): { metadata: Readonly<Record<string, string>>; history: readonly AgentMessage[] } | undefined;
  /** From configuration (agent.persona). */
  persona: string;
  /** Transcript entries sent besides the request. Default 10. */
  historyEntries?: number;
  /** Chunking, progress cue, timeout and apology (agent.*). */
  brain: ResolvedBrainOptions;
  /** Where a session that speaks progressively listens (realtime progressive pattern). */
  progress?: ConsultProgressChannel;
}

/**
 * `agent_consult`: a realtime provider (native or bridge reply path) asks the
 * assistant. The consult runs under the call's signal (a cancelled turn
 * closes the agent's HTTP stream), with Gateway-built context only: the
 * model's `request` is the one thing taken from the call, as the user message.
 *
 * When the calling session listens on `progress` (agent.realtime.progressive),
 * complete chunks are handed to it while the consult continues and the
 * output holds only what is left, plus what was already spoken so the model
 * keeps the context (seed 002). A timeout is a `timeout` tool error whose
 * message is the configured apology, which the provider then speaks.
 */
export function createAgentConsultTool(options: AgentConsultToolOptions): ToolDefinition {
  const historyEntries = options.historyEntries ?? 10;
  return {
    name: AGENT_CONSULT_TOOL,
    description:
      "Ask the assistant's full brain (knowledge, memory, tools) for an answer to the caller's request. " +
      "Use it for anything beyond small talk. Pass the request in the caller's words.",
    parameters: {
      type: "object",
      properties: { request: { type: "string", description: "What the caller wants, in their words." } },
      required: ["request"],
      additionalProperties: false,
    },
    // Read-only from the caller's point of view, but it is long-running work that must stop on cancel.
    sideEffects: false,
    handler: async (args, ctx) => {
      const request = String(args["request"] ?? "").trim();
      if (request === "") throw new TalkError("invalid_params", "agent_consult needs a non-empty request.");
      const agent = options.agent(ctx.sessionId);
      if (!agent) throw new TalkError("provider_not_found", "No agent is configured to answer.");
      const session = options.session(ctx.sessionId);
      const messages = buildAgentMessages({
        persona: options.persona,
        metadata: session?.metadata ?? {},
        history: session?.history ?? [],
        historyEntries,
        request,
      });
      const listener = options.progress?.get(ctx.sessionId, ctx.callId);
      const brain = options.brain;
      const spoken: string[] = [];
      const rest: string[] = [];
      let answer: Awaited<ReturnType<typeof streamAgentAnswer>>;
      try {
        answer = await streamAgentAnswer({
          agent,
          sessionId: ctx.sessionId,
          turnId: ctx.turnId,
          messages,
          signal: ctx.signal,
          // Without a listener nothing is spoken early: the whole answer is the output.
          chunker: listener ? { ...brain.chunker, enabled: true } : { ...brain.chunker, enabled: false },
          consultTimeoutMs: brain.consultTimeoutMs,
          progressCueMs: listener ? brain.progressCueMs : 0,
          logger: ctx.logger,
          onChunk: (chunk, { final }) => {
            if (listener && !final) {
              spoken.push(chunk);
              listener.chunk(chunk);
            } else rest.push(chunk);
          },
          onProgressCue: () => listener?.cue(brain.progressCueText),
        });
      } catch (err) {
        // A hung agent is told to the model like a timeout: it apologises in its own voice.
        if (isProviderStall(err))
          throw new TalkError("timeout", brain.apologyText, { details: { spokenChunks: spoken.length } });
        throw err;
      }
      if (answer.timedOut)
        throw new TalkError("timeout", brain.apologyText, { details: { spokenChunks: spoken.length } });
      if (!listener) return answer.text.trim() === "" ? "(The assistant had no answer.)" : answer.text;
      if (spoken.length === 0) return rest.join(" ");
      return JSON.stringify({
        already_spoken_to_caller: spoken.join(" "),
        continue_with: rest.join(" "),
        note: "The first part was already spoken to the caller. Say only continue_with, without repeating anything.",
      });
    },
  };
}
