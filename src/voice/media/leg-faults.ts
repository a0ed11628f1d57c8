import type { TalkLogger } from "../../core/index.js";
import type { FaultDecision, FaultHandler, ProviderFault, ResolvedFaultOptions } from "../../core/index.js";
import type { ProviderKind } from "../../core/index.js";
import type { FaultSpeech, PrerenderedSpeech } from "../faults/prerendered-speech.js";
import type { TalkAudioSink } from "../pipelines/controller-types.js";
import type { TalkSession } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";

/** What the leg's failure path needs: narrow, no back-reference to the leg. */
export interface LegFaultsContext {
  session: TalkSession;
  /** Where the lines are spoken (the adapter's sink); none for a listen-only leg. */
  sink: TalkAudioSink | undefined;
  /** Whether the sink still plays audio no session output owns. */
  playing(): boolean;
  /** The format the sink takes (known once the leg has started). */
  outputFormat(): AudioFormat;
  /** The lines; without them a fault is only reported (session.error) and the policy applied. */
  speech: FaultSpeech | undefined;
  options: ResolvedFaultOptions;
  /** Closes the leg (and through its adapter the call) with `provider_lost`. */
  hangUp(): void;
  logger: TalkLogger;
}

/** How long past its own length a goodbye may take to be heard before the hang-up goes ahead anyway, ms. */
const GOODBYE_GRACE_MS = 3000;

/**
 * The one failure path of a media leg. A pipeline reports a provider failure
 * here (after its own retries): the caller hears the apology at once, from
 * audio rendered at start-up, written straight to the adapter's sink (no
 * provider, no synthesis); the session gets a `session.error` naming the
 * fault; then the policy decides: recover (the pipeline reconnects or the
 * next turn tries again) or hang up, after the goodbye has been heard, with
 * reason `provider_lost`. Faults in a row past `maxConsecutiveFaults` (no
 * answer heard in between) hang up whatever the policy, so a call never
 * loops on a provider that is gone.
 */
export class LegFaults implements FaultHandler {
  readonly #ctx: LegFaultsContext;
  #consecutive = 0;
  #lines = 0;
  #hangingUp = false;
  /** A realtime fault was told (health.changed ok: false) and no recovery since. */
  #realtimeDown = false;

  constructor(ctx: LegFaultsContext) {
    this.#ctx = ctx;
    // An answer heard to its end means the providers work again.
    ctx.session.subscribe((event) => {
      if (event.type === "output.audio.done") this.#consecutive = 0;
    });
  }

  /** True once the leg is hanging up for a lost provider. */
  get hangingUp(): boolean {
    return this.#hangingUp;
  }

  fault(fault: ProviderFault): FaultDecision {
    if (this.#hangingUp) return "hangup";
    this.#consecutive++;
    const { options } = this.#ctx;
    const hangUp = options.policy === "hangup" || this.#consecutive >= options.maxConsecutiveFaults;
    this.#report(fault, hangUp ? "hangup" : "recover");
    if (hangUp) {
      this.#goodbye();
      return "hangup";
    }
    this.#say(this.#ctx.speech?.apology);
    return "recover";
  }

  lost(fault: ProviderFault): void {
    if (this.#hangingUp) return;
    this.#report(fault, "hangup");
    this.#goodbye();
  }

  recovered(): void {
    const { session } = this.#ctx;
    this.#ctx.logger.info({ sessionId: session.id }, "media leg: provider recovered");
    if (this.#realtimeDown && session.state === "active")
      session.emit({ type: "health.changed", payload: { ok: true, kind: "realtime" } });
    this.#realtimeDown = false;
  }

  holding(provider: ProviderKind): void {
    // Over audio still playing it would be heard on top of it; after a hang-up began, never.
    if (this.#hangingUp || this.#ctx.session.state !== "active" || this.#ctx.playing()) return;
    if (this.#say(this.#ctx.speech?.holding, { clear: false }) === undefined) return;
    this.#ctx.logger.info(
      { sessionId: this.#ctx.session.id, provider },
      "media leg: provider late, holding line",
    );
  }

  #report(fault: ProviderFault, recovery: FaultDecision): void {
    const { session, logger } = this.#ctx;
    logger.warn(
      {
        sessionId: session.id,
        fault: fault.kind,
        provider: fault.provider,
        recovery,
        message: fault.message,
      },
      "media leg: provider fault",
    );
    if (session.state !== "active") return;
    // STT, TTS and agent health is told by their provider chains; a realtime session's here.
    if (fault.provider === "realtime" && !this.#realtimeDown) {
      this.#realtimeDown = true;
      session.emit({
        type: "health.changed",
        payload: { ok: false, kind: "realtime", fault: fault.kind, message: fault.message },
      });
    }
    session.emit({
      type: "session.error",
      payload: {
        code:
          fault.kind === "connect_failed"
            ? "provider_unavailable"
            : fault.kind === "stalled"
              ? "timeout"
              : "provider_error",
        message: fault.message,
        retryable: recovery === "recover",
        ...(fault.upstreamCode !== undefined ? { upstreamCode: fault.upstreamCode } : {}),
        details: { fault: fault.kind, provider: fault.provider, recovery },
      },
    });
  }

  /** Writes a line to the sink (clearing what still plays first, unless told not to); returns its item id. */
  #say(line: PrerenderedSpeech | undefined, how: { clear: boolean } = { clear: true }): string | undefined {
    const { sink, session } = this.#ctx;
    if (!line || !sink) return undefined;
    try {
      const rendered = line.audioFor(this.#ctx.outputFormat());
      if (how.clear && this.#ctx.playing()) sink.clear({ turnId: "", reason: "error" });
      const itemId = `fault-line-${++this.#lines}`;
      sink.write(rendered.audio, { turnId: "", itemId });
      return itemId;
    } catch (err) {
      // Nothing here should fail; if it does, the policy still applies.
      this.#ctx.logger.warn({ err, sessionId: session.id }, "media leg: the fault line could not be played");
      return undefined;
    }
  }

  /** The goodbye, then the hang-up once it was heard (or after its length plus a grace). */
  #goodbye(): void {
    this.#hangingUp = true;
    const { sink, session, speech } = this.#ctx;
    const itemId = this.#say(speech?.goodbye);
    if (itemId === undefined || !sink?.drained) {
      this.#ctx.hangUp();
      return;
    }
    try {
      const length = speech!.goodbye.audioFor(this.#ctx.outputFormat()).durationMs;
      const timeout = AbortSignal.timeout(Math.ceil(length + GOODBYE_GRACE_MS));
      sink.drained(itemId, AbortSignal.any([session.signal, timeout])).then(
        () => this.#ctx.hangUp(),
        () => this.#ctx.hangUp(),
      );
    } catch (err) {
      this.#ctx.logger.warn({ err, sessionId: session.id }, "media leg: waiting for the goodbye failed");
      this.#ctx.hangUp();
    }
  }
}
