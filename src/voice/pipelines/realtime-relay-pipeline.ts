import { audioFromBytes, expectPcm, pcmChunk, TalkError, toTalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type {
  AgentProvider,
  RealtimeProvider,
  RealtimeProviderEvent,
  RealtimeVoiceSession,
  SttProvider,
} from "../../core/index.js";
import type { TalkOutput, TalkSession, TalkTurn } from "../../core/index.js";
import type { TerminalReason } from "../../core/index.js";
import type { AudioChunk, AudioFormat } from "../../core/index.js";
import type { TalkAudioSink, TalkSessionController, TalkTextInput } from "./controller-types.js";
import type {
  PipelineFaults,
  PipelineToolDispatcher,
  ResolvedPipelineOptions,
  SpeechOverOutput,
} from "./pipeline-options.js";
import { RealtimeRecovery } from "./realtime-recovery.js";
import { toolOwnershipOf, type ReplyPath, type ToolOwnership } from "./brain-options.js";
import type { LocalSpeechTurns } from "./local-speech-turns.js";
import { createLocalPath } from "./realtime-local-path.js";
import { ProgressiveSpeech } from "./progressive-speech.js";
import { RealtimeEventMapper } from "./realtime-event-mapper.js";
import { RealtimeOutput } from "./realtime-output.js";
import { providerFormat, RealtimeInput } from "./realtime-input.js";
import { RealtimeToolCalls } from "./realtime-tool-calls.js";
import { providerToolsFor } from "./realtime-tool-ownership.js";
import { checkAppend, checkAppendPcm, closeSessionClearingOutput, SinkSlot } from "./pipeline-support.js";
import { InputAudioEvents } from "./input-audio-events.js";

export interface RealtimeRelayPipelineDeps {
  session: TalkSession;
  provider: RealtimeProvider;
  tools: PipelineToolDispatcher | undefined;
  options: ResolvedPipelineOptions;
  logger: TalkLogger;
  inputFormat: AudioFormat;
  outputFormat: AudioFormat;
  sink: TalkAudioSink | undefined;
  /** See SessionControllerDeps.turns. */
  turns: "pipeline" | "leg";
  /** See SessionControllerDeps.speechOverOutput. */
  speechOverOutput?: SpeechOverOutput | undefined;
  /** See SessionControllerDeps.faults. */
  faults?: PipelineFaults | undefined;
  /** Reply paths bridge and brain: the session's STT (the caller's ears). */
  stt?: SttProvider | undefined;
  /** Reply path brain: the agent that plans the replies. */
  agent?: AgentProvider | undefined;
}

/**
 * realtime over gateway-relay: the Gateway owns one provider session and
 * relays audio both ways. This class holds the provider connection and the
 * session verbs; its stages do the rest: RealtimeInput (the caller's audio
 * to the provider, held while connecting), RealtimeEventMapper (provider
 * events -> the Talk turn model; speech over an answer is a trigger for
 * the media leg, whose one BargeInPolicy decides and which calls `interrupt`),
 * RealtimeOutput (audio items, sink, delta coalescing, heard-before-done),
 * RealtimeToolCalls (core's one dispatch path, progressive speech) and, for
 * reply paths bridge and brain (latched at creation), the local path
 * (realtime-local-path.ts: the caller heard by the local STT instead).
 */
export class RealtimeRelayPipeline implements TalkSessionController, TalkTextInput {
  readonly session: TalkSession;
  /** Resolves when the provider session is connected; rejects (and closes the session) when it cannot be. */
  readonly ready: Promise<void>;
  readonly #deps: RealtimeRelayPipelineDeps;
  readonly #sink: SinkSlot;
  /** native: the caller's audio to the provider, held while it connects. */
  readonly #input: RealtimeInput;
  readonly #providerOutput: AudioFormat;
  readonly #output: RealtimeOutput;
  readonly #events: RealtimeEventMapper;
  /** input.audio.appended for the audio forwarded to the provider. */
  readonly #appended: InputAudioEvents;
  #voice: RealtimeVoiceSession | undefined;
  /** Bumped whenever a provider session is dropped: events of an older one are ignored. */
  #generation = 0;
  /** A greeting asked for while no provider session was up; spoken once one is. */
  #pendingSay: string | undefined;
  /** The failure path: stall watchdog, the conversation so far, reconnects. */
  readonly #recovery: RealtimeRecovery;
  #closing: Promise<void> | undefined;
  /** Latched at creation (seed 003): provider_native offers and runs tools, transport_only does neither. */
  readonly toolOwnership: ToolOwnership;
  readonly #progressive: ProgressiveSpeech;
  /** The provider response in progress (response_started .. response_done). */
  #responseId: string | undefined;
  /** The turn the client started with startTurn: the client ends it (endTurn), not the provider's VAD. */
  #explicitTurn: string | undefined;
  /** Latched at creation (seed 003): who plans the replies; see brain-options.ts. */
  readonly replyPath: ReplyPath;
  /** bridge / brain: the caller's audio goes to the local STT, not to the provider. */
  readonly #local: LocalSpeechTurns | undefined;
  /** Speech heard over the answer that plays: the leg decides (and interrupts through `interrupt`). */
  readonly #speechOverOutput: SpeechOverOutput;

  constructor(deps: RealtimeRelayPipelineDeps) {
    this.session = deps.session;
    this.#deps = deps;
    this.#sink = new SinkSlot(deps.sink, deps.logger, deps.session.id);
    this.replyPath = deps.options.brain.replyPath;
    this.toolOwnership = toolOwnershipOf(this.replyPath);
    this.#progressive = new ProgressiveSpeech(() => this.#voice, deps.logger);
    this.#recovery = new RealtimeRecovery({
      session: deps.session,
      faults: deps.faults,
      instructions: deps.options.instructions,
      historyEntries: deps.options.historyEntries,
      logger: deps.logger,
      closing: () => this.#closing !== undefined,
      drop: () => this.#drop(),
      open: (instructions) => this.#open(instructions),
      close: (reason) => void this.close(reason),
    });
    const { capabilities } = deps.provider;
    this.#appended = new InputAudioEvents({
      session: deps.session,
      format: deps.inputFormat,
      intervalMs: deps.options.inputAppendedIntervalMs,
      logger: deps.logger,
    });
    this.#input = new RealtimeInput(
      deps.inputFormat,
      capabilities.inputFormats,
      deps.options.heldAudioMs,
      (bytes) => this.#appended.appended(bytes),
    );
    this.#providerOutput = providerFormat(deps.outputFormat, capabilities.outputFormats);
    this.#output = new RealtimeOutput({
      session: deps.session,
      sink: this.#sink,
      format: deps.outputFormat,
      deltaIntervalMs: deps.options.outputDeltaIntervalMs,
      // Speech that ended over an answer kept playing gets its turn once that answer is over.
      ended: () => this.#outputEnded(),
    });
    this.#speechOverOutput =
      deps.speechOverOutput ?? ((output) => (this.interrupt(output) ? "interrupted" : "kept"));
    const path = this.replyPath;
    this.#local =
      path === "native"
        ? undefined
        : createLocalPath({
            ...deps,
            path,
            speechOverOutput: this.#speechOverOutput,
            speech: this.#progressive,
            voice: () => this.#voice,
            responding: () => this.#responding,
            remember: (text) => this.#recovery.userText(text),
          });
    this.#events = new RealtimeEventMapper({
      session: deps.session,
      output: this.#output,
      toolCalls: new RealtimeToolCalls({
        session: deps.session,
        tools: deps.tools,
        ownership: this.toolOwnership,
        progressive: deps.options.brain.progressive,
        speech: this.#progressive,
        voice: () => this.#voice,
        logger: deps.logger,
      }),
      speechOverOutput: this.#speechOverOutput,
      clientEndsTurn: (turnId) => this.#explicitTurn === turnId,
      fault: (fault, fatal) => this.#recovery.failed(fault, fatal),
      closing: () => this.#closing !== undefined,
    });
    this.ready = this.#connect();
    // Failures are reported through session.error and close; `ready` is for callers that care.
    this.ready.catch(() => {});
  }

  get inputFormat(): AudioFormat {
    return this.#deps.inputFormat;
  }

  appendAudio(data: Uint8Array, base64?: string): void {
    if (!checkAppend(this.session, data, this.#deps.inputFormat, this.#deps.options.maxAppendBytes)) return;
    // Bytes of a PCM16 session are samples; of an encoded one (u-law passthrough), passed on as they are.
    // An encoded passthrough goes on unchanged, so the carrier's base64 of it still holds (no decode-encode per frame).
    this.#caller(audioFromBytes(data, this.#deps.inputFormat), base64);
  }

  appendPcm(pcm: Int16Array): void {
    if (!checkAppendPcm(this.session, pcm, this.#deps.inputFormat, this.#deps.options.maxAppendBytes)) return;
    this.#caller(pcmChunk(pcm, this.#deps.inputFormat));
  }

  #caller(audio: AudioChunk, base64?: string): void {
    if (this.#local) {
      // Outboard ASR: the provider hears nothing; the input format is PCM16 (session-controller.ts).
      this.#local.write(expectPcm(audio, "Local speech recognition").samples);
      return;
    }
    this.#input.push(audio, this.#voice, base64);
  }

  /**
   * An explicit turn (push-to-talk over the relay). While the assistant
   * answers, the answer is stopped first: the line cleared, the provider's
   * response cancelled and its item truncated at what was heard, and the
   * answering turn ends with one `turn.cancelled` (`barge_in`). Until its
   * endTurn the turn is the client's: the provider's own turn detection is
   * off (when it can be), so the provider neither ends it nor answers early.
   */
  startTurn(): TalkTurn {
    const { session } = this;
    const previous = session.activeTurn;
    // An active turn makes session.startTurn throw turn_already_active: nothing is stopped for it.
    const stopping = previous !== undefined && previous.state !== "active";
    const output = stopping ? session.activeOutput : undefined;
    let turn!: TalkTurn;
    this.#interrupt(output, "barge_in", stopping && (output !== undefined || this.#responding), () => {
      // Supersedes the answering turn: one turn.cancelled (barge_in) when anything of it still runs.
      turn = session.startTurn({ reason: "barge_in" });
      return true;
    });
    this.#explicitTurn = turn.id;
    if (this.#local) {
      this.#local.begin(turn);
      return turn;
    }
    this.#turnDetection(false);
    session.startCapture(turn.id);
    return turn;
  }

  /**
   * Ends the client's turn and asks the provider to answer now. A turn the
   * provider already ended (its own end-of-speech detection, for a provider
   * that cannot turn it off) is acknowledged without asking again; a response
   * already under way is not asked for twice.
   */
  async endTurn(turnId: string): Promise<void> {
    const { session } = this;
    const turn = session.activeTurn;
    if (turn?.id === turnId && turn.state !== "active" && this.#explicitTurn !== turnId) return;
    session.endTurn(turnId);
    if (this.#local) {
      // The local STT finalizes the words; the reply follows as events.
      if (this.#explicitTurn === turnId) this.#explicitTurn = undefined;
      void this.#local.end(turnId);
      return;
    }
    const explicit = this.#explicitTurn === turnId;
    this.#explicitTurn = undefined;
    if (!this.#responding) {
      this.#voice?.commitAudio?.();
      this.#voice?.createResponse();
    }
    if (explicit) this.#turnDetection(true);
  }

  cancelTurn(turnId: string | undefined, reason: TerminalReason): boolean {
    const explicit = this.#explicitTurn;
    const cancelled = this.#interrupt(this.#outputOf(turnId), reason, true, () =>
      this.session.cancelTurn(turnId, reason),
    );
    if (!cancelled) return false;
    if (explicit !== undefined && this.session.activeTurn?.id !== explicit) {
      this.#explicitTurn = undefined;
      this.#turnDetection(true);
    }
    return true;
  }

  cancelOutput(turnId: string | undefined, reason: TerminalReason): boolean {
    const output = this.#outputOf(turnId);
    return this.#interrupt(output, reason, output !== undefined, () =>
      this.session.cancelOutput(turnId, reason),
    );
  }

  /**
   * Barge-in on the answer that plays, as the leg decided: the one sequence
   * with one terminal event (TalkSession.interruptOutput). Speech the
   * provider already reported over that answer is the caller's turn from
   * here, as if it had interrupted by itself, so its speech_stopped ends that
   * turn and the answer flows under it.
   */
  interrupt(output: TalkOutput): boolean {
    if (this.session.activeOutput !== output) return false;
    const done = this.#interrupt(output, "barge_in", true, () => this.session.interruptOutput("barge_in"));
    if (done) this.#events.callerSpeaking();
    return done;
  }

  submitToolResult(callId: string, output: string): void {
    const tools = this.#deps.tools;
    if (!tools)
      throw new TalkError("tool_not_found", `No tool call ${callId} awaits a result in this session.`);
    // The dispatcher settles the call; #toolCall then hands the output to the provider.
    tools.submitToolResult(this.session.id, callId, output);
  }

  setAudioSink(sink: TalkAudioSink | undefined): void {
    this.#sink.set(sink);
  }

  say(text: string): void {
    if (this.session.state !== "active") throw new TalkError("session_closed");
    if (!this.#voice && this.#deps.faults) {
      // After a fault: a reconnecting session speaks the line once it is up; a leg hanging up drops it.
      if (this.#recovery.recovering) this.#pendingSay = text;
      else
        this.#deps.logger.info(
          { sessionId: this.session.id },
          "realtime: no provider session to speak the line",
        );
      return;
    }
    this.#speak(this.#requireVoice(), text);
  }

  /**
   * A verbatim line (a greeting, a farewell) in the provider's own voice: the
   * words go to the provider as content to speak, never as instructions, and
   * join the conversation so the model knows it said them.
   */
  #speak(voice: RealtimeVoiceSession, text: string): void {
    if (!voice.speakText)
      throw new TalkError(
        "capability_unsupported",
        `Provider ${this.#deps.provider.id} cannot speak a line verbatim.`,
      );
    voice.speakText(text, { remember: true });
  }

  sendUserText(text: string, meta: Record<string, string> = {}): void {
    const { session } = this;
    const voice = this.#requireVoice();
    // brain: the agent answers the text and the provider only speaks, so it needs no text input.
    if (!voice.sendText && this.replyPath !== "brain")
      throw new TalkError(
        "capability_unsupported",
        `Provider ${this.#deps.provider.id} takes no text input.`,
      );
    const output = session.activeOutput;
    if (output) this.interrupt(output);
    const current = session.activeTurn;
    const own = !current || current.state !== "active";
    const turn = own ? session.startTurn({ reason: "barge_in" }) : current;
    session.emit({
      type: "transcript.done",
      turnId: turn.id,
      final: true,
      payload: { ...meta, role: "user", text },
    });
    if (own) session.endTurn(turn.id);
    if (this.replyPath === "brain") {
      // The agent answers typed text as it answers speech; the provider only speaks.
      this.#local?.answer(turn, text);
      return;
    }
    this.#recovery.userText(text);
    voice.sendText?.(text);
  }

  close(reason: TerminalReason): Promise<void> {
    this.#closing ??= this.#close(reason);
    return this.#closing;
  }

  async #close(reason: TerminalReason): Promise<void> {
    this.#recovery.stop();
    this.#generation++;
    this.#output.reportAll();
    this.#appended.flush();
    const closed = closeSessionClearingOutput(this.session, this.#sink, reason);
    this.#input.clear();
    this.#local?.close();
    const voice = this.#voice;
    this.#voice = undefined;
    try {
      await voice?.close();
    } catch (err) {
      this.#deps.logger.warn({ err, sessionId: this.session.id }, "realtime provider session close failed");
    }
    this.#output.close();
    this.#input.close();
    await closed;
  }

  async #connect(): Promise<void> {
    const { provider, session } = this.#deps;
    if (!provider.connect) {
      throw new TalkError(
        "capability_unsupported",
        `Provider ${provider.id} cannot be driven over a gateway relay.`,
      );
    }
    try {
      await this.#open(this.#deps.options.instructions);
    } catch (err) {
      const error = toTalkError(err, "provider_unavailable");
      if (session.state !== "active" || this.#closing) throw error;
      if (this.#deps.faults) {
        // The leg's failure path takes over: the caller hears the apology, the session stays up while it recovers.
        this.#recovery.fault({ kind: "connect_failed", provider: "realtime", message: error.message });
        return;
      }
      session.emit({ type: "session.error", payload: { ...error.toJSON() } });
      void this.close("error");
      throw error;
    }
  }

  /** Opens a provider session with `instructions`; input held meanwhile is forwarded once it is up. */
  async #open(instructions: string): Promise<void> {
    const { provider, options, session } = this.#deps;
    const generation = ++this.#generation;
    const voice = await provider.connect!(
      {
        ...(options.realtimeModel !== undefined ? { model: options.realtimeModel } : {}),
        ...(options.realtimeVoice !== undefined ? { voice: options.realtimeVoice } : {}),
        instructions,
        tools: providerToolsFor(this.toolOwnership, this.#deps.tools, provider, this.#deps.logger, session),
        // brain: speech transport only; the leg's turns (talkgate's end of turn): we commit and ask.
        ...(this.replyPath === "brain" || this.#deps.turns === "leg" ? { autoRespond: false } : {}),
        inputFormat: this.#input.providerFormat,
        inputAppendMs: options.providerAppendMs,
        outputFormat: this.#providerOutput,
        signal: session.signal,
      },
      // Events of a session dropped after a fault (its own close, late audio) are ignored.
      (event) => {
        if (generation === this.#generation) this.#onEvent(event);
      },
    );
    if (session.state !== "active" || this.#closing || generation !== this.#generation) {
      await voice.close();
      throw new TalkError("session_closed");
    }
    this.#voice = voice;
    // A session reopened during the client's turn keeps that turn the client's.
    if (this.#explicitTurn !== undefined && this.#deps.turns === "pipeline") voice.setTurnDetection?.(false);
    this.#input.flush(voice);
    const pending = this.#pendingSay;
    this.#pendingSay = undefined;
    if (pending === undefined) return;
    try {
      this.#speak(voice, pending);
    } catch (err) {
      // The reconnected session stands; only the line is lost.
      this.#deps.logger.warn(
        { err, sessionId: session.id },
        "realtime: the pending line could not be spoken",
      );
    }
  }

  /** Drops the provider session after a fault: the answer it was giving is cancelled and cleared from the line. */
  #drop(): void {
    const old = this.#voice;
    this.#voice = undefined;
    this.#generation++;
    const output = this.session.activeOutput;
    // The dropped session's response ends with it: nothing to cancel there, none of it to play.
    if (output)
      this.#interrupt(output, "error", false, () => this.session.cancelOutput(output.turnId, "error"));
    this.#responseId = undefined;
    old?.close().catch((err: unknown) => {
      this.#deps.logger.debug({ err, sessionId: this.session.id }, "dropped realtime session close failed");
    });
  }

  #onEvent(event: RealtimeProviderEvent): void {
    if (this.session.state !== "active") return;
    if (event.type === "response_started") this.#responseId = event.responseId;
    else if (event.type === "response_done" || event.type === "closed") this.#responseId = undefined;
    this.#recovery.observe(event);
    try {
      this.#progressive.observe(event);
      this.#events.handle(event);
    } catch (err) {
      // A mapping failure must not break the provider's event loop.
      this.#deps.logger.warn(
        { err, sessionId: this.session.id, type: event.type },
        "realtime event could not be mapped",
      );
    }
  }

  #outputEnded(): void {
    try {
      this.#events.outputEnded();
    } catch (err) {
      // The held events' mapping failed: the output's end and the provider's event loop go on.
      this.#deps.logger.warn(
        { err, sessionId: this.session.id },
        "realtime: held events could not be mapped",
      );
    }
  }

  get #responding(): boolean {
    return this.#responseId !== undefined;
  }

  /** The active output a verb naming `turnId` (or none) stops; undefined when it is another turn's. */
  #outputOf(turnId: string | undefined): TalkOutput | undefined {
    const output = this.session.activeOutput;
    return output && (turnId === undefined || output.turnId === turnId) ? output : undefined;
  }

  /**
   * The one interruption sequence, whoever asked (the provider's or a local
   * detector's speech, startTurn, cancelOutput, cancelTurn, a fault): the line
   * is cleared first, so the listener stops hearing the answer before
   * anything else is done; then `terminal` emits the one terminal event; then
   * the provider's response is cancelled and recorded (none of its audio,
   * even of items not begun, plays later) and the item truncated at what was
   * heard (read before the clear: the position the provider keeps of the
   * item). Returns `terminal`'s answer; nothing after the clear runs when it
   * is false.
   */
  #interrupt(
    output: TalkOutput | undefined,
    reason: TerminalReason,
    cancelResponse: boolean,
    terminal: () => boolean,
  ): boolean {
    const heard = output ? this.#sink.heardMs(output.itemId) : undefined;
    if (output) {
      this.#sink.clear({ turnId: output.turnId, itemId: output.itemId, reason });
      this.#output.reportPending(output.itemId);
    }
    if (!terminal()) return false;
    if (cancelResponse) {
      if (this.#responseId !== undefined) this.#output.cancelResponse(this.#responseId);
      this.#voice?.cancelResponse();
    }
    if (output) {
      this.#output.forget(output.itemId);
      this.#truncate(output.itemId, heard);
    }
    return true;
  }

  #truncate(itemId: string, heard: number | undefined): void {
    if (heard === undefined || !this.#voice) return;
    try {
      this.#voice.truncate(itemId, heard);
    } catch (err) {
      this.#deps.logger.warn({ err, sessionId: this.session.id, itemId }, "truncate failed");
    }
  }

  /** The client's turn starts or ends: the provider's turn detection off / back on (off all along without it). */
  #turnDetection(enabled: boolean): void {
    if (this.#deps.turns === "pipeline") this.#voice?.setTurnDetection?.(enabled);
  }

  #requireVoice(): RealtimeVoiceSession {
    if (this.session.state !== "active") throw new TalkError("session_closed");
    if (!this.#voice)
      throw new TalkError("invalid_state", "The realtime provider session is not connected yet.");
    return this.#voice;
  }
}
