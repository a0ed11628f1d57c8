import type { TalkLogger } from "../../core/index.js";
import type { AgentMessage, AgentProvider, RealtimeToolDefinition } from "../../core/index.js";
import type { TalkSession } from "../../core/index.js";
import type { VoiceDirective } from "../speech/voice-directive.js";
import { streamAgentAnswer, type AgentAnswer } from "./agent-answer.js";
import type { ResolvedBrainOptions } from "./brain-options.js";
import type { SpeechSettings, TtsQueue } from "./tts-queue.js";

/**
 * A session's TTS voice: from configuration, changed by voice directives
 * (seed 004) without `once`.
 */
export class SessionVoice {
  #voice: { voice?: string; speed: number };
  readonly #logger: TalkLogger;
  readonly #sessionId: string;

  constructor(initial: { voice?: string | undefined; speed: number }, logger: TalkLogger, sessionId: string) {
    this.#voice = { speed: initial.speed, ...(initial.voice !== undefined ? { voice: initial.voice } : {}) };
    this.#logger = logger;
    this.#sessionId = sessionId;
  }

  /** Session-wide TTS settings (config, then directives without `once`). */
  settings(): SpeechSettings {
    return {
      speed: this.#voice.speed,
      ...(this.#voice.voice !== undefined ? { voice: this.#voice.voice } : {}),
    };
  }

  /** Applies a voice directive: returns this reply's settings; without `once` the session's change too. */
  apply(d: VoiceDirective): SpeechSettings {
    const current = this.settings();
    const voice = d.voice ?? current.voice;
    const next = { speed: d.speed ?? current.speed, ...(voice !== undefined ? { voice } : {}) };
    const unsupported = (["model", "stability", "similarity", "style"] as const).filter(
      (k) => d[k] !== undefined,
    );
    if (unsupported.length > 0) {
      this.#logger.info(
        { sessionId: this.#sessionId, keys: unsupported },
        "voice directive keys the TTS contract does not carry are ignored",
      );
    }
    if (!d.once) this.#voice = { ...next };
    // A voice the TTS lacks falls back to the earlier settings rather than silence.
    return d.voice !== undefined ? { ...next, fallback: current } : next;
  }
}

/** One spoken consult: narrow, no back-reference to the pipeline. */
export interface SpokenConsultRequest {
  session: TalkSession;
  agent: AgentProvider;
  turnId: string;
  itemId: string;
  messages: AgentMessage[];
  tools: RealtimeToolDefinition[];
  queue: TtsQueue;
  voice: SessionVoice;
  brain: ResolvedBrainOptions;
  logger: TalkLogger;
}

/**
 * The consult, as output-scoped work (cancelOutput stops it too): its chunks
 * go to the TTS queue as soon as they are complete; a progress cue is spoken
 * when the agent is slow to say anything; a timeout is spoken as an apology
 * and reported as tool.error (agent_consult, timeout), never left as silence.
 */
export function spokenConsult(req: SpokenConsultRequest): Promise<AgentAnswer> {
  const { session, turnId, itemId, queue, voice, brain } = req;
  let reply: SpeechSettings = voice.settings();
  return session.runWork(
    "agent-consult",
    async (signal) => {
      const answer = await streamAgentAnswer({
        agent: req.agent,
        sessionId: session.id,
        turnId,
        messages: req.messages,
        tools: req.tools,
        signal,
        chunker: brain.chunker,
        consultTimeoutMs: brain.consultTimeoutMs,
        progressCueMs: brain.progressCueMs,
        logger: req.logger,
        onText: (text) => session.emit({ type: "output.text.delta", turnId, itemId, payload: { text } }),
        onDirective: (directive) => (reply = voice.apply(directive)),
        onChunk: (chunk) => queue.push(chunk, reply),
        onProgressCue: () => queue.push(brain.progressCueText, voice.settings()),
      });
      if (answer.timedOut) {
        session.emit({
          type: "tool.error",
          turnId,
          callId: consultCallId(itemId),
          itemId,
          payload: { name: "agent_consult", code: "timeout", message: "The agent did not answer in time." },
        });
        queue.push(brain.apologyText, voice.settings());
      }
      return answer;
    },
    { turnId, scope: "output" },
  );
}

/** The correlation id of the agent consult that writes the answer `itemId` (its tool.error's callId, its TTS job's parent). */
export function consultCallId(itemId: string): string {
  return `consult-${itemId}`;
}
