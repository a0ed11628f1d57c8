/**
 * One media leg: the core side of a phone call's stream, a meeting bot's
 * voice or a Talk API session. It owns one Talk session and its controller;
 * the adapter (a carrier-neutral call, a meeting assistant, the gateway's
 * client) owns the wire and hands audio in and out:
 *
 *   adapter --(Int16Array + AudioFormat, or encoded passthrough)--> leg --> controller --> provider
 *   adapter <--(TalkAudioSink: write / clear / drained / heardMs)-- leg <-- controller
 *
 * The leg decides once whether the adapter's encoded format passes through
 * (a realtime provider that carries it both ways), runs the local turn-taking
 * when the provider has none (VAD -> turns), and applies the one barge-in
 * policy to every local trigger. Whatever closes the session (the adapter,
 * the provider, the runtime, the cluster taking the lease away) closes the
 * leg, and the leg tells its adapter once, so a carrier socket or a bot never
 * outlives its session.
 *
 * A provider that fails under the leg (refused, lost, an error, a stall, a
 * 5xx after retries) goes down one failure path (LegFaults): the caller hears
 * a line rendered at start-up, then the session recovers (a new provider
 * session with the conversation so far, the next turn on a retried or
 * fallback provider) or the leg closes with `provider_lost`. Never a silent
 * open line.
 */
import { pcm16FromBytes } from "../../codecs/index.js";
import { TalkError, toTalkError } from "../../core/index.js";
import type { RealtimeToolDefinition, TalkLogger } from "../../core/index.js";
import { BargeInPolicy, type BargeInOptions, type BargeInSource } from "../pipelines/barge-in-policy.js";
import type { SessionControllerFactory } from "../pipelines/controller-factory.js";
import type {
  DirectToolCall,
  DirectToolResult,
  TalkAudioSink,
  TalkTextInput,
} from "../pipelines/controller-types.js";
import { hasDirectTools } from "../pipelines/direct-tools-turns.js";
import {
  resolvePipelineOptions,
  type PipelineOptions,
  type PipelineProviderResolver,
} from "../pipelines/pipeline-options.js";
import { checkAppend } from "../pipelines/pipeline-support.js";
import { sameAudioFormat } from "../../core/index.js";
import { hasTextInput, type SessionController } from "../pipelines/session-controller.js";
import type { TalkOutput, TalkSession, TalkTurn } from "../../core/index.js";
import type { TerminalReason } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import { SpeechGate } from "./speech-gate.js";
import { LegFaults } from "./leg-faults.js";
import { EchoGuard, type EchoStats } from "./echo-guard.js";
import { LocalTurns } from "./local-turns.js";
import { TurnEndpoint } from "./turn-endpoint.js";
import { resolveEndOfTurn, type EndOfTurnOptions } from "../speech/end-of-turn.js";
import { NoiseGuard } from "./input-processing.js";
import { bargeInGate, LocalBargeIn } from "./local-barge-in.js";

export type MediaLegState = "created" | "starting" | "live" | "closing" | "closed";

/** The adapter's side of the contract: where audio goes, greeting protection, and the close notice. */
export interface MediaLegAdapter {
  /** Where assistant audio goes (the carrier's playout, the bot page's microphone); none for a listen-only leg. */
  readonly sink?: TalkAudioSink | undefined;
  /**
   * False keeps `output` playing when the caller speaks (the speech is only
   * noted), e.g. the first seconds of a phone greeting. Default: every output
   * is interruptible.
   */
  interruptible?(output: TalkOutput): boolean;
  /** Whether the sink still plays audio no session output owns (the tail of an answer). Default false. */
  playing?(): boolean;
  /** The leg closed, whoever closed it: close the carrier socket, leave the meeting. Called exactly once. */
  legClosed(reason: TerminalReason): void;
}

/** How the leg's turns start and end. */
export type TurnTaking =
  /** The realtime provider detects speech (speech_started / speech_stopped). */
  | {
      kind: "provider";
      /** Barge-in by a local gate on the caller's PCM (echo removed), not the provider's speech_started. */
      localBargeIn?: { threshold: number; minSpeechMs: number; silenceMs: number };
    }
  /** A local VAD on the caller's PCM starts and ends turns and triggers barge-in. */
  | {
      kind: "local-vad";
      threshold: number;
      minSpeechMs: number;
      /** The fixed endpoint (talk.input.silenceTimeoutMs), and the adaptive one's fallback. */
      silenceMs: number;
      preRollMs?: number;
      /** talk.input.endOfTurn for this leg. Default: the controller factory's (fixed). */
      endOfTurn?: EndOfTurnOptions;
    }
  /** The adapter drives turns itself (text input, an external segmenter). */
  | { kind: "adapter" }
  /**
   * A Talk API client: its verbs start and end turns (push-to-talk), and the pipeline's own end of turn
   * stays on (a realtime provider's turn detection, a caption's silence timer). With `localBargeIn`, once
   * the client's audio comes with a reference (echoReference "reported"), a local gate on the cleaned
   * audio decides barge-in, as on a realtime phone leg with echo cancellation.
   */
  | { kind: "client"; localBargeIn?: { threshold: number; minSpeechMs: number; silenceMs: number } };

/** Timing hooks of the leg's local barge-in and end of speech (a surface's latency metrics). */
export interface MediaLegObserver {
  bargeInDetected?(source: BargeInSource): void;
  bargeInHandled?(): void;
  /** The caller's speech ended; `endpointMs`: the silence the leg's endpoint waited for (local VAD). */
  speechEnded?(source: BargeInSource, endpointMs?: number): void;
}

export interface MediaLegOptions {
  session: TalkSession;
  createController: SessionControllerFactory;
  adapter: MediaLegAdapter;
  /**
   * The PCM format the adapter decodes caller audio to (appendAudio); also the assistant audio's format
   * unless passthrough is chosen or `outputFormat` says otherwise. An encoded format here (a Talk API
   * client's u-law to a realtime provider that carries it) is taken as is (appendEncoded, appendBytes).
   */
  format: AudioFormat;
  /** The assistant audio's format when it is not `format` (a Talk API client asks for each). */
  outputFormat?: AudioFormat;
  /** An encoded format the adapter can hand over untouched (u-law 8 kHz); used when the realtime provider carries it both ways. */
  passthrough?: AudioFormat;
  turnTaking: TurnTaking;
  /** Overrides talk.input.interruptOnSpeech for this leg. Default: the controller factory's option (true when unset). */
  interruptOnSpeech?: boolean;
  /** Overrides talk.input.bargeIn for this leg. Default: the controller factory's. */
  bargeIn?: BargeInOptions;
  /** Offer the server's tools to this leg's session. Default true. */
  tools?: boolean;
  /** Tools the session's client completes (talk.session.submitToolResult), already checked against policy. */
  clientTools?: readonly RealtimeToolDefinition[];
  /** Overrides of the trusted pipeline options for this leg. */
  options?: PipelineOptions;
  /** Wraps the provider resolver (a surface times a realtime provider's events). */
  wrapProviders?(base: PipelineProviderResolver): PipelineProviderResolver;
  observer?: MediaLegObserver;
  /**
   * The failure path (talk.faults, the lines from the controller factory):
   * "speak" tells the caller and applies the policy (hang up with
   * `provider_lost` or recover); "report" applies it without speaking (a
   * leg whose sink must not get unannounced audio); "pipeline" leaves a fatal failure to the pipeline
   * (the session closes with `error` and its client decides: a Talk API session). Default "speak".
   */
  faults?: "speak" | "report" | "pipeline";
  /**
   * The adapter passes, with its caller audio, the assistant audio played into the line over the same span
   * (appendAudio's `reference`, a phone line): the echo is cancelled before the gate and STT when
   * talk.input.echoCancellation is enabled and the process has a canceller. "reported": only once the
   * adapter knows what its listener plays (a Talk API client reporting its playback) does it pass one;
   * until its first reference the caller audio goes on as without echo cancellation (nor does the
   * local barge-in gate decide). Default false.
   */
  echoReference?: boolean | "reported";
  logger: TalkLogger;
}

/** A bad frame is logged once per this many, never fatal. */
const APPEND_FAILURE_LOG_EVERY = 50;

export class MediaLeg {
  readonly session: TalkSession;
  /** Resolves with the reason once the leg has closed (and told its adapter). */
  readonly closed: Promise<TerminalReason>;
  readonly #options: MediaLegOptions;
  readonly #policy: BargeInPolicy;
  #state: MediaLegState = "created";
  #controller: SessionController | undefined;
  #starting: Promise<void> | undefined;
  #gate: SpeechGate | undefined;
  #turns: LocalTurns | undefined;
  #localBargeIn: LocalBargeIn | undefined;
  #echo: EchoGuard | undefined;
  #noise: NoiseGuard | undefined;
  #closing: Promise<void> | undefined;
  #resolveClosed!: (reason: TerminalReason) => void;
  #appendFailures = 0;
  /** echoReference "reported": a reference came with the caller's audio (from then on the guard runs). */
  #referenced = false;
  /** Caller audio taken so far, ms of audio time: the clock of input.audio.speech_* positions. */
  #inputMs = 0;
  /** The largest frame appendBytes takes (talk.gateway's maxAudioBytesPerFrame through the pipeline options). */
  readonly #maxAppendBytes: number;
  readonly #faults: LegFaults;

  constructor(options: MediaLegOptions) {
    this.#options = options;
    this.session = options.session;
    this.closed = new Promise((resolve) => (this.#resolveClosed = resolve));
    this.#policy = new BargeInPolicy({
      // One setting for the pipeline's policy (provider speech) and this one (local triggers).
      interruptOnSpeech:
        options.interruptOnSpeech ?? options.createController.options.interruptOnSpeech ?? true,
      interruptible: options.adapter.interruptible?.bind(options.adapter),
      ...(options.bargeIn ?? options.createController.turns.bargeIn),
    });
    this.#maxAppendBytes = resolvePipelineOptions({
      ...options.createController.options,
      ...options.options,
    }).maxAppendBytes;
    const { faults } = options.createController;
    this.#faults = new LegFaults({
      session: options.session,
      sink: options.adapter.sink,
      playing: () => options.adapter.playing?.() === true,
      outputFormat: () => this.outputFormat,
      speech: options.faults === "report" ? undefined : faults.speech,
      options: faults.options,
      hangUp: () => void this.close("provider_lost"),
      logger: options.logger,
    });
    // The child follows its session: a close from anywhere (runtime, cluster, provider) reaches the adapter.
    const { signal } = this.session;
    if (signal.aborted) queueMicrotask(() => void this.close(closeReasonOf(signal)));
    else signal.addEventListener("abort", () => void this.close(closeReasonOf(signal)), { once: true });
  }

  get state(): MediaLegState {
    return this.#state;
  }

  /** Aborted when the leg's session closes. */
  get signal(): AbortSignal {
    return this.session.signal;
  }

  /** What the leg's echo guard saw so far; undefined without echo cancellation. */
  get echoStats(): EchoStats | undefined {
    return this.#echo?.stats();
  }

  /** True when caller audio goes in encoded as is (appendEncoded); known once started. */
  get passthrough(): boolean {
    const chosen = this.#controller?.inputFormat;
    return chosen !== undefined && chosen.encoding !== "pcm16";
  }

  /** The format of the assistant audio the sink receives; known once started. */
  get outputFormat(): AudioFormat {
    if (this.#options.passthrough && this.passthrough) return this.#controller!.inputFormat;
    return this.#options.outputFormat ?? this.#options.format;
  }

  /** Creates the controller and waits until it takes audio. Idempotent; rejects session_closed after close. */
  start(): Promise<void> {
    if (this.#state === "closing" || this.#state === "closed")
      return Promise.reject(new TalkError("session_closed"));
    this.#starting ??= this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    this.#state = "starting";
    const o = this.#options;
    let endpoint: TurnEndpoint | undefined;
    if (o.turnTaking.kind === "local-vad") {
      const { threshold, minSpeechMs, silenceMs, preRollMs } = o.turnTaking;
      const rule = o.turnTaking.endOfTurn ?? o.createController.turns.endOfTurn;
      endpoint = new TurnEndpoint(resolveEndOfTurn(rule, silenceMs));
      const { vad } = o.createController.input;
      this.#gate = new SpeechGate({
        threshold,
        minSpeechMs,
        silenceMs: endpoint.gateSilenceMs,
        sampleRate: o.format.sampleRate,
        ...(preRollMs !== undefined ? { preRollMs } : {}),
        ...(vad ? { detector: vad } : {}),
      });
    } else if (
      (o.turnTaking.kind === "provider" || o.turnTaking.kind === "client") &&
      o.turnTaking.localBargeIn
    ) {
      this.#gate = bargeInGate(o.turnTaking.localBargeIn, o.format.sampleRate, o.createController.input.vad);
    }
    this.#echo = this.#createEchoGuard();
    this.#noise = this.#createNoiseGuard();
    const controller = o.createController({
      session: this.session,
      inputFormat: o.format,
      outputFormat: o.outputFormat ?? o.format,
      ...(o.passthrough ? { passthrough: o.passthrough } : {}),
      ...(o.adapter.sink ? { sink: o.adapter.sink } : {}),
      // Speech the pipeline hears over an answer (the provider's speech_started, a local STT path's VAD) is
      // one more trigger: this leg's one policy decides and its one sequence interrupts.
      speechOverOutput: (output) => this.#speechOverOutput(output),
      // The leg's VAD and endpoint end the caller's turns: not the provider's turn detection.
      ...(o.turnTaking.kind === "local-vad" ? { turns: "leg" as const } : {}),
      ...(o.options ? { options: o.options } : {}),
      ...(o.wrapProviders ? { wrapProviders: o.wrapProviders } : {}),
      ...(o.tools === false ? { tools: false } : {}),
      ...(o.clientTools ? { clientTools: o.clientTools } : {}),
      ...(o.faults === "pipeline"
        ? {}
        : { faults: { handler: this.#faults, options: o.createController.faults.options } }),
    });
    this.#controller = controller;
    if (this.#gate && (o.turnTaking.kind === "provider" || o.turnTaking.kind === "client"))
      this.#localBargeIn = new LocalBargeIn({
        controller,
        gate: this.#gate,
        bargeIn: (source) => this.bargeIn(source),
        playing: () => this.session.activeOutput !== undefined || o.adapter.playing?.() === true,
        echoTailMs: o.createController.echo.options.tailMs,
      });
    if (this.#gate && endpoint && o.turnTaking.kind === "local-vad") {
      const { observer } = o;
      this.#turns = new LocalTurns({
        session: this.session,
        controller,
        gate: this.#gate,
        endpoint,
        policy: this.#policy,
        minSpeechMs: o.turnTaking.minSpeechMs,
        inputMs: () => this.#inputMs,
        bargeIn: (source) => this.bargeIn(source),
        speech: (type, turnId, atMs, endpointMs) => this.#speech(type, turnId, "local_vad", atMs, endpointMs),
        bargeInDetected: () => observer?.bargeInDetected?.("local_vad"),
        bargeInHandled: () => observer?.bargeInHandled?.(),
        speechEnded: (endpointMs) => observer?.speechEnded?.("local_vad", endpointMs),
        logger: o.logger,
      });
    }
    await controller.ready;
    if (this.#state !== "starting") throw new TalkError("session_closed");
    this.#state = "live";
  }

  /**
   * Caller audio decoded to PCM in `format` (the leg's format), with the assistant audio played into the
   * line over the same span when the adapter supplies it (`echoReference`). A bad frame is logged, never fatal.
   */
  appendAudio(pcm: Int16Array, format: AudioFormat, reference?: Int16Array): void {
    const controller = this.#live();
    if (!controller) return;
    try {
      if (!sameAudioFormat(format, this.#options.format)) {
        throw new TalkError(
          "invalid_audio",
          `The leg takes ${describe(this.#options.format)}, got ${describe(format)}.`,
        );
      }
      this.#inputMs += (pcm.length / format.channels / format.sampleRate) * 1000;
      if (reference !== undefined) this.#referenced = true;
      const guarded = this.#guarded;
      const cancelled = this.#echo && guarded ? this.#echo.process(pcm, reference) : pcm;
      const heard = this.#noise && cancelled.length > 0 ? this.#noise.process(cancelled) : cancelled;
      if (heard.length === 0) return;
      if (this.#turns) this.#turns.audio(heard);
      else if (this.#localBargeIn && guarded) this.#localBargeIn.audio(heard);
      else controller.appendPcm(heard);
      if (this.#gate?.speaking === true) this.#echo?.callerSpeaking();
    } catch (err) {
      this.#appendFailed(err);
    }
  }

  /**
   * A Talk API client's frame, bytes in the leg's format: checked at the boundary (session_closed,
   * invalid_audio, payload_too_large thrown to the client), then as any caller audio: PCM through the
   * leg's input processing and turn-taking, an encoded format passed through.
   */
  appendBytes(
    data: Uint8Array,
    base64?: string,
    reference?: (samples: number) => Int16Array | undefined,
  ): void {
    const controller = this.#live();
    if (!controller) throw new TalkError(this.#closedOr("invalid_state"));
    if (this.passthrough) {
      controller.appendAudio(data, base64);
      return;
    }
    const { format } = this.#options;
    if (!checkAppend(this.session, data, format, this.#maxAppendBytes)) return;
    const pcm = pcm16FromBytes(data);
    this.appendAudio(pcm, format, reference?.(pcm.length / format.channels));
  }

  /** Caller audio in the passthrough format, untouched (only when `passthrough` was chosen). */
  appendEncoded(data: Uint8Array, base64?: string): void {
    const controller = this.#live();
    if (!controller) return;
    try {
      if (!this.passthrough)
        throw new TalkError("invalid_audio", "This leg does not pass encoded audio through.");
      controller.appendAudio(data, base64);
    } catch (err) {
      this.#appendFailed(err);
    }
  }

  /**
   * A local trigger heard real caller speech (a VAD onset, a meeting's echo
   * gate): the answer that plays is interrupted when the policy says so, and
   * a tail still playing on the sink is cleared. Returns whether anything was
   * interrupted.
   */
  bargeIn(source: BargeInSource): boolean {
    const controller = this.#live();
    if (!controller) return false;
    const { observer } = this.#options;
    observer?.bargeInDetected?.(source);
    try {
      const output = this.session.activeOutput;
      if (output) return this.#interrupt(controller, output);
      const { sink } = this.#options.adapter;
      if (sink && this.#options.adapter.playing?.() === true) {
        sink.clear({ turnId: "", reason: "barge_in" });
        return true;
      }
      return false;
    } finally {
      observer?.bargeInHandled?.();
    }
  }

  /**
   * The pipeline heard speech over `output` (the realtime provider's speech_started, the local STT path's
   * VAD): where the leg's own gate decides barge-in (echo-cancelled audio), that gate's onset will, and the
   * provider's speech is only noted; otherwise the policy decides here. A Talk API client's leg is the
   * exception: while its answer plays the pipeline hears silence in place of the client's audio (LocalBargeIn)
   * unless the gate let speech through, so what it reports is speech and the policy decides it too. Timed
   * by the surface around the provider's event (CallLatency.timedRealtime), so not observed again.
   */
  #speechOverOutput(output: TalkOutput): "interrupted" | "kept" | "deferred" {
    const controller = this.#controller;
    if (!controller || this.#state === "closing" || this.#state === "closed") return "kept";
    if (this.#localBargeIn && this.#guarded && this.#options.turnTaking.kind !== "client") return "deferred";
    return this.#interrupt(controller, output) ? "interrupted" : "kept";
  }

  /** Decide, then the controller's one interruption sequence (clear, one terminal event, cancel, truncate, drain). */
  #interrupt(controller: SessionController, output: TalkOutput): boolean {
    if (!this.#policy.interrupts(output)) return false;
    return controller.interrupt?.(output) ?? controller.cancelOutput(output.turnId, "barge_in");
  }

  /**
   * Starts a user turn: an adapter's (an external segmenter decides) or a
   * Talk API client's (push-to-talk; an answer playing is interrupted, a
   * client's verb being its own decision). An adapter's turn is a segment of
   * speech its own detector found, so it is reported as
   * `input.audio.speech_started` (source "adapter"). Throws session_closed /
   * invalid_state.
   */
  startTurn(): TalkTurn {
    const turn = this.#explicitTurns().startTurn();
    if (this.#options.turnTaking.kind === "adapter")
      this.#speech("input.audio.speech_started", turn.id, "adapter", this.#inputMs);
    return turn;
  }

  /**
   * Ends a user turn the adapter or client started (an adapter's:
   * `input.audio.speech_stopped` first); resolves when the pipeline has
   * finished with it (a caption's final).
   */
  async endTurn(turnId: string): Promise<void> {
    const controller = this.#explicitTurns();
    if (this.#options.turnTaking.kind === "adapter")
      this.#speech("input.audio.speech_stopped", turnId, "adapter", this.#inputMs);
    await controller.endTurn(turnId);
  }

  /** Cancels `turnId` (or the current turn) and its answer: an explicit verb, whatever the policy. */
  cancelTurn(turnId: string | undefined, reason: TerminalReason): boolean {
    return this.#verbs().cancelTurn(turnId, reason);
  }

  /** Completes a tool call of the session's client (talk.session.submitToolResult). Throws tool_not_found. */
  submitToolResult(callId: string, output: string): void {
    this.#verbs().submitToolResult(callId, output);
  }

  /** A direct-tools session's call (talk.session.callTool); capability_unsupported where the pipeline has none. */
  callTool(request: DirectToolCall): Promise<DirectToolResult> {
    const controller = this.#verbs();
    if (!hasDirectTools(controller))
      throw new TalkError(
        "capability_unsupported",
        `A ${this.session.mode} session calls no tools directly.`,
      );
    return controller.callTool(request);
  }

  /** Speaks `text` verbatim in a turn of its own (a greeting, a farewell). */
  say(text: string): void {
    this.#textInput().say(text);
  }

  /** Text from the user (keypad digits, a typed or captioned question), answered like speech. */
  sendUserText(text: string, meta?: Record<string, string>): void {
    this.#textInput().sendUserText(text, meta);
  }

  /** Whether the leg takes text input (realtime and stt-tts sessions). */
  get takesText(): boolean {
    return this.#controller !== undefined && hasTextInput(this.#controller);
  }

  /** Cancels the answer that plays (of `turnId` when given), whatever the policy (an explicit verb). */
  cancelOutput(reason: TerminalReason, turnId?: string): boolean {
    const controller = this.#options.turnTaking.kind === "client" ? this.#verbs() : this.#live();
    return controller?.cancelOutput(turnId, reason) ?? false;
  }

  /**
   * Closes the controller and the session, then tells the adapter. Idempotent
   * (returns the close in progress); the adapter hears of it once, also when
   * the session was closed by someone else.
   */
  close(reason: TerminalReason): Promise<void> {
    if (this.#closing) return this.#closing;
    // Set before #close runs: the session's abort reaches close() again from inside it.
    let resolve!: () => void;
    this.#closing = new Promise<void>((r) => (resolve = r));
    void this.#close(reason).then(resolve);
    return this.#closing;
  }

  async #close(reason: TerminalReason): Promise<void> {
    this.#state = "closing";
    this.#turns?.close();
    this.#gate?.close();
    if (this.#echo) {
      // One line per call: how much echo the line had and what the guard did about it, logged and in the
      // session's usage record (usage.metrics `echo`, read by the usage ledger and the console). A guard
      // that never ran (a Talk API client that reported no playback) has nothing to say.
      if (this.#guarded) {
        const echo = this.#echo.stats();
        this.#options.logger.info(
          { sessionId: this.session.id, echo },
          "media leg: echo cancellation over the call",
        );
        this.session.emit({ type: "usage.metrics", payload: { echo } });
      }
      this.#echo.close();
    }
    this.#noise?.close();
    try {
      if (this.#controller) await this.#controller.close(reason);
      else await this.session.close(reason);
    } catch (err) {
      this.#options.logger.warn({ err, sessionId: this.session.id }, "media leg: closing the session failed");
    }
    this.#state = "closed";
    try {
      this.#options.adapter.legClosed(reason);
    } catch (err) {
      this.#options.logger.warn({ err, sessionId: this.session.id }, "media leg: the adapter's close threw");
    }
    this.#resolveClosed(reason);
  }

  /** The leg's echo canceller, when its adapter supplies the reference and echo cancellation is on. */
  #createEchoGuard(): EchoGuard | undefined {
    const { echo } = this.#options.createController;
    if (!this.#options.echoReference || !echo.options.enabled || !echo.create) return undefined;
    return new EchoGuard(echo.create, echo.options, this.#options.format.sampleRate);
  }

  /** The leg's noise suppressor, when talk.input.noiseSuppression is on and the process has one. */
  #createNoiseGuard(): NoiseGuard | undefined {
    const { noiseSuppression, createSuppressor } = this.#options.createController.input;
    if (!noiseSuppression.enabled || !createSuppressor) return undefined;
    return new NoiseGuard(createSuppressor, noiseSuppression, this.#options.format.sampleRate);
  }

  /** Whether the echo guard (and a local barge-in gate) hears the caller: always, or once a reference came. */
  get #guarded(): boolean {
    return this.#options.echoReference !== "reported" || this.#referenced;
  }

  #live(): SessionController | undefined {
    return this.#state === "live" ? this.#controller : undefined;
  }

  #explicitTurns(): SessionController {
    const { kind } = this.#options.turnTaking;
    if (kind !== "adapter" && kind !== "client")
      throw new TalkError("invalid_state", "This leg's turns are not the adapter's to drive.");
    return this.#verbs();
  }

  /** The controller, for a verb that must say why it cannot run (session_closed, invalid_state). */
  #verbs(): SessionController {
    const controller = this.#live();
    if (controller) return controller;
    throw new TalkError(this.#closedOr("invalid_state"));
  }

  #closedOr(code: "invalid_state"): "session_closed" | "invalid_state" {
    return this.#state === "closing" || this.#state === "closed" ? "session_closed" : code;
  }

  #textInput(): TalkTextInput {
    const controller = this.#controller;
    if (this.#state === "closing" || this.#state === "closed") throw new TalkError("session_closed");
    if (!controller) throw new TalkError("invalid_state", "The media leg has not started.");
    if (!hasTextInput(controller))
      throw new TalkError("capability_unsupported", `A ${this.session.mode} session takes no text input.`);
    return controller;
  }

  /**
   * `input.audio.speech_started` / `speech_stopped` from a local detector (the
   * leg's VAD, an adapter's segmenter), as the relay reports the provider's:
   * on the turn's id, positioned in the caller audio taken so far. Only for
   * the session's current turn; never fatal to the audio path.
   */
  #speech(
    type: "input.audio.speech_started" | "input.audio.speech_stopped",
    turnId: string,
    source: "local_vad" | "adapter",
    atMs: number,
    endpointMs?: number,
  ): void {
    const { session } = this;
    const turn = session.activeTurn;
    if (session.state !== "active" || turn?.id !== turnId) return;
    if (type === "input.audio.speech_stopped" && turn.state !== "active") return;
    const ms = Math.round(atMs);
    try {
      if (type === "input.audio.speech_started")
        session.emit({ type, turnId, source, payload: { audioStartMs: ms } });
      else
        session.emit({
          type,
          turnId,
          source,
          payload: { audioEndMs: ms, ...(endpointMs !== undefined ? { endpointMs } : {}) },
        });
    } catch (err) {
      this.#options.logger.debug({ err, sessionId: session.id, type }, "media leg: speech event not emitted");
    }
  }

  #appendFailed(err: unknown): void {
    if (this.#appendFailures++ % APPEND_FAILURE_LOG_EVERY === 0) {
      this.#options.logger.warn(
        { err: toTalkError(err).message, sessionId: this.session.id, failures: this.#appendFailures },
        "media leg: audio not accepted",
      );
    }
  }
}

/** The terminal reason a session's abort carries (core's cancelReason), "closed" when it says none. */
function closeReasonOf(signal: AbortSignal): TerminalReason {
  const reason: unknown = signal.reason;
  if (reason instanceof TalkError && typeof reason.details?.["reason"] === "string")
    return reason.details["reason"];
  return "closed";
}

function describe(format: AudioFormat): string {
  return `${format.encoding}/${format.sampleRate}/${format.channels}`;
}
