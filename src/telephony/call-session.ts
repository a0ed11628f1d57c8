/**
 * One phone call over one core media leg, never the other way round: the
 * call's ids are session metadata; the session knows nothing of the carrier.
 * The session is created when the call is known (stream `start`, or an
 * outbound dial), the leg's controller when the stream starts; `media`
 * appends audio, `stop` or the end of the reconnect grace closes it, and a
 * session closed by anything else (the runtime, the cluster, the provider)
 * closes the leg, which closes the call and its stream.
 *
 * realtime calls hand u-law straight to the provider when it carries u-law
 * (the leg chooses once), PCM16 8 kHz otherwise, and the provider's speech
 * events drive turns and barge-in; stt-tts calls decode to PCM16 8 kHz and
 * the leg's local VAD starts and ends turns and interrupts answers.
 */
import { TalkError, toTalkError } from "../core/index.js";
import type { MediaLeg, MediaLegAdapter } from "../voice/index.js";
import type { TalkOutput, TalkSession } from "../core/index.js";
import type { TalkEvent, TerminalReason } from "../core/index.js";
import type { CallControl } from "../core/index.js";
import type { CollectDigitsRequest, CollectedDigits } from "../core/index.js";
import { CallControlVerbs } from "./call-control-verbs.js";
import { CallGreeting } from "./call-greeting.js";
import { createCallMedia } from "./call-media.js";
import { CallQuiet } from "./call-quiet.js";
import { DigitCollector } from "./digit-collector.js";
import type { CallPlayout, PlayoutLine } from "./playout/call-playout.js";
import { startRecording, type CallRecording } from "./recording/call-recording.js";
import type { CallCarrier, CallIdentity, CallSessionContext, CallSettings, CallState } from "./call-types.js";

export type { CallCarrier, CallIdentity, CallSessionContext, CallSettings, CallState };

export class CallSession implements CallControl, MediaLegAdapter {
  readonly callSid: string;
  readonly session: TalkSession;
  readonly playout: CallPlayout;
  readonly #leg: MediaLeg;
  readonly #ctx: CallSessionContext;
  readonly #settings: CallSettings;
  readonly #carrier: CallCarrier;
  #state: CallState = "created";
  /** The greeting, and whether caller audio is held from the assistant (answering-machine detection). */
  readonly #greeting: CallGreeting;
  readonly #quiet: CallQuiet;
  readonly #verbs: CallControlVerbs;
  #legStarted = false;
  #connectedWaiters: Array<() => void> = [];
  #graceTimer: NodeJS.Timeout | undefined;
  #closeLine: ((code: number, reason: string) => void) | undefined;
  #closeCode = 1000;
  #unregister: (() => void) | undefined;
  #closing: Promise<void> | undefined;
  #onClosed: (() => void) | undefined;
  readonly #digits = new DigitCollector();
  readonly #identity: CallIdentity;
  #recording: CallRecording | undefined;

  constructor(
    ctx: CallSessionContext,
    carrier: CallCarrier,
    settings: CallSettings,
    call: CallIdentity,
    onClosed?: () => void,
    extraMetadata?: Record<string, string>,
  ) {
    this.#ctx = ctx;
    this.#settings = settings;
    this.#carrier = carrier;
    this.callSid = call.callSid;
    this.#identity = call;
    this.#onClosed = onClosed;
    const realtime = settings.mode === "realtime";
    const metadata: Record<string, string> = { surface: "phone", carrier: carrier.id, callSid: call.callSid };
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
    const { playout, leg } = createCallMedia(ctx, carrier, settings, this.session, this);
    this.playout = playout;
    this.#leg = leg;
    this.#greeting = new CallGreeting({
      // The recording notice is heard first, in the greeting's turn (protected with it).
      text: () => [this.#recording?.notice, settings.greeting].filter(Boolean).join(" "),
      protectMs: settings.greetingProtectMs,
      held: settings.holdGreeting === true,
      leg,
      ready: () => this.#legStarted && this.#state === "connected",
      legStarted: () => this.#legStarted,
      onUnspoken: (err) =>
        ctx.logger.warn({ err, callSid: this.callSid }, "call: the greeting could not be spoken"),
    });
    this.#quiet = new CallQuiet({
      session: this.session,
      playout,
      timeoutMs: settings.hangUpTimeoutMs,
    });
    this.#verbs = new CallControlVerbs({
      callSid: this.callSid,
      carrier,
      logger: ctx.logger,
      faults: ctx.createController.faults,
      hangUpTimeoutMs: settings.hangUpTimeoutMs,
      transferAnnouncement: settings.transferAnnouncement,
      leg,
      playout,
      quiet: this.#quiet,
      connected: () => this.#state === "connected",
      close: (reason) => void this.close(reason),
    });
    this.#unregister = ctx.callControls.set(this.session.id, this);
    this.session.subscribe((event) => this.#onSessionEvent(event));
  }

  get state(): CallState {
    return this.#state;
  }

  /** Resolves with the reason once the call's media leg closed. */
  get legClosedReason(): Promise<TerminalReason> {
    return this.#leg.closed;
  }

  /**
   * The stream started (or the carrier reconnected within the grace): audio
   * goes to `line`. The first time, the leg starts and the greeting is
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
    const first = this.#state === "created";
    // Recorded from the stream's start (an outbound call's ringing is not), on every line it reconnects on.
    if (first) this.#recording = startRecording(this.#ctx, this.#carrier, this.#identity, this.session);
    this.playout.attach(this.#recording?.tap(line) ?? line);
    this.#state = "connected";
    if (!first) {
      this.#ctx.logger.info({ callSid: this.callSid, streamSid }, "call: stream reconnected within grace");
      return;
    }
    for (const resolve of this.#connectedWaiters.splice(0)) resolve();
    await this.#leg.start();
    this.#legStarted = true;
    this.#greeting.greet();
  }

  /** Resolves when the call's stream first started (the callee answered); never for a call that closes first. */
  whenConnected(): Promise<void> {
    if (this.#state !== "created") return Promise.resolve();
    return new Promise((resolve) => this.#connectedWaiters.push(resolve));
  }

  /** Caller audio reaches the assistant again and the greeting is spoken (once), now or as the stream starts. */
  releaseGreeting(): void {
    this.#greeting.release();
  }

  /**
   * Stops the assistant (its answer cut) and keeps caller audio from it, for
   * a machine that gets a message instead; `onAudio` hears that audio as PCM.
   */
  holdCaller(onAudio?: (pcm: Int16Array, sampleRate: number) => void): void {
    this.#greeting.hold(onAudio);
  }

  /** Speaks `text` verbatim in a turn of its own; false when the call cannot (no stream, no text input). */
  speak(text: string): boolean {
    if (this.#state !== "connected" || !this.#legStarted || !this.#leg.takesText) return false;
    this.#leg.say(text);
    return true;
  }

  /**
   * Caller audio: one `media` payload in the line's format. A payload that is not whole samples is dropped.
   * `base64`: the payload as the carrier sent it, when it came so (a passthrough call forwards it as is).
   */
  onMedia(audio: Uint8Array, base64?: string): void {
    if (this.#state !== "connected") return;
    this.#recording?.caller(audio);
    const line = this.#carrier.line;
    // The line's clock moved by this frame whoever hears it: the played reference advances in step.
    const samples = Math.round((audio.byteLength / line.bytesPerMs) * (line.pcmFormat.sampleRate / 1000));
    // Only the echo canceller of a PCM leg reads what was played: a passthrough call moves the mirror on without
    // decoding it (measured: the decode and its PCM were ~2% of a relayed call's CPU).
    if (this.#leg.passthrough && !this.#greeting.held) {
      this.playout.reference.skip(samples);
      return this.#leg.appendEncoded(audio, base64);
    }
    const reference = this.playout.reference.take(samples);
    if (this.#greeting.held) return this.#onHeldAudio(audio);
    let pcm: Int16Array;
    try {
      pcm = line.toPcm(audio);
    } catch {
      return;
    }
    this.#leg.appendAudio(pcm, line.pcmFormat, reference);
  }

  #onHeldAudio(audio: Uint8Array): void {
    const line = this.#carrier.line;
    try {
      this.#greeting.heldAudio(line.toPcm(audio), line.pcmFormat.sampleRate);
    } catch {
      // Not whole samples: dropped, as any caller audio.
    }
  }

  /**
   * A keypad digit: a talk.event (transcript.done with input "dtmf") and text
   * the agent answers; while collect_digits runs, the event only (the tool
   * returns the digits).
   */
  onDtmf(digit: string): void {
    if (this.#state !== "connected") return;
    const collecting = this.#digits.turnId;
    if (this.#digits.offer(digit)) {
      if (this.session.state === "active")
        this.session.emit({
          type: "transcript.done",
          turnId: collecting,
          final: true,
          payload: { role: "user", text: digit, input: "dtmf", digits: digit, collected: true },
          source: "telephony",
        });
      return;
    }
    if (!this.#leg.takesText) return;
    try {
      this.#leg.sendUserText(`The caller pressed ${digit} on the keypad.`, { input: "dtmf", digits: digit });
    } catch (err) {
      this.#ctx.logger.warn(
        { err: toTalkError(err).message, callSid: this.callSid },
        "call: dtmf not delivered",
      );
    }
  }

  onMark(name: string): void {
    this.#recording?.markPlayed(name);
    this.playout.markPlayed(name);
  }

  /** The socket dropped without `stop`: keep the session for `graceMs` in case the carrier reconnects. */
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

  // MediaLegAdapter ----------------------------------------------------------

  get sink(): CallPlayout {
    return this.playout;
  }

  playing(): boolean {
    return this.playout.playing;
  }

  /** Greeting protection: the greeting cannot be interrupted during its first greetingProtectMs. */
  interruptible(output: TalkOutput): boolean {
    return this.#greeting.interruptible(output);
  }

  /** The leg closed (whoever closed the session): the call and its stream follow. */
  legClosed(reason: TerminalReason): void {
    // A lost provider ends the call at the carrier too (the caller heard the goodbye), not only the stream.
    const rest = this.#carrier.rest;
    if (reason === "provider_lost" && rest) {
      rest
        .hangUp(this.callSid, { signal: AbortSignal.timeout(this.#settings.hangUpTimeoutMs) })
        .catch((err: unknown) =>
          this.#ctx.logger.warn(
            { err: toTalkError(err).message, callSid: this.callSid },
            "call: hang-up failed",
          ),
        );
    }
    void this.close(reason);
  }

  // CallControl -------------------------------------------------------------

  hangUp(options: { afterPlayback: boolean; reason?: string; signal: AbortSignal }): Promise<void> {
    return this.#verbs.hangUp(options);
  }

  /** Keypad tones into the call after the audio already queued (CallControlVerbs.sendDtmf). */
  sendDtmf(digits: string, signal: AbortSignal): Promise<void> {
    return this.#verbs.sendDtmf(digits, signal);
  }

  /** Moves the call to `destination` through the carrier (CallControlVerbs.transfer); closes `transferred`. */
  transfer(destination: string, signal: AbortSignal, options: { briefing?: string } = {}): Promise<void> {
    return this.#verbs.transfer(destination, signal, options);
  }

  /** Waits for keypad digits (collect_digits); the digits are events, not text to the agent. */
  collectDigits(request: CollectDigitsRequest, signal: AbortSignal): Promise<CollectedDigits> {
    if (this.#state !== "connected") throw new TalkError("invalid_state", "The call has no live stream.");
    return this.#digits.collect(request, signal);
  }

  /** Resolves once the call is closed (whoever closed it). */
  whenClosed(): Promise<void> {
    if (this.#state === "closed") return Promise.resolve();
    return new Promise((resolve) => this.#closedWaiters.push(resolve));
  }

  #closedWaiters: Array<() => void> = [];

  /** Ends the call's session with `reason` (the carrier's, for outbound calls). Idempotent. */
  close(reason: TerminalReason, code = 1000): Promise<void> {
    if (!this.#closing) this.#closeCode = code;
    this.#closing ??= this.#close(reason);
    return this.#closing;
  }

  async #close(reason: TerminalReason): Promise<void> {
    this.#state = "closing";
    clearTimeout(this.#graceTimer);
    this.#unregister?.();
    this.#digits.close();
    this.playout.close();
    await this.#leg.close(reason);
    this.#closeLine?.(this.#closeCode, String(reason).slice(0, 100));
    this.#closeLine = undefined;
    await this.#recording?.close(); // the last samples and the sidecar; never rejects
    this.#state = "closed";
    this.#quiet.close();
    this.#onClosed?.();
    for (const resolve of this.#closedWaiters.splice(0)) resolve();
  }

  #onSessionEvent(event: TalkEvent): void {
    if (event.type === "input.audio.speech_started" || event.type === "turn.started") this.#digits.speech();
    this.#greeting.onSessionEvent(event);
    this.#quiet.onSessionEvent();
  }
}
