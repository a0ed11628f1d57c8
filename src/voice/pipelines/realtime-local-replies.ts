import { TalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { AgentProvider, RealtimeVoiceSession } from "../../core/index.js";
import type { TalkSession, TalkTurn } from "../../core/index.js";
import { buildAgentMessages, ConversationHistory } from "./agent-context.js";
import { streamAgentAnswer } from "./agent-answer.js";
import { agentToolsFor, runAgentToolRounds } from "./agent-tool-rounds.js";
import type { PipelineToolDispatcher, ResolvedPipelineOptions } from "./pipeline-options.js";
import { failTurn, isCancellation } from "./pipeline-support.js";
import type { ProgressiveSpeech } from "./progressive-speech.js";

/**
 * The label of a bridge transcript: the provider reads the caller's words as
 * user content that our recognizer wrote down, not as audio it heard.
 */
export const BRIDGE_LABEL = "[caller, transcribed by local speech recognition]";

/** The user text a bridge session sends the provider for what the caller said. */
export function bridgeText(text: string): string {
  return `${BRIDGE_LABEL} ${text}`;
}

/** What answering a locally heard turn needs: narrow, no back-reference to the pipeline. */
export interface LocalRepliesContext {
  session: TalkSession;
  path: "bridge" | "brain";
  /** The connected provider session, if any. */
  voice(): RealtimeVoiceSession | undefined;
  /** Serializes provider responses; the brain's lines are spoken through it. */
  speech: ProgressiveSpeech;
  /** brain: the agent that plans the replies. */
  agent: AgentProvider | undefined;
  tools: PipelineToolDispatcher | undefined;
  options: ResolvedPipelineOptions;
  logger: TalkLogger;
  /** bridge: the caller's words join the conversation a reconnected provider session is given. */
  remember(text: string): void;
}

/**
 * Replies to what the local STT heard (realtime-relay-pipeline.ts feeds it):
 *
 * - bridge: the transcript goes to the provider as labelled user text and
 *   the provider answers it as it would speech: it plans, calls the tools it
 *   was offered (core's one dispatch path), speaks;
 * - brain: the Gateway's agent answers (its tool rounds through the same
 *   dispatch path, seed 003), and each chunk of the answer is spoken by the
 *   provider verbatim (`speakText`), in order, as soon as it is complete
 *   (seed 002). The provider was offered no tools and answers nothing by itself.
 *
 * Both run under the user turn: speech that starts a new turn supersedes it,
 * which stops the consult and drops what was not spoken yet.
 */
export class LocalReplies {
  readonly #ctx: LocalRepliesContext;
  readonly #history: ConversationHistory;

  constructor(ctx: LocalRepliesContext) {
    this.#ctx = ctx;
    this.#history = new ConversationHistory(ctx.options.historyEntries);
  }

  heard(turn: TalkTurn, text: string): void {
    if (this.#ctx.path === "bridge") this.#bridge(turn, text);
    else void this.#brain(turn, text);
  }

  #bridge(turn: TalkTurn, text: string): void {
    const { session, logger } = this.#ctx;
    const voice = this.#ctx.voice();
    if (!voice?.sendText) {
      failTurn(
        session,
        logger,
        turn.id,
        new TalkError("provider_unavailable", "No realtime provider session takes the caller's words now."),
      );
      return;
    }
    this.#ctx.remember(text);
    voice.sendText(bridgeText(text));
  }

  async #brain(turn: TalkTurn, text: string): Promise<void> {
    const { session, agent, tools, options: o, speech, logger } = this.#ctx;
    try {
      if (!agent)
        throw new TalkError("provider_not_found", "No agent provider is configured for this session.");
      const messages = buildAgentMessages({
        persona: o.persona,
        metadata: session.metadata,
        history: this.#history.entries,
        historyEntries: o.historyEntries,
        request: text,
      });
      this.#history.add("user", text);
      await session.runWork(
        "agent-consult",
        (signal) =>
          runAgentToolRounds({
            session,
            turnId: turn.id,
            signal,
            tools,
            definitions: agentToolsFor(session, agent, tools, logger),
            messages,
            maxRounds: o.brain.maxToolRounds,
            toolErrorText: o.brain.toolErrorText,
            provider: agent.id,
            logger,
            speakRound: async (roundMessages, definitions) => {
              const answer = await streamAgentAnswer({
                agent,
                sessionId: session.id,
                turnId: turn.id,
                messages: roundMessages,
                tools: definitions,
                signal,
                chunker: o.brain.chunker,
                consultTimeoutMs: o.brain.consultTimeoutMs,
                progressCueMs: o.brain.progressCueMs,
                logger,
                // The provider's voice is the session's: a voice directive is removed, not applied.
                onChunk: (chunk) => speech.say(chunk, signal),
                onProgressCue: () => speech.say(o.brain.progressCueText, signal),
              });
              if (answer.timedOut) speech.say(o.brain.apologyText, signal);
              this.#history.add("assistant", answer.text);
              // A round ends once it was spoken (a farewell is heard before end_call hangs up).
              await speech.idle(signal);
              return signal.aborted ? undefined : answer;
            },
            speakLine: (line) => {
              speech.say(line, signal);
              return speech.idle(signal);
            },
          }),
        { turnId: turn.id },
      );
    } catch (err) {
      if (isCancellation(err, turn.signal)) return;
      failTurn(session, logger, turn.id, err);
    }
  }
}
