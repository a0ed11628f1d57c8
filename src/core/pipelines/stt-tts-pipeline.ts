import { randomUUID } from "node:crypto";
import { TalkError } from "../errors.js";
import type { TalkLogger } from "../logger.js";
import type { AgentMessage, AgentProvider } from "../provider-types.js";
import type { TalkSession, TalkTurn } from "../session-types.js";
import type { TerminalReason, TranscriptPayload } from "../talk-events.js";
import type { AudioFormat } from "../talk-types.js";
import type { TalkAudioSink, TalkSessionController, TalkTextInput } from "./controller-types.js";
import type {
  PipelineFaults,
  PipelineProviderResolver,
  ResolvedPipelineOptions,
} from "./pipeline-options.js";
import type { ProviderFaultKind } from "../faults/fault-options.js";
import type { ProviderKind } from "../provider-types.js";
import { toTalkError } from "../errors.js";
import { pcm16FromBytes } from "../../codecs/index.js";
import {
  checkAppend,
  checkAppendPcm,
  closeSessionClearingOutput,
  failTurn,
  isCancellation,
  SinkSlot,
} from "./pipeline-support.js";
import type { SttCapture } from "./stt-capture.js";
import { startUserTurnCapture } from "./user-turn-capture.js";
import { streamAgentAnswer, type AgentAnswer } from "./agent-answer.js";
import { buildAgentMessages, ConversationHistory } from "./agent-context.js";
import { TtsQueue, type SpeechSettings } from "./tts-queue.js";
import type { VoiceDirective } from "../speech/voice-directive.js";

export interface SttTtsPipelineDeps {
  session: TalkSession;
  providers: PipelineProviderResolver;
  options: ResolvedPipelineOptions;
  logger: TalkLogger;
  inputFormat: AudioFormat;
  outputFormat: AudioFormat;
  sink: TalkAudioSink | undefined;
  /** See SessionControllerDeps.faults. */
  faults?: PipelineFaults | undefined;
}

/**
 * stt-tts over managed-room: explicit turn verbs drive a walkie-talkie loop.
 *
 *   startTurn  -> capture + STT stream (work "stt")
 *   appendAudio-> converted to the STT format and streamed
 *   endTurn    -> STT final -> transcript.done (user) -> agent consult
 *                 (work "agent-consult", output scope) -> voice directive
 *                 parser -> smart chunker -> output.text.* and, per chunk as
 *                 soon as it is complete, an ordered TTS queue (work "tts"
 *                 per chunk, prefetched; "output-stream" plays them in
 *                 order) -> output.audio.* + sink. First audio follows the
 *                 first chunk, not the whole answer.
 *
 * Audio with no active (still capturing) turn is rejected with no_active_turn
 * rather than starting one: a turn here is an explicit press, and starting
 * one from raw audio would let silence or echo supersede (cancel) the
 * assistant's answer, which seed 001 forbids. Speech-gated turn starts belong
 * to adapters (VAD) or the realtime pipeline (provider speech_started).
 */
export class SttTtsPipeline implements TalkSessionController, TalkTextInput {
  readonly session: TalkSession;
  /** Nothing to connect: ready at once (see SessionController.ready). */
  readonly ready: Promise<void> = Promise.resolve();
  readonly #deps: SttTtsPipelineDeps;
  readonly #sink: SinkSlot;
  readonly #history: ConversationHistory;
  /** Session-wide TTS voice; a voice directive without `once` changes it. */
  #voice: { voice?: string; speed: number };
  #capture: SttCapture | undefined;
  #closing: Promise<void> | undefined;
  /** The last turn reported to the failure path (one report per turn). */
  #faultedTurn: string | undefined;

  constructor(deps: SttTtsPipelineDeps) {
    this.session = deps.session;
    this.#deps = deps;
    this.#sink = new SinkSlot(deps.sink, deps.logger, deps.session.id);
    this.#history = new ConversationHistory(deps.options.historyEntries);
    this.#voice = {
      speed: deps.options.speed,
      ...(deps.options.voice !== undefined ? { voice: deps.options.voice } : {}),
    };
  }

  get inputFormat(): AudioFormat {
    return this.#deps.inputFormat;
  }

  appendAudio(data: Uint8Array): void {
    if (!checkAppend(this.session, data, this.#deps.inputFormat, this.#deps.options.maxAppendBytes)) return;
    this.#capturePcm(pcm16FromBytes(data));
  }

  appendPcm(pcm: Int16Array): void {
    if (!checkAppendPcm(this.session, pcm, this.#deps.inputFormat, this.#deps.options.maxAppendBytes)) return;
    this.#capturePcm(pcm);
  }

  #capturePcm(pcm: Int16Array): void {
    const turn = this.session.activeTurn;
    const capture = this.#capture;
    if (!turn || turn.state !== "active" || !capture || capture.turnId !== turn.id) {
      throw new TalkError("no_active_turn", "Start a turn (talk.session.startTurn) before sending audio.");
    }
    capture.write(pcm);
  }

  startTurn(): TalkTurn {
    const stt = this.#require("stt", this.#deps.providers.stt(this.session));
    const previousOutput = this.session.activeOutput;
    // Pressing to talk while the assistant answers supersedes (cancels) that answer.
    const turn = this.session.startTurn({ reason: "superseded" });
    if (previousOutput?.signal.aborted) {
      this.#sink.clear({
        turnId: previousOutput.turnId,
        itemId: previousOutput.itemId,
        reason: "superseded",
      });
    }
    this.#capture?.close();
    this.#capture = startUserTurnCapture(
      { ...this.#deps, fail: (turnId, err) => this.#failed(turnId, err, "stt") },
      stt,
      turn,
      (turnId) => this.endTurn(turnId),
    );
    return turn;
  }

  async endTurn(turnId: string): Promise<void> {
    const turn = this.session.activeTurn;
    // session.endTurn rejects a stale turnId before touching any state.
    this.session.endTurn(turnId);
    const capture = this.#capture;
    this.#capture = undefined;
    if (!turn || !capture || capture.turnId !== turnId) return;
    const bytes = capture.inputBytes;
    this.session.emit({
      type: "input.audio.committed",
      turnId,
      payload: {
        bytes,
        durationMs:
          (bytes * 1000) / (2 * this.#deps.inputFormat.channels * this.#deps.inputFormat.sampleRate),
      },
    });
    // The RPC acknowledges the end of the user turn; the answer streams as events.
    void this.#answer(turn, capture);
  }

  cancelTurn(turnId: string | undefined, reason: TerminalReason): boolean {
    const output = this.session.activeOutput;
    const cancelled = this.session.cancelTurn(turnId, reason);
    if (!cancelled) return false;
    if (this.#capture && this.#capture.turnId !== this.session.activeTurn?.id) {
      this.#capture.close();
      this.#capture = undefined;
    }
    if (output?.signal.aborted) this.#sink.clear({ turnId: output.turnId, itemId: output.itemId, reason });
    return true;
  }

  cancelOutput(turnId: string | undefined, reason: TerminalReason): boolean {
    const output = this.session.activeOutput;
    const cancelled = this.session.cancelOutput(turnId, reason);
    if (cancelled && output) this.#sink.clear({ turnId: output.turnId, itemId: output.itemId, reason });
    return cancelled;
  }

  submitToolResult(callId: string, _output: string): void {
    // Agent-consult answers here never surface provider tool calls to the client.
    throw new TalkError("tool_not_found", `No pending tool call ${callId} in this session.`);
  }

  setAudioSink(sink: TalkAudioSink | undefined): void {
    this.#sink.set(sink);
  }

  say(text: string): void {
    const { session } = this;
    const tts = this.#require("tts", this.#deps.providers.tts(session));
    const turn = this.#textTurn("system");
    session.endTurn(turn.id);
    const itemId = randomUUID();
    const output = session.beginOutput({ turnId: turn.id, itemId });
    session.emit({ type: "output.text.done", turnId: turn.id, itemId, final: true, payload: { text } });
    this.#history.add("assistant", text);
    const queue = new TtsQueue({
      session,
      tts,
      outputFormat: this.#deps.outputFormat,
      sink: this.#sink.current,
      turnId: turn.id,
      itemId,
      prefetch: this.#deps.options.brain.ttsPrefetch,
      logger: this.#deps.logger,
    });
    const playing = queue.play();
    queue.push(text, this.#settings());
    queue.end();
    playing.then(
      () => {
        if (!output.signal.aborted) session.endOutput(itemId);
      },
      (err: unknown) => {
        if (!isCancellation(err, turn.signal)) this.#failed(turn.id, err, "tts");
      },
    );
  }

  sendUserText(text: string, meta: Record<string, string> = {}): void {
    const turn = this.#textTurn("user");
    this.session.endTurn(turn.id);
    this.session.emit({
      type: "transcript.done",
      turnId: turn.id,
      final: true,
      payload: { ...meta, role: "user", text },
    });
    void this.#respond(turn, text);
  }

  /** A turn with no audio: supersedes (interrupts) output still playing, ends a capture in progress. */
  #textTurn(source: string): TalkTurn {
    const previousOutput = this.session.activeOutput;
    const current = this.session.activeTurn;
    if (current?.state === "active") this.cancelTurn(current.id, "superseded");
    const turn = this.session.startTurn({ reason: "superseded", source });
    if (previousOutput?.signal.aborted) {
      this.#sink.clear({
        turnId: previousOutput.turnId,
        itemId: previousOutput.itemId,
        reason: "superseded",
      });
    }
    return turn;
  }

  close(reason: TerminalReason): Promise<void> {
    this.#closing ??= this.#close(reason);
    return this.#closing;
  }

  async #close(reason: TerminalReason): Promise<void> {
    const closed = closeSessionClearingOutput(this.session, this.#sink, reason);
    this.#capture?.close();
    this.#capture = undefined;
    await closed;
  }

  async #answer(turn: TalkTurn, capture: SttCapture): Promise<void> {
    const { session } = this;
    const turnId = turn.id;
    try {
      let heard: string;
      try {
        ({ text: heard } = await capture.finish());
      } catch (err) {
        if (isCancellation(err, turn.signal)) return;
        this.#failed(turnId, err, "stt");
        return;
      }
      const text = heard.trim();
      const transcript: TranscriptPayload = { role: "user", text };
      session.emit({ type: "transcript.done", turnId, final: true, payload: transcript });
      // Nothing heard, nothing to answer: the turn simply ends.
      if (!text) return;
      await this.#respond(turn, text);
    } catch (err) {
      if (isCancellation(err, turn.signal)) return;
      failTurn(session, this.#deps.logger, turnId, err);
    }
  }

  /** Agent consult then TTS for what the user said (or typed) in `turn`. */
  async #respond(turn: TalkTurn, text: string): Promise<void> {
    const { session } = this;
    const turnId = turn.id;
    try {
      const agent = this.#require("agent", this.#deps.providers.agent(session));
      const tts = this.#require("tts", this.#deps.providers.tts(session));
      const o = this.#deps.options;
      const messages = buildAgentMessages({
        persona: o.persona,
        metadata: session.metadata,
        history: this.#history.entries,
        historyEntries: o.historyEntries,
        request: text,
      });
      this.#history.add("user", text);

      const itemId = randomUUID();
      // Output begins with the answer's text, so cancelOutput also stops an answer still being thought of.
      session.beginOutput({ turnId, itemId });
      const queue = new TtsQueue({
        session,
        tts,
        outputFormat: this.#deps.outputFormat,
        sink: this.#sink.current,
        turnId,
        itemId,
        prefetch: o.brain.ttsPrefetch,
        logger: this.#deps.logger,
      });
      const playing = queue.play();
      // A TTS failure fails the turn at once (the consult with it), not when the consult is over.
      playing.catch((err: unknown) => {
        if (!isCancellation(err, turn.signal)) this.#failed(turnId, err, "tts");
      });
      let answer: AgentAnswer;
      try {
        answer = await this.#consult(agent, turnId, itemId, messages, queue);
      } catch (err) {
        if (isCancellation(err, turn.signal)) return;
        this.#failed(turnId, err, "agent");
        return;
      }
      session.emit({ type: "output.text.done", turnId, itemId, final: true, payload: { text: answer.text } });
      this.#history.add("assistant", answer.text);
      queue.end();
      await playing;
      session.endOutput(itemId);
    } catch (err) {
      if (isCancellation(err, turn.signal)) return;
      this.#failed(turnId, err, "tts");
    }
  }

  /**
   * A provider failed the turn (after the providers' own retries and
   * fallbacks): the turn fails as before (session.error, turn.cancelled), and
   * the leg's failure path hears of it once per turn, so the caller is told.
   */
  #failed(turnId: string, err: unknown, provider: ProviderKind): void {
    const { session } = this;
    // The recognizer's failure reaches here twice (its own report, then the turn's end): once is enough.
    if (this.#faultedTurn === turnId) return;
    this.#faultedTurn = turnId;
    failTurn(session, this.#deps.logger, turnId, err);
    const faults = this.#deps.faults;
    if (!faults || session.state !== "active" || this.#closing) return;
    const error = toTalkError(err, "provider_error");
    const kind: ProviderFaultKind =
      error.code === "timeout"
        ? "stalled"
        : error.code === "provider_unavailable"
          ? "connect_failed"
          : "provider_error";
    faults.handler.fault({ kind, provider, message: error.message });
  }

  /**
   * The consult, as output-scoped work (cancelOutput stops it too): its chunks
   * go to the TTS queue as soon as they are complete; a progress cue is spoken
   * when the agent is slow to say anything; a timeout is spoken as an apology
   * and reported as tool.error (agent_consult, timeout), never left as silence.
   */
  #consult(
    agent: AgentProvider,
    turnId: string,
    itemId: string,
    messages: AgentMessage[],
    queue: TtsQueue,
  ): Promise<AgentAnswer> {
    const { session } = this;
    const brain = this.#deps.options.brain;
    let reply: SpeechSettings = this.#settings();
    return session.runWork(
      "agent-consult",
      async (signal) => {
        const answer = await streamAgentAnswer({
          agent,
          sessionId: session.id,
          turnId,
          messages,
          signal,
          chunker: brain.chunker,
          consultTimeoutMs: brain.consultTimeoutMs,
          progressCueMs: brain.progressCueMs,
          logger: this.#deps.logger,
          onText: (text) => session.emit({ type: "output.text.delta", turnId, itemId, payload: { text } }),
          onDirective: (directive) => (reply = this.#applyDirective(directive)),
          onChunk: (chunk) => queue.push(chunk, reply),
          onProgressCue: () => queue.push(brain.progressCueText, this.#settings()),
        });
        if (answer.timedOut) {
          session.emit({
            type: "tool.error",
            turnId,
            callId: `consult-${itemId}`,
            itemId,
            payload: { name: "agent_consult", code: "timeout", message: "The agent did not answer in time." },
          });
          queue.push(brain.apologyText, this.#settings());
        }
        return answer;
      },
      { turnId, scope: "output" },
    );
  }

  /** Session-wide TTS settings (config, then directives without `once`). */
  #settings(): SpeechSettings {
    return {
      speed: this.#voice.speed,
      ...(this.#voice.voice !== undefined ? { voice: this.#voice.voice } : {}),
    };
  }

  /** Applies a voice directive (seed 004): returns this reply's settings; without `once` the session's change too. */
  #applyDirective(d: VoiceDirective): SpeechSettings {
    const current = this.#settings();
    const voice = d.voice ?? current.voice;
    const next = { speed: d.speed ?? current.speed, ...(voice !== undefined ? { voice } : {}) };
    const unsupported = (["model", "stability", "similarity", "style"] as const).filter(
      (k) => d[k] !== undefined,
    );
    if (unsupported.length > 0) {
      this.#deps.logger.info(
        { sessionId: this.session.id, keys: unsupported },
        "voice directive keys the TTS contract does not carry are ignored",
      );
    }
    if (!d.once) this.#voice = { ...next };
    // A voice the TTS lacks falls back to the earlier settings rather than silence.
    return d.voice !== undefined ? { ...next, fallback: current } : next;
  }

  #require<T>(kind: string, provider: T | undefined): T {
    if (!provider)
      throw new TalkError("provider_not_found", `No ${kind} provider is configured for this session.`);
    return provider;
  }
}
