/**
 * One phone call mapped onto one core Talk session, never the other way
 * round: the call's ids are session metadata; the session knows nothing of
 * Twilio. The session is created when the call is known (stream `start`, or
 * an outbound dial), the controller when the stream starts; `media` appends
 * audio, `stop` or the end of the reconnect grace closes it.
 *
 * realtime calls pass u-law straight to the provider (provider speech_started
 * drives barge-in inside the relay pipeline); stt-tts calls decode to PCM16
 * 8 kHz and a local speech gate starts and ends turns and interrupts answers.
 */
import { decodeMulaw } from "../codecs/mulaw.js";
import { bytesFromPcm16 } from "../codecs/pcm.js";
import { TalkError, toTalkError } from "../core/errors.js";
import type { TalkLogger } from "../core/logger.js";
import {
  createSessionController,
  hasTextInput,
  type SessionController,
} from "../core/pipelines/session-controller.js";
import type {
  PipelineOptions,
  PipelineProviderResolver,
  PipelineToolDispatcher,
} from "../core/pipelines/pipeline-options.js";
import type { TalkOutput, TalkRuntime, TalkSession } from "../core/session-types.js";
import type { TalkEvent, TerminalReason } from "../core/talk-events.js";
import { ULAW_8K, type AudioFormat } from "../core/talk-types.js";
import type { CallControl, CallControlRegistry } from "../core/tools/call-control.js";
import type { CallMode } from "../config/telephony-schema.js";
import { CallLatency } from "./call-latency.js";
import { SpeechGate } from "./speech-gate.js";
import type { TelephonyStats } from "./telephony-stats.js";
import type { CarrierRestClient } from "./carrier/carrier-protocol.js";
import { CallPlayout, type PlayoutLine } from "./playout/call-playout.js";

const PCM16_8K: AudioFormat = Object.freeze({ encoding: "pcm16", sampleRate: 8000, channels: 1 });

/** What a call needs from the process: narrow, no back-reference to the route or registry. */
export interface CallSessionContext {
  runtime: TalkRuntime;
  providers: PipelineProviderResolver;
  tools: PipelineToolDispatcher | undefined;
  pipelineOptions: PipelineOptions;
  callControls: CallControlRegistry;
  rest: CarrierRestClient | undefined;
  /** Where latency figures are also counted (besides the session's latency.metrics events). */
  stats?: TelephonyStats;
  logger: TalkLogger;
}

/** Per-call settings, resolved from the telephony config for the called number. */
export interface CallSettings {
  mode: CallMode;
  greeting: string | undefined;
  greetingProtectMs: number;
  vad: { threshold: number; minSpeechMs: number };
  silenceTimeoutMs: number;
  sendHighWaterBytes: number;
  hangUpTimeoutMs: number;
}

export interface CallIdentity {
  callSid: string;
  from?: string | undefined;
  to?: string | undefined;
  direction?: string | undefined;
}

export type CallState = "created" | "connected" | "detached" | "closing" | "closed";

export class CallSession implements CallControl {
  readonly callSid: string;
  readonly session: TalkSession;
  readonly playout: CallPlayout;
  readonly #latency: CallLatency;
  readonly #ctx: CallSessionContext;
  readonly #settings: CallSettings;
  #state: CallState = "created";
  #controller: SessionController | undefined;
  #gate: SpeechGate | undefined;
  #capturingTurn: string | undefined;
  #greetingItem: string | undefined;
  #greetingPending = false;
  #greetingStartedAt = 0;
  #graceTimer: NodeJS.Timeout | undefined;
  #closeLine: ((code: number, reason: string) => void) | undefined;
  #unregister: (() => void) | undefined;
  #closing: Promise<void> | undefined;
  #appendFailures = 0;
  #onClosed: (() => void) | undefined;

  constructor(
    ctx: CallSessionContext,
    settings: CallSettings,
    call: CallIdentity,
    onClosed?: () => void,
    extraMetadata?: Record<string, string>,
  ) {
    this.#ctx = ctx;
    this.#settings = settings;
    this.callSid = call.callSid;
    this.#onClosed = onClosed;
    const realtime = settings.mode === "realtime";
    const metadata: Record<string, string> = { surface: "phone", callSid: call.callSid };
    if (call.from) metadata["from"] = call.from;
    if (call.to) metadata["to"] = call.to;
    if (call.direction) metadata["direction"] = call.direction;
    if (extraMetadata) Object.assign(metadata, extraMetadata);
    this.session = ctx.runtime.createSession({
      mode: settings.mode,
      transport: realtime ? "gateway-relay" : "managed-room",
      brain: "agent-consult",
      owner: "gateway",
      metadata,
      source: "telephony",
    });
    this.#latency = new CallLatency({
      emit: (payload) => {
        ctx.stats?.recordLatency(payload.name, payload.ms);
        if (this.session.state === "active")
          this.session.emit({ type: "latency.metrics", payload, source: "telephony" });
      },
      ...(realtime ? {} : { endpointingMs: settings.silenceTimeoutMs }),
    });
    this.playout = new CallPlayout({
      sendHighWaterBytes: settings.sendHighWaterBytes,
      onClearSent: () => this.#latency.clearSent(),
      onItemFirstFrame: () => this.#latency.itemFirstFrame(),
    });
    this.#unregister = ctx.callControls.set(this.session.id, this);
    this.session.subscribe((event) => this.#onSessionEvent(event));
  }

  get state(): CallState {
    return this.#state;
  }

  /**
   * The stream started (or Twilio reconnected within the grace): audio goes
   * to `line`. The first time, the controller is created and the greeting
   * spoken; resolves when the provider can take audio.
   */
  async connect(
    line: PlayoutLine,
    closeLine: (code: number, reason: string) => void,
    streamSid: string,
  ): Promise<void> {
    if (this.#state === "closing" || this.#state === "closed") throw new TalkError("session_closed");
    clearTimeout(this.#graceTimer);
    this.#closeLine = closeLine;
    this.playout.attach(line);
    const first = this.#state === "created";
    this.#state = "connected";
    if (!first) {
      this.#ctx.logger.info({ callSid: this.callSid, streamSid }, "call: stream reconnected within grace");
      return;
    }
    const controller = this.#createController();
    this.#controller = controller;
    await controller.ready;
    const greeting = this.#settings.greeting;
    if (greeting && hasTextInput(controller)) {
      this.#greetingPending = true;
      controller.say(greeting);
    }
  }

  /** Caller audio: one u-law `media` payload. */
  onMedia(ulaw: Uint8Array): void {
    const controller = this.#controller;
    if (!controller || this.#state !== "connected") return;
    try {
      if (this.#settings.mode === "realtime") {
        controller.appendAudio(this.#passthrough ? ulaw : bytesFromPcm16(decodeMulaw(ulaw)));
        return;
      }
      this.#gateAudio(controller, decodeMulaw(ulaw));
    } catch (err) {
      // One bad frame is logged, never fatal; a stream of them is logged once per 50.
      if (this.#appendFailures++ % 50 === 0) {
        this.#ctx.logger.warn(
          { err: toTalkError(err).message, callSid: this.callSid },
          "call: audio not accepted",
        );
      }
    }
  }

  /** A keypad digit: a talk.event (transcript.done with input "dtmf") and text the agent answers. */
  onDtmf(digit: string): void {
    const controller = this.#controller;
    if (!controller || !hasTextInput(controller)) return;
    try {
      controller.sendUserText(`The caller pressed ${digit} on the keypad.`, { input: "dtmf", digits: digit });
    } catch (err) {
      this.#ctx.logger.warn(
        { err: toTalkError(err).message, callSid: this.callSid },
        "call: dtmf not delivered",
      );
    }
  }

  onMark(name: string): void {
    this.playout.markPlayed(name);
  }

  /** The socket dropped without `stop`: keep the session for `graceMs` in case Twilio reconnects. */
  detach(graceMs: number): void {
    if (this.#state !== "connected" && this.#state !== "created") return;
    this.playout.attach(undefined);
    this.#closeLine = undefined;
    if (graceMs === 0) {
      void this.close("connection_lost");
      return;
    }
    this.#state = "detached";
    this.#ctx.logger.info(
      { callSid: this.callSid, graceMs },
      "call: stream lost, session held for the reconnect grace",
    );
    this.#graceTimer = setTimeout(() => void this.close("connection_lost"), graceMs);
  }

  // CallControl -------------------------------------------------------------

  async hangUp(options: { afterPlayback: boolean; reason?: string; signal: AbortSignal }): Promise<void> {
    const { signal } = options;
    if (options.afterPlayback) {
      const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.#settings.hangUpTimeoutMs)]);
      // The farewell is heard when no output is in flight and Twilio echoed every mark.
      await this.#until(() => !this.session.activeOutput && !this.playout.playing, deadline);
    }
    if (signal.aborted) throw new TalkError("cancelled", "The hang-up was cancelled (the caller spoke).");
    this.#ctx.logger.info({ callSid: this.callSid, reason: options.reason }, "call: hanging up");
    if (this.#ctx.rest) await this.#ctx.rest.hangUp(this.callSid, { signal });
    // After the tool's result is on its way: Twilio also sends `stop`, whichever comes first closes.
    setTimeout(() => void this.close("hung_up"), 0);
  }

  async sendDtmf(_digits: string, _signal: AbortSignal): Promise<void> {
    throw new TalkError("capability_unsupported", "Sending DTMF into a Media Streams call is not supported.");
  }

  async transfer(_destination: string, _signal: AbortSignal): Promise<void> {
    throw new TalkError("capability_unsupported", "Call transfer is not configured.");
  }

  /** Resolves once the call is closed (whoever closed it). */
  whenClosed(): Promise<void> {
    if (this.#state === "closed") return Promise.resolve();
    return new Promise((resolve) => this.#closedWaiters.push(resolve));
  }

  #closedWaiters: Array<() => void> = [];

  /** Ends the call's session with `reason` (the carrier's, for outbound calls). Idempotent. */
  close(reason: TerminalReason, code = 1000): Promise<void> {
    this.#closing ??= this.#close(reason, code);
    return this.#closing;
  }

  async #close(reason: TerminalReason, code: number): Promise<void> {
    this.#state = "closing";
    clearTimeout(this.#graceTimer);
    this.#unregister?.();
    this.playout.close();
    this.#gate?.close();
    try {
      if (this.#controller) await this.#controller.close(reason);
      else await this.session.close(reason);
    } catch (err) {
      this.#ctx.logger.warn({ err, callSid: this.callSid }, "call: closing the session failed");
    }
    this.#closeLine?.(code, String(reason).slice(0, 100));
    this.#closeLine = undefined;
    this.#state = "closed";
    this.#onClosed?.();
    for (const resolve of this.#closedWaiters.splice(0)) resolve();
  }

  get #passthrough(): boolean {
    return this.#inputFormat === ULAW_8K;
  }

  #inputFormat: AudioFormat = PCM16_8K;

  #createController(): SessionController {
    const { mode } = this.#settings;
    if (mode === "realtime") {
      const caps = this.#ctx.providers.realtime(this.session)?.capabilities;
      const ulaw = (list: AudioFormat[] | undefined) =>
        list?.some((f) => f.encoding === "g711_ulaw" && f.sampleRate === 8000);
      // No transcoding when the provider speaks u-law; PCM16 8 kHz (converted by core) otherwise.
      if (ulaw(caps?.inputFormats) && ulaw(caps?.outputFormats)) this.#inputFormat = ULAW_8K;
    } else {
      this.#gate = new SpeechGate({
        threshold: this.#settings.vad.threshold,
        minSpeechMs: this.#settings.vad.minSpeechMs,
        silenceMs: this.#settings.silenceTimeoutMs,
      });
    }
    const base = this.#ctx.providers;
    const latency = this.#latency;
    // The realtime provider's speech events are timed as they reach the call (latency.metrics).
    const providers: PipelineProviderResolver = {
      stt: (s) => base.stt(s),
      tts: (s) => base.tts(s),
      agent: (s) => base.agent(s),
      realtime: (s) => {
        const provider = base.realtime(s);
        return provider && latency.timedRealtime(provider, () => this.#clearBeforeBargeIn());
      },
    };
    return createSessionController({
      session: this.session,
      providers,
      ...(this.#ctx.tools ? { tools: this.#ctx.tools } : {}),
      logger: this.#ctx.logger,
      // stt-tts turns are ended here by the speech gate, not by the pipeline's own silence timer.
      options: { ...this.#ctx.pipelineOptions, silenceTimeoutMs: 0 },
      inputFormat: this.#inputFormat,
      outputFormat: this.#inputFormat,
      sink: this.playout,
      interruptible: (output) => this.#interruptible(output),
    });
  }

  #gateAudio(controller: SessionController, pcm: Int16Array): void {
    const event = this.#gate!.process(pcm);
    if (event === "speech-start") {
      this.#latency.bargeInDetected("local_vad");
      try {
        this.#bargeIn(controller);
      } finally {
        this.#latency.bargeInHandled();
      }
      const turn = controller.startTurn();
      this.#capturingTurn = turn.id;
      for (const frame of this.#gate!.takePreRoll()) controller.appendAudio(bytesFromPcm16(frame));
      return;
    }
    const turnId = this.#capturingTurn;
    if (turnId === undefined) return;
    controller.appendAudio(bytesFromPcm16(pcm));
    if (event === "speech-end") {
      this.#capturingTurn = undefined;
      this.#latency.speechEnded("local_vad");
      controller.endTurn(turnId).catch((err: unknown) => {
        this.#ctx.logger.debug({ err, callSid: this.callSid }, "call: turn end lost a race");
      });
    }
  }

  /** Local barge-in (stt-tts): real speech while an interruptible answer plays clears the line. */
  #bargeIn(controller: SessionController): void {
    const output = this.session.activeOutput;
    if (output) {
      if (this.#interruptible(output)) controller.cancelOutput(output.turnId, "barge_in");
    } else if (this.playout.playing) {
      this.playout.clear({ turnId: "", reason: "barge_in" });
    }
  }

  /**
   * Realtime barge-in: the line is cleared as soon as the provider's
   * speech_started arrives, before the pipeline cancels the response and
   * truncates the item (same decision as the pipeline's: the answer is
   * interruptible and interruptOnSpeech is on). The pipeline's own clear that
   * follows finds nothing sent since and is not repeated on the wire; the
   * heard position it reads is kept by the tracker.
   */
  #clearBeforeBargeIn(): void {
    const output = this.session.activeOutput;
    if (!output || this.#ctx.pipelineOptions.interruptOnSpeech === false || !this.#interruptible(output))
      return;
    this.playout.clear({ turnId: output.turnId, itemId: output.itemId, reason: "barge_in" });
  }

  #interruptible(output: TalkOutput): boolean {
    if (output.itemId !== this.#greetingItem) return true;
    return Date.now() - this.#greetingStartedAt >= this.#settings.greetingProtectMs;
  }

  #onSessionEvent(event: TalkEvent): void {
    if (event.type === "output.audio.started" && this.#greetingPending && event.itemId) {
      this.#greetingPending = false;
      this.#greetingItem = event.itemId;
      this.#greetingStartedAt = Date.now();
    }
    // After the emitter's own bookkeeping (endOutput follows output.audio.done in the same tick).
    for (const w of [...this.#eventWaiters]) queueMicrotask(w);
  }

  #eventWaiters: Array<() => void> = [];

  /** Resolves when `done()` holds, re-checked on every session event and when the line goes idle. */
  #until(done: () => boolean, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let waitingIdle = false;
      const check = (): void => {
        if (done() || signal.aborted || this.#state === "closed") {
          this.#eventWaiters = this.#eventWaiters.filter((w) => w !== check);
          signal.removeEventListener("abort", check);
          resolve();
          return;
        }
        if (this.playout.playing && !waitingIdle) {
          waitingIdle = true;
          void this.playout.whenIdle(signal).then(() => {
            waitingIdle = false;
            check();
          });
        }
      };
      this.#eventWaiters.push(check);
      signal.addEventListener("abort", check, { once: true });
      check();
    });
  }
}
