import { cancelledError } from "../../core/index.js";
import { TalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { AgentMessage, AgentProvider, AgentToolCall, RealtimeToolDefinition } from "../../core/index.js";
import { createSmartChunker } from "../speech/smart-chunker.js";
import { toSpeakable } from "../speech/speakable-text.js";
import {
  createDirectiveParser,
  type DirectiveParseResult,
  type VoiceDirective,
} from "../speech/voice-directive.js";
import type { BrainChunkerOptions } from "./brain-options.js";
import { isProviderStall } from "../faults/resilient-providers.js";

/** What streaming one agent answer needs: narrow, no back-reference to a pipeline. */
export interface AgentAnswerRequest {
  agent: AgentProvider;
  sessionId: string;
  turnId: string;
  /** Built by buildAgentMessages from trusted config and session state. */
  messages: AgentMessage[];
  /** Tools offered to the agent this round (agent-tool-rounds.ts). Default none. */
  tools?: RealtimeToolDefinition[];
  /** The turn's (or output's) signal: aborting it closes the agent's HTTP stream. */
  signal: AbortSignal;
  chunker: Required<BrainChunkerOptions>;
  /** Longest consult, ms (0: none); then the consult is aborted and the answer ends `timedOut`. */
  consultTimeoutMs: number;
  /** onProgressCue fires once if no chunk is ready after this long, ms (0: never). */
  progressCueMs: number;
  /** Recognise a leading voice directive (seed 004). Default true. */
  directives?: boolean;
  logger: TalkLogger;
  /** Answer text as it arrives, directive removed (captions, output.text.delta). */
  onText?(text: string): void;
  /**
   * Each speakable chunk as soon as it is complete, in order (one at the end
   * when chunking is off). `final`: the chunk came out when the answer ended
   * (the last of it), not while the consult was still running.
   */
  onChunk(chunk: string, info: { final: boolean }): void;
  onDirective?(directive: VoiceDirective): void;
  onProgressCue?(): void;
}

export interface AgentAnswer {
  /** The answer's text without the directive (what was streamed to onText). */
  text: string;
  /** Chunks handed to onChunk. */
  chunks: number;
  /** The consult hit consultTimeoutMs (or the provider's own timeout): text is partial, its unfinished chunk was dropped. */
  timedOut: boolean;
  /** Tools the agent called at the end of its answer, in order (none when it timed out). */
  toolCalls: AgentToolCall[];
}

/**
 * Streams an agent consult through the directive parser (the JSON prefix is
 * never spoken) and the smart chunker (speakable chunks at natural
 * boundaries), so speech can start after the first sentence rather than the
 * whole answer (seed 002). Rejects `cancelled` when `signal` aborts, and the
 * provider's error otherwise; a timeout is an outcome (`timedOut`), because
 * the caller still has to say something. A stall (the chain's firstByteTimeoutMs
 * / interChunkTimeoutMs, after its retries) is thrown: it is a provider fault.
 */
export async function streamAgentAnswer(req: AgentAnswerRequest): Promise<AgentAnswer> {
  const { signal, chunker: c } = req;
  if (signal.aborted) throw cancelledError(signal);
  const parser = req.directives === false ? undefined : createDirectiveParser();
  const chunker = c.enabled
    ? createSmartChunker({
        minChars: c.minChars,
        maxChars: c.maxChars,
        firstChunkMinChars: c.firstChunkMinChars,
        firstChunkMaxChars: c.firstChunkMaxChars,
        speakable: true,
      })
    : undefined;
  const timeout = new AbortController();
  const consultSignal = AbortSignal.any([signal, timeout.signal]);
  let text = "";
  let chunks = 0;
  const toolCalls: AgentToolCall[] = [];
  const emitChunks = (list: string[], final: boolean): void => {
    for (const chunk of list) {
      chunks++;
      clearTimeout(cueTimer);
      req.onChunk(chunk, { final });
    }
  };
  const take = (result: DirectiveParseResult): void => {
    if (result.directive) req.onDirective?.(result.directive);
    if (result.ignoredKeys || result.invalidKeys) {
      req.logger.info(
        {
          sessionId: req.sessionId,
          turnId: req.turnId,
          ignoredKeys: result.ignoredKeys,
          invalidKeys: result.invalidKeys,
        },
        "voice directive keys ignored",
      );
    }
    if (!result.text) return;
    text += result.text;
    req.onText?.(result.text);
    if (chunker) emitChunks(chunker.push(result.text), false);
  };
  const timer =
    req.consultTimeoutMs > 0
      ? setTimeout(
          () =>
            timeout.abort(
              new TalkError("timeout", `The agent did not answer within ${req.consultTimeoutMs} ms.`),
            ),
          req.consultTimeoutMs,
        )
      : undefined;
  const cueTimer =
    req.progressCueMs > 0 && req.onProgressCue
      ? setTimeout(() => {
          if (chunks === 0 && !consultSignal.aborted) req.onProgressCue?.();
        }, req.progressCueMs)
      : undefined;
  try {
    for await (const delta of req.agent.consult({
      sessionId: req.sessionId,
      turnId: req.turnId,
      messages: req.messages,
      ...(req.tools && req.tools.length > 0 ? { tools: req.tools } : {}),
      signal: consultSignal,
    })) {
      if (consultSignal.aborted) break;
      if (delta.type === "done") break;
      if (delta.type === "tool_call")
        toolCalls.push({ callId: delta.callId, name: delta.name, argumentsJson: delta.argumentsJson });
      else if (delta.text) take(parser ? parser.push(delta.text) : { text: delta.text });
    }
    if (signal.aborted) throw cancelledError(signal);
    if (timeout.signal.aborted) return { text, chunks, timedOut: true, toolCalls: [] };
    if (parser) take(parser.flush());
    if (chunker) emitChunks(chunker.flush(), true);
    else if (text.trim() !== "")
      emitChunks(
        [toSpeakable(text)].filter((t) => t !== ""),
        true,
      );
    return { text, chunks, timedOut: false, toolCalls };
  } catch (err) {
    if (signal.aborted) throw cancelledError(signal);
    // A hung agent (no first token, or a gap, past the chain's stall timeouts, after its retries)
    // is a provider fault: the caller's leg speaks the apology and reports session.error.
    if (isProviderStall(err) && !timeout.signal.aborted) throw err;
    // Ours or the provider's own timeout: either way the caller must hear something, not silence.
    if (timeout.signal.aborted || (err instanceof TalkError && err.code === "timeout"))
      return { text, chunks, timedOut: true, toolCalls: [] };
    throw err;
  } finally {
    clearTimeout(timer);
    clearTimeout(cueTimer);
  }
}
