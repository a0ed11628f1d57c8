/**
 * What a tool asks of a live call (CallControl): hang up (after the farewell
 * is heard), send keypad tones (the carrier's own command or in-band Q.23
 * tones), transfer (announcement, briefing, the carrier's REST API). A
 * carrier's refusal or outage is the tool's error and the caller hears the
 * apology (talk.faults.apology) after what already plays.
 */
import { pcmChunk, TalkError, toTalkError } from "../core/index.js";
import type { TalkLogger, TerminalReason } from "../core/index.js";
import type { MediaLeg, SessionControllerFactory } from "../voice/index.js";
import { dtmfTones } from "../codecs/index.js";
import type { CallCarrier } from "./call-types.js";
import { runCarrierAction, type CarrierActionContext } from "./carrier-actions.js";
import type { CallQuiet } from "./call-quiet.js";
import type { CallPlayout } from "./playout/call-playout.js";

export interface CallControlVerbsOptions {
  callSid: string;
  carrier: CallCarrier;
  logger: TalkLogger;
  /** Where the apology comes from (faults.speech, rendered at start-up). */
  faults: SessionControllerFactory["faults"];
  hangUpTimeoutMs: number;
  /** Said to the caller before a transfer; undefined: nothing. */
  transferAnnouncement: string | undefined;
  leg: Pick<MediaLeg, "takesText" | "say" | "outputFormat">;
  playout: CallPlayout;
  quiet: CallQuiet;
  /** Whether the call has a live stream. */
  connected(): boolean;
  /** Closes the call (after the tool's result is on its way). */
  close(reason: TerminalReason): void;
}

export class CallControlVerbs {
  readonly #o: CallControlVerbsOptions;
  #items = 0;

  constructor(options: CallControlVerbsOptions) {
    this.#o = options;
  }

  async hangUp(options: { afterPlayback: boolean; reason?: string; signal: AbortSignal }): Promise<void> {
    const { signal } = options;
    const { callSid, carrier, logger } = this.#o;
    // The farewell is heard when no output is in flight and the carrier acknowledged every mark.
    if (options.afterPlayback) await this.#o.quiet.quiet(signal);
    if (signal.aborted) throw new TalkError("cancelled", "The hang-up was cancelled (the caller spoke).");
    logger.info({ callSid, reason: options.reason }, "call: hanging up");
    if (carrier.rest) await carrier.rest.hangUp(callSid, { signal });
    // After the tool's result is on its way: the carrier also sends `stop`, whichever comes first closes.
    setTimeout(() => this.#o.close("hung_up"), 0);
  }

  /**
   * Plays keypad tones into the call after the audio already queued: the
   * carrier's own command where it has one (retried on outages only when the
   * carrier drops repeats), otherwise, or for digits the command does not
   * take, Q.23 tones synthesised into the outbound audio (any carrier).
   * Resolves once played (in-band) or accepted (native).
   */
  async sendDtmf(digits: string, signal: AbortSignal): Promise<void> {
    if (!this.#o.connected()) throw new TalkError("invalid_state", "The call has no live stream.");
    const { callSid, carrier, playout } = this.#o;
    const rest = carrier.rest;
    const native = rest?.sendDtmf?.bind(rest);
    if (rest && native) {
      await playout.whenIdle(signal);
      signal.throwIfAborted();
      let inBand = false;
      await runCarrierAction(this.#actions, {
        name: "send_dtmf",
        idempotent: rest.dtmfIdempotent === true,
        signal,
        run: async (requestId) => {
          try {
            await native(callSid, digits, signal, { requestId });
          } catch (err) {
            if (toTalkError(err).code !== "capability_unsupported") throw err;
            inBand = true;
          }
        },
      });
      if (!inBand) return;
    }
    if (playout.sendsDigits) {
      await playout.whenIdle(signal);
      signal.throwIfAborted();
      playout.sendDigits(digits);
      return;
    }
    const format = carrier.line.pcmFormat;
    const tones = dtmfTones(digits, { sampleRate: format.sampleRate, toneMs: 100, gapMs: 80 });
    const itemId = `dtmf-${++this.#items}`;
    playout.write(pcmChunk(tones, format), { turnId: "dtmf", itemId });
    await playout.drained(itemId, signal);
  }

  /**
   * Moves the call to `destination` through the carrier's REST API: the
   * caller first hears the configured announcement, the callee the briefing
   * (where the carrier has one), then the call closes `transferred`. A
   * refusal or an outage (after retries) is the tool's error (the model can
   * say so), the caller hears the apology, and the call goes on.
   */
  async transfer(destination: string, signal: AbortSignal, options: { briefing?: string }): Promise<void> {
    const { callSid, carrier, logger, leg } = this.#o;
    const rest = carrier.rest;
    if (!rest)
      throw new TalkError("capability_unsupported", "Call transfer needs the carrier's REST credentials.");
    if (!this.#o.connected()) throw new TalkError("invalid_state", "The call has no live stream.");
    const announcement = this.#o.transferAnnouncement;
    if (announcement && leg.takesText) {
      leg.say(announcement);
      await this.#o.quiet.quiet(signal);
    }
    signal.throwIfAborted();
    await runCarrierAction(this.#actions, {
      name: "transfer",
      // The same call moved to the same document again does the same thing; Telnyx also drops repeats.
      idempotent: true,
      signal,
      run: async (requestId) => {
        // Inside the action: URLs that cannot be signed (the shared secret unreachable) are apologised for too.
        const documents = carrier.transferDocuments?.();
        const briefingUrl = options.briefing ? await documents?.briefingUrl(options.briefing) : undefined;
        const documentUrl = await documents?.documentUrl(destination, options.briefing);
        logger.info({ callSid, briefing: briefingUrl !== undefined }, "call: transferring");
        await rest.transfer(callSid, destination, signal, {
          ...(briefingUrl ? { briefingUrl } : {}),
          ...(documentUrl ? { documentUrl } : {}),
          requestId,
        });
      },
    });
    // After the tool's result is on its way: the carrier ends the stream too; whichever comes first closes.
    setTimeout(() => this.#o.close("transferred"), 0);
  }

  get #actions(): CarrierActionContext {
    return { callSid: this.#o.callSid, logger: this.#o.logger, apologize: () => this.#apologize() };
  }

  /**
   * The apology (talk.faults.apology, rendered at start-up) after what is
   * already playing: the carrier did not do what the caller was told it
   * would, and the model's own words come only after its tool error.
   */
  async #apologize(): Promise<void> {
    const line = this.#o.faults.speech?.apology;
    if (!line || !this.#o.connected()) return;
    await this.#o.quiet.quiet(AbortSignal.timeout(this.#o.hangUpTimeoutMs));
    if (!this.#o.connected()) return;
    const rendered = line.audioFor(this.#o.leg.outputFormat);
    const itemId = `call-control-apology-${++this.#items}`;
    this.#o.playout.write(rendered.audio, { turnId: "", itemId });
  }
}
