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
import type { TalkLogger } from "../core/index.js";
import { MediaLeg, type MediaLegAdapter } from "../core/index.js";
import type { SessionControllerFactory } from "../core/index.js";
import type { TalkOutput, TalkRuntime, TalkSession } from "../core/index.js";
import type { TalkEvent, TerminalReason } from "../core/index.js";
import type { CallControl, CallControlRegistry } from "../core/index.js";
import type { CollectDigitsRequest, CollectedDigits } from "../core/index.js";
import { bytesFromPcm16, dtmfTones } from "../codecs/index.js";
import type { CallMode } from "../config/index.js";
import { CallLatency } from "./call-latency.js";
import type { TelephonyStats } from "./telephony-stats.js";
import type { CarrierRestClient } from "./carrier/carrier-protocol.js";
import { DigitCollector } from "./digit-collector.js";
import type { LineAudio } from "./line-audio.js";
import { CallPlayout, type PlayoutLine } from "./playout/call-playout.js";

/** What a call needs from the process: narrow, no back-reference to the route or registry. */
export interface CallSessionContext {
  runtime: TalkRuntime;
  /** The process's one controller factory (providers, tools, trusted pipeline options bound once). */
  createController: SessionControllerFactory;
  callControls: CallControlRegistry;
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
  /** Said to the caller before a transfer; undefined: nothing (the model announces it). */
  transferAnnouncement: string | undefined;
}

/** The carrier a call is on: its id (session metadata), REST client, line format and playback buffer. */
export interface CallCarrier {
  readonly id: string;
  readonly rest: CarrierRestClient | undefined;
  readonly line: LineAudio;
  /** Where the callee of a transfer hears `text` first; undefined when the carrier has no briefing. */
  briefingUrl?(text: string): string | undefined;
  /** Audio the carrier buffers at most, ms (CarrierProtocol.playbackBufferMs); undefined: unbounded. */
  readonly playbackBufferMs?: number | undefined;
}

export interface CallIdentity {
  callSid: string;
  from?: string | undefined;
  to?: string | undefined;
  direction?: string | undefined;
}

export type CallState = "created" | "connected" | "detached" | "closing" | "closed";

export class CallSession implements CallControl, MediaLegAdapter {
  readonly callSid: string;
  readonly session: TalkSession;
  readonly playout: CallPlayout;
  readonly #leg: MediaLeg;
  readonly #ctx: CallSessionContext;
  readonly #settings: CallSettings;
  readonly #carrier: CallCarrier;
  #state: CallState = "created";
  #greetingItem: string | undefined;
  #greetingPending = false;
  #greetingStartedAt = 0;
  #graceTimer: NodeJS.Timeout | undefined;
  #closeLine: ((code: number, reason: string) => void) | undefined;
  #closeCode = 1000;
  #unregister: (() => void) | undefined;
  #closing: Promise<void> | undefined;
  #onClosed: (() => void) | undefined;
  readonly #digits = new DigitCollector();
  #dtmfItems = 0;

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
    const latency = new CallLatency({
      emit: (payload) => {
        ctx.stats?.recordLatency(payload.name, payload.ms);
        if (this.session.state === "active")
          this.session.emit({ type: "latency.metrics", payload, source: "telephony" });
      },
      ...(realtime ? {} : { endpointingMs: settings.silenceTimeoutMs }),
    });
    this.playout = new CallPlayout({
      line: carrier.line,
      sendHighWaterBytes: settings.sendHighWaterBytes,
      ...(carrier.playbackBufferMs !== undefined ? { maxUnplayedMs: carrier.playbackBufferMs } : {}),
      onClearSent: () => latency.clearSent(),
      onItemFirstFrame: () => latency.itemFirstFrame(),
    });
    this.#leg = new MediaLeg({
      session: this.session,
      createController: ctx.createController,
      adapter: this,
      format: carrier.line.pcmFormat,
      // No transcoding when the realtime provider speaks the line's format (u-law); PCM at the line's rate otherwise.
      ...(realtime ? { passthrough: carrier.line.format } : {}),
      turnTaking: realtime
        ? { kind: "provider" }
        : {
            kind: "local-vad",
            threshold: settings.vad.threshold,
            minSpeechMs: settings.vad.minSpeechMs,
            silenceMs: settings.silenceTimeoutMs,
          },
      // The realtime provider's speech events are timed as they reach the call (latency.metrics).
      wrapProviders: (base) => ({
        stt: (s) => base.stt(s),
        tts: (s) => base.tts(s),
        agent: (s) => base.agent(s),
        realtime: (s) => {
          const provider = base.realtime(s);
          return provider && latency.timedRealtime(provider);
        },
      }),
      observer: {
        bargeInDetected: (source) => latency.bargeInDetected(source),
        bargeInHandled: () => latency.bargeInHandled(),
        speechEnded: (source) => latency.speechEnded(source),
      },
      logger: ctx.logger,
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
    this.playout.attach(line);
    const first = this.#state === "created";
    this.#state = "connected";
    if (!first) {
      this.#ctx.logger.info({ callSid: this.callSid, streamSid }, "call: stream reconnected within grace");
      return;
    }
    await this.#leg.start();
    const greeting = this.#settings.greeting;
    if (greeting && this.#leg.takesText) {
      this.#greetingPending = true;
      this.#leg.say(greeting);
    }
  }

  /** Caller audio: one `media` payload in the line's format. A payload that is not whole samples is dropped. */
  onMedia(audio: Uint8Array): void {
    if (this.#state !== "connected") return;
    if (this.#leg.passthrough) return this.#leg.appendEncoded(audio);
    const line = this.#carrier.line;
    let pcm: Int16Array;
    try {
      pcm = line.toPcm(audio);
    } catch {
      return;
    }
    this.#leg.appendAudio(pcm, line.pcmFormat);
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
    if (output.itemId !== this.#greetingItem) return true;
    return Date.now() - this.#greetingStartedAt >= this.#settings.greetingProtectMs;
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

  async hangUp(options: { afterPlayback: boolean; reason?: string; signal: AbortSignal }): Promise<void> {
    const { signal } = options;
    if (options.afterPlayback) {
      const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.#settings.hangUpTimeoutMs)]);
      // The farewell is heard when no output is in flight and the carrier acknowledged every mark.
      await this.#until(() => !this.session.activeOutput && !this.playout.playing, deadline);
    }
    if (signal.aborted) throw new TalkError("cancelled", "The hang-up was cancelled (the caller spoke).");
    this.#ctx.logger.info({ callSid: this.callSid, reason: options.reason }, "call: hanging up");
    if (this.#carrier.rest) await this.#carrier.rest.hangUp(this.callSid, { signal });
    // After the tool's result is on its way: the carrier also sends `stop`, whichever comes first closes.
    setTimeout(() => void this.close("hung_up"), 0);
  }

  /**
   * Plays keypad tones into the call after the audio already queued: the
   * carrier's own command where it has one, otherwise Q.23 tones synthesised
   * into the outbound audio (any carrier). Resolves once played.
   */
  async sendDtmf(digits: string, signal: AbortSignal): Promise<void> {
    if (this.#state !== "connected") throw new TalkError("invalid_state", "The call has no live stream.");
    const rest = this.#carrier.rest;
    if (rest?.sendDtmf) {
      await this.playout.whenIdle(signal);
      signal.throwIfAborted();
      await rest.sendDtmf(this.callSid, digits, signal);
      return;
    }
    if (this.playout.sendsDigits) {
      await this.playout.whenIdle(signal);
      signal.throwIfAborted();
      this.playout.sendDigits(digits);
      return;
    }
    const line = this.#carrier.line;
    const tones = dtmfTones(digits, { sampleRate: line.pcmFormat.sampleRate, toneMs: 100, gapMs: 80 });
    const itemId = `dtmf-${++this.#dtmfItems}`;
    this.playout.write({ data: bytesFromPcm16(tones), format: line.pcmFormat }, { turnId: "dtmf", itemId });
    await this.playout.drained(itemId, signal);
  }

  /**
   * Moves the call to `destination` through the carrier's REST API: the
   * caller first hears the configured announcement, the callee the briefing
   * (where the carrier has one), then the session closes `transferred`. A
   * refusal or an outage is the tool's error (the model can say so), and the
   * call goes on.
   */
  async transfer(
    destination: string,
    signal: AbortSignal,
    options: { briefing?: string } = {},
  ): Promise<void> {
    const rest = this.#carrier.rest;
    if (!rest)
      throw new TalkError("capability_unsupported", "Call transfer needs the carrier's REST credentials.");
    if (this.#state !== "connected") throw new TalkError("invalid_state", "The call has no live stream.");
    const announcement = this.#settings.transferAnnouncement;
    if (announcement && this.#leg.takesText) {
      this.#leg.say(announcement);
      const deadline = AbortSignal.any([signal, AbortSignal.timeout(this.#settings.hangUpTimeoutMs)]);
      await this.#until(() => !this.session.activeOutput && !this.playout.playing, deadline);
    }
    signal.throwIfAborted();
    const briefingUrl = options.briefing ? this.#carrier.briefingUrl?.(options.briefing) : undefined;
    this.#ctx.logger.info(
      { callSid: this.callSid, briefing: briefingUrl !== undefined },
      "call: transferring",
    );
    await withRetries(
      () => rest.transfer(this.callSid, destination, signal, briefingUrl ? { briefingUrl } : {}),
      signal,
    );
    // After the tool's result is on its way: the carrier ends the stream too; whichever comes first closes.
    setTimeout(() => void this.close("transferred"), 0);
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
    this.#state = "closed";
    this.#onClosed?.();
    for (const resolve of this.#closedWaiters.splice(0)) resolve();
  }

  #onSessionEvent(event: TalkEvent): void {
    if (event.type === "input.audio.speech_started" || event.type === "turn.started") this.#digits.speech();
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

/**
 * Runs a carrier request, again after 250 ms and 1 s when the carrier was
 * unreachable or answered 5xx (provider_unavailable): moving a call to the
 * same destination twice does the same thing, so retrying is safe. A
 * refusal (provider_error) is not retried.
 */
async function withRetries(run: () => Promise<void>, signal: AbortSignal): Promise<void> {
  for (const wait of [250, 1000, -1]) {
    try {
      return await run();
    } catch (err) {
      if (wait < 0 || signal.aborted || toTalkError(err).code !== "provider_unavailable") throw err;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}
