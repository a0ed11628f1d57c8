import { randomUUID } from "node:crypto";
import { audioFromBytes, expectPcm, TalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type {
  AgentMessage,
  AgentProvider,
  ProviderDescriptor,
  RealtimeToolDefinition,
  TtsProvider,
} from "../../core/index.js";
import { NOOP_LOGGER } from "../../core/index.js";
import type { TalkOutput, TalkSession, TalkTurn } from "../../core/index.js";
import type { TerminalReason, TranscriptPayload } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import type {
  DirectToolCall,
  DirectToolResult,
  TalkAudioSink,
  TalkDirectTools,
  TalkOutputHold,
  TalkSessionController,
  TalkTextInput,
  WordProbe,
} from "./controller-types.js";
import { DirectToolTurns } from "./direct-tools-turns.js";
import type {
  PipelineFaults,
  PipelineProviderResolver,
  PipelineToolDispatcher,
  ResolvedPipelineOptions,
} from "./pipeline-options.js";
import type { ProviderFaultKind } from "../../core/index.js";
import type { ProviderKind } from "../../core/index.js";
import { toTalkError } from "../../core/index.js";
import {
  checkAppend,
  checkAppendPcm,
  closeSessionClearingOutput,
  failTurn,
  isCancellation,
  SinkSlot,
} from "./pipeline-support.js";
import { SttCapture } from "./stt-capture.js";
import { startUserTurnCapture } from "./user-turn-capture.js";
import type { AgentAnswer } from "./agent-answer.js";
import { agentToolsFor, runAgentToolRounds } from "./agent-tool-rounds.js";
import { consultCallId, SessionVoice, spokenConsult } from "./spoken-consult.js";
import { buildAgentMessages, ConversationHistory } from "./agent-context.js";
import { TtsQueue } from "./tts-queue.js";
import { PreparedAnswer } from "./prepared-answer.js";

export interface SttTtsPipelineDeps {
  session: TalkSession;
  providers: PipelineProviderResolver;
  options: ResolvedPipelineOptions;
  logger: TalkLogger;
  inputFormat: AudioFormat;
  outputFormat: AudioFormat;
  sink: TalkAudioSink | undefined;
  /** The one tool dispatch path; the agent is offered its tools (agent-tool-rounds.ts). Default none. */
  tools?: PipelineToolDispatcher | undefined;
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
 *                 first chunk, not the whole answer. An agent that calls
 *                 tools answers in rounds (agent-tool-rounds.ts), each
 *                 round its own output item, the calls run between them.
 *
 * With the direct-tools brain no agent answers: a turn ends with its
 * transcript, and the session's trusted surface answers it with callTool
 * (direct-tools-turns.ts): a named tool under policy, its result spoken.
 *
 * Audio with no active (still capturing) turn is rejected with no_active_turn
 * rather than starting one: a turn here is an explicit press, and starting
 * one from raw audio would let silence or echo supersede (cancel) the
 * assistant's answer, which seed 001 forbids. Speech-gated turn starts belong
 * to adapters (VAD) or the realtime pipeline (provider speech_started).
 */
export class SttTtsPipeline implements TalkSessionController, TalkTextInput, TalkDirectTools, TalkOutputHold {
  readonly session: TalkSession;
  /** Nothing to connect: ready at once (see SessionController.ready). */
  readonly ready: Promise<void> = Promise.resolve();
  readonly #deps: SttTtsPipelineDeps;
  readonly #sink: SinkSlot;
  readonly #history: ConversationHistory;
  /** Session-wide TTS voice; a voice directive without `once` changes it. */
  readonly #voice: SessionVoice;
  #capture: SttCapture | undefined;
  #closing: Promise<void> | undefined;
  /** The last turn reported to the failure path (one report per turn). */
  #faultedTurn: string | undefined;
  /** The turn the holding line was said for (once a turn). */
  #heldTurn: string | undefined;
  /** The turn whose agent's tools are running: a line said meanwhile (a transfer's announcement) is part of it. */
  #toolTurn: string | undefined;
  readonly #direct: DirectToolTurns;
  /** The TTS queue of each output item still playing: what holdOutput / resumeOutput act on. */
  readonly #queues = new Map<string, TtsQueue>();
  /** The answer consulted ahead of the end of turn (prepareAnswer), until a turn's answer takes or drops it. */
  readonly #prepared = new PreparedAnswer();

  constructor(deps: SttTtsPipelineDeps) {
    this.session = deps.session;
    this.#deps = deps;
    this.#sink = new SinkSlot(deps.sink, deps.logger, deps.session.id);
    this.#history = new ConversationHistory(deps.options.historyEntries);
    this.#voice = new SessionVoice(
      { speed: deps.options.speed, voice: deps.options.voice },
      deps.logger,
      deps.session.id,
    );
    this.#direct = new DirectToolTurns({
      session: deps.session,
      tools: deps.tools,
      openTurn: () => {
        const turn = this.#textTurn("client");
        this.session.endTurn(turn.id);
        return turn;
      },
      speak: (turn, text, parentId) => {
        const tts = deps.providers.tts(this.session);
        if (!tts) {
          this.#failed(turn.id, new TalkError("provider_not_found", "No tts provider is configured."), "tts");
          return Promise.resolve(undefined);
        }
        const line = (itemId: string, queue: TtsQueue) => this.#fixedLine(turn.id, itemId, queue, text);
        return this.#speakItem(turn, tts, line, parentId);
      },
    });
  }

  get inputFormat(): AudioFormat {
    return this.#deps.inputFormat;
  }

  appendAudio(data: Uint8Array): void {
    if (!checkAppend(this.session, data, this.#deps.inputFormat, this.#deps.options.maxAppendBytes)) return;
    // Recognized as samples: an encoded input format is refused, never read as PCM.
    this.#capturePcm(
      expectPcm(audioFromBytes(data, this.#deps.inputFormat), "An stt-tts session's input").samples,
    );
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
    // Pressing to talk while the assistant answers supersedes (cancels) that answer: the sink is cleared
    // first, before the terminal event fans out (a turn still active makes startTurn throw: nothing cleared).
    if (previousOutput && this.session.activeTurn?.state !== "active")
      this.#sink.clear({
        turnId: previousOutput.turnId,
        itemId: previousOutput.itemId,
        reason: "superseded",
      });
    const turn = this.session.startTurn({ reason: "superseded" });
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
    capture.reportInput();
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

  // Both verbs run the interruption in its one order (docs/architecture.md): the line is cleared first,
  // so the listener stops hearing the answer before the terminal event fans out to subscribers.
  cancelTurn(turnId: string | undefined, reason: TerminalReason): boolean {
    const output = this.#outputOf(turnId);
    if (output) this.#sink.clear({ turnId: output.turnId, itemId: output.itemId, reason });
    const cancelled = this.session.cancelTurn(turnId, reason);
    if (!cancelled) return false;
    if (this.#capture && this.#capture.turnId !== this.session.activeTurn?.id) {
      this.#capture.close();
      this.#capture = undefined;
    }
    return true;
  }

  cancelOutput(turnId: string | undefined, reason: TerminalReason): boolean {
    const output = this.#outputOf(turnId);
    if (output) this.#sink.clear({ turnId: output.turnId, itemId: output.itemId, reason });
    return this.session.cancelOutput(turnId, reason);
  }

  /**
   * Barge-in (the leg decided): the sink cleared before anything fans out, then one terminal event
   * (`turn.cancelled` while the turn's agent or tool still runs, else `output.audio.cancelled`); the
   * output's abort drains its TTS queue.
   */
  interrupt(output: TalkOutput): boolean {
    if (this.session.activeOutput !== output) return false;
    this.#sink.clear({ turnId: output.turnId, itemId: output.itemId, reason: "barge_in" });
    return this.session.interruptOutput("barge_in");
  }

  /** The active output a verb naming `turnId` (or none) stops; undefined when it is another turn's. */
  #outputOf(turnId: string | undefined): TalkOutput | undefined {
    const output = this.session.activeOutput;
    return output && !output.signal.aborted && (turnId === undefined || output.turnId === turnId)
      ? output
      : undefined;
  }

  holdOutput(): boolean {
    const output = this.session.activeOutput;
    if (!output || output.signal.aborted) return false;
    return this.#queues.get(output.itemId)?.hold() ?? false;
  }

  resumeOutput(reason: "backchannel" | "no_words"): boolean {
    const output = this.session.activeOutput;
    if (!output || output.signal.aborted) return false;
    return this.#queues.get(output.itemId)?.resume(reason) ?? false;
  }

  /**
   * The session's recognizer on speech over the active output (no turn: a turn would supersede the
   * answer). Its work runs in the answer's turn, and the output's end ends it.
   */
  probeWords(onText: (text: string) => void): WordProbe | undefined {
    const output = this.session.activeOutput;
    const stt = this.#deps.providers.stt(this.session);
    if (!output || output.signal.aborted || !stt) return undefined;
    let closed = false;
    let final: Promise<string> | undefined;
    const capture = new SttCapture(
      {
        session: this.session,
        stt,
        inputFormat: this.#deps.inputFormat,
        language: this.#deps.options.language,
        silenceTimeoutMs: 0,
        logger: this.#deps.logger,
        // The words decide while the caller speaks: not only at their pause.
        eagerPartials: true,
        onPartial: (_turnId, text) => {
          if (!closed) onText(text);
        },
        onError: (turnId, err) =>
          this.#deps.logger.debug({ err, turnId, sessionId: this.session.id }, "barge-in word probe failed"),
      },
      { id: output.turnId, signal: output.signal },
    );
    return {
      write: (pcm) => {
        if (!closed) capture.write(pcm);
      },
      finish: () => {
        closed = true;
        // A recognizer that reports words only when it ends an utterance (the local one) gives them here.
        final ??= capture.finish().then(
          (r) => r.text,
          () => "",
        );
        return final;
      },
    };
  }

  /** Keeps `queue` where holdOutput finds it while it plays. */
  #track(itemId: string, queue: TtsQueue, playing: Promise<unknown>): void {
    this.#queues.set(itemId, queue);
    const forget = (): void => void this.#queues.delete(itemId);
    playing.then(forget, forget);
  }

  submitToolResult(callId: string, _output: string): void {
    // Agent-consult answers here never surface provider tool calls to the client.
    throw new TalkError("tool_not_found", `No pending tool call ${callId} in this session.`);
  }

  callTool(request: DirectToolCall): Promise<DirectToolResult> {
    return this.#direct.call(request);
  }

  setAudioSink(sink: TalkAudioSink | undefined): void {
    this.#sink.set(sink);
  }

  say(text: string): void {
    const { session } = this;
    const tts = this.#require("tts", this.#deps.providers.tts(session));
    const current = session.activeTurn;
    if (current && current.id === this.#toolTurn && !session.activeOutput) {
      // Said by a running tool: a new turn would supersede, and so cancel, the tool that speaks.
      void this.#speakItem(current, tts, (itemId, queue) => this.#fixedLine(current.id, itemId, queue, text));
      return;
    }
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
    this.#track(itemId, queue, playing);
    queue.push(text, this.#voice.settings());
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

  callerPause(turnId: string, paused: boolean): void {
    if (this.#capture?.turnId !== turnId) return;
    if (paused) this.#capture.pause();
    else this.#capture.resume();
  }

  prepareAnswer(turnId: string, text: string): void {
    const { session } = this;
    const turn = session.activeTurn;
    if (session.brain === "direct-tools" || session.state !== "active") return;
    if (!turn || turn.id !== turnId || turn.state !== "active" || turn.signal.aborted) return;
    const agent = this.#deps.providers.agent(session);
    if (!agent) return;
    // The first round's request exactly as #respond will build it if the turn ends with these words.
    const first = this.#firstRound(agent, text.trim(), NOOP_LOGGER);
    this.#prepared.prepare(agent, { sessionId: session.id, turnId, ...first }, turn.signal);
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
    this.#prepared.close();
    const { prepared, used, discarded } = this.#prepared.stats;
    if (prepared > 0 && this.session.state === "active") {
      // In the session's usage record (the usage ledger, the console): consults whose answer nobody heard
      // cost their input tokens, and an aborted stream reports none, so they are counted here.
      const wasted = Object.values(discarded).reduce((n, k) => n + (k ?? 0), 0);
      this.#deps.logger.info(
        { sessionId: this.session.id, preparedAnswers: { prepared, used, discarded } },
        "answers prepared ahead of the end of turn",
      );
      this.session.emit({
        type: "usage.metrics",
        payload: { kind: "agent", preparedAnswers: { prepared, used, discarded: wasted } },
      });
    }
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
      const late = this.#holdingTimer(turnId, "stt", this.#deps.providers.stt(session));
      try {
        ({ text: heard } = await capture.finish());
      } catch (err) {
        if (isCancellation(err, turn.signal)) return;
        this.#failed(turnId, err, "stt");
        return;
      } finally {
        clearTimeout(late);
      }
      const text = heard.trim();
      const transcript: TranscriptPayload = { role: "user", text };
      session.emit({ type: "transcript.done", turnId, final: true, payload: transcript });
      // Nothing heard, nothing to answer: the turn simply ends (and an answer prepared for words is not wanted).
      if (!text) {
        this.#prepared.discard("words_changed");
        return;
      }
      await this.#respond(turn, text);
    } catch (err) {
      if (isCancellation(err, turn.signal)) return;
      failTurn(session, this.#deps.logger, turnId, err);
    }
  }

  /** Agent consult (with its tool rounds) then TTS for what the user said (or typed) in `turn`. */
  async #respond(turn: TalkTurn, text: string): Promise<void> {
    const { session } = this;
    // No agent answers a direct-tools session: its surface does, with callTool.
    if (session.brain === "direct-tools") return;
    try {
      // The answer prepared for these words, if one was (the same request), else a consult of its own.
      const agent = this.#prepared.agent(this.#require("agent", this.#deps.providers.agent(session)));
      const tts = this.#require("tts", this.#deps.providers.tts(session));
      const o = this.#deps.options;
      const { messages, tools: definitions } = this.#firstRound(agent, text, this.#deps.logger);
      this.#history.add("user", text);
      await runAgentToolRounds({
        session,
        turnId: turn.id,
        signal: turn.signal,
        tools: this.#deps.tools,
        definitions,
        messages,
        maxRounds: o.brain.maxToolRounds,
        toolErrorText: o.brain.toolErrorText,
        provider: agent.id,
        logger: this.#deps.logger,
        speakRound: (roundMessages, tools) =>
          this.#speakItem(turn, tts, (itemId, queue) =>
            spokenConsult({
              session,
              agent,
              turnId: turn.id,
              itemId,
              messages: roundMessages,
              tools,
              queue,
              voice: this.#voice,
              brain: o.brain,
              logger: this.#deps.logger,
            }),
          ),
        speakLine: async (line) => {
          await this.#speakItem(turn, tts, (itemId, queue) => this.#fixedLine(turn.id, itemId, queue, line));
        },
        toolsRunning: (running) => (this.#toolTurn = running ? turn.id : undefined),
      });
    } catch (err) {
      if (isCancellation(err, turn.signal)) return;
      this.#failed(turn.id, err, "agent");
    }
  }

  /** The first round's request for the caller's `text`: the messages (persona, history, the words) and tools. */
  #firstRound(
    agent: AgentProvider,
    text: string,
    logger: TalkLogger,
  ): { messages: AgentMessage[]; tools: RealtimeToolDefinition[] } {
    const o = this.#deps.options;
    const messages = buildAgentMessages({
      persona: o.persona,
      metadata: this.session.metadata,
      history: this.#history.entries,
      historyEntries: o.historyEntries,
      request: text,
    });
    return { messages, tools: agentToolsFor(this.session, agent, this.#deps.tools, logger) };
  }

  /**
   * One output item of `turn`: its text from `produce` goes chunk by chunk to
   * an ordered TTS queue (first audio after the first chunk), and the item
   * ends once played. Undefined when cancelled or failed (reported here).
   */
  async #speakItem(
    turn: TalkTurn,
    tts: TtsProvider,
    produce: (itemId: string, queue: TtsQueue) => Promise<AgentAnswer>,
    parentId?: string,
  ): Promise<AgentAnswer | undefined> {
    const { session } = this;
    const turnId = turn.id;
    try {
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
        // The consult writing this answer (its callId, as on its tool.error), or the direct tool call, is the TTS job's parent.
        parentId: parentId ?? consultCallId(itemId),
        prefetch: this.#deps.options.brain.ttsPrefetch,
        logger: this.#deps.logger,
        ...(this.#deps.faults ? { firstAudioLate: () => this.#holdingTimer(turnId, "tts", tts) } : {}),
      });
      const playing = queue.play();
      this.#track(itemId, queue, playing);
      // A TTS failure fails the turn at once (the consult with it), not when the consult is over.
      playing.catch((err: unknown) => {
        if (!isCancellation(err, turn.signal)) this.#failed(turnId, err, "tts");
      });
      let answer: AgentAnswer;
      try {
        answer = await produce(itemId, queue);
      } catch (err) {
        if (!isCancellation(err, turn.signal)) this.#failed(turnId, err, "agent");
        return undefined;
      }
      session.emit({ type: "output.text.done", turnId, itemId, final: true, payload: { text: answer.text } });
      this.#history.add("assistant", answer.text);
      queue.end();
      await playing;
      session.endOutput(itemId);
      return answer;
    } catch (err) {
      if (!isCancellation(err, turn.signal)) this.#failed(turnId, err, "tts");
      return undefined;
    }
  }

  async #fixedLine(turnId: string, itemId: string, queue: TtsQueue, text: string): Promise<AgentAnswer> {
    this.session.emit({ type: "output.text.delta", turnId, itemId, payload: { text } });
    queue.push(text, this.#voice.settings());
    return { text, chunks: 1, timedOut: false, toolCalls: [] };
  }

  /**
   * Arms the holding line for `turnId`: when `provider` is still awaited
   * after talk.faults.holdingAfterMs, the leg says it (once a turn). The
   * caller clears the timer when the provider answers or fails. A local
   * engine first in its chain is not timed (its speed is the machine's, as
   * for the stall timeouts).
   */
  #holdingTimer(
    turnId: string,
    provider: "stt" | "tts",
    engine: ProviderDescriptor | undefined,
  ): NodeJS.Timeout | undefined {
    const faults = this.#deps.faults;
    const after = faults?.options.holdingAfterMs ?? 0;
    if (!faults || after <= 0 || this.#heldTurn === turnId || engine?.capabilities.local === true)
      return undefined;
    const timer = setTimeout(() => {
      const turn = this.session.activeTurn;
      if (this.#heldTurn === turnId || this.#closing || this.#faultedTurn === turnId) return;
      if (turn && turn.id !== turnId) return;
      this.#heldTurn = turnId;
      faults.handler.holding(provider);
    }, after);
    timer.unref?.();
    return timer;
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

  #require<T>(kind: string, provider: T | undefined): T {
    if (!provider)
      throw new TalkError("provider_not_found", `No ${kind} provider is configured for this session.`);
    return provider;
  }
}
