/**
 * One outbound call's answering-machine detection: waits for the carrier's
 * result (or its own timeout, counted from answer), reports it (a
 * `session.updated` event `{machineDetection}` and the call's status), and
 * acts on it by policy:
 * - a person (or unknown: the carrier could not tell, never answered in
 *   time, or refused detection) gets the conversation: the greeting, held
 *   until now when `greet` is `after_detection`;
 * - a machine or fax: `continue` goes on as for a person; `hangup` hangs up;
 *   `voicemail` waits for the end of the machine's greeting (the beep, or the
 *   timeout), speaks the message and hangs up once it played (a fax is hung
 *   up on: it records no message).
 * Nothing here throws into the call: a hang-up the carrier refuses is logged
 * and the session closes anyway.
 */
import { toTalkError } from "../../core/index.js";
import type { TalkLogger, TalkSession } from "../../core/index.js";
import { GreetingEnd } from "./greeting-end.js";
import type { AmdSettings, CarrierMachineDetection, MachineDetectionStatus } from "./amd-types.js";

/** What detection needs of a call (CallSession). */
export interface DetectedCall {
  readonly callSid: string;
  readonly session: Pick<TalkSession, "emit" | "subscribe" | "state">;
  whenConnected(): Promise<void>;
  whenClosed(): Promise<void>;
  releaseGreeting(): void;
  holdCaller(onAudio?: (pcm: Int16Array, sampleRate: number) => void): void;
  speak(text: string): boolean;
  hangUp(options: { afterPlayback: boolean; reason?: string; signal: AbortSignal }): Promise<void>;
  close(reason: "hung_up"): Promise<void>;
}

export interface CallMachineDetectionOptions {
  /** Bounds the voicemail message's playback before the hang-up, ms. */
  hangUpTimeoutMs: number;
  logger: TalkLogger;
}

/** A message must start playing within this, or the call is hung up without it. */
const MESSAGE_START_MS = 15_000;

export class CallMachineDetection {
  readonly #call: DetectedCall;
  readonly #settings: AmdSettings;
  readonly #o: CallMachineDetectionOptions;
  readonly #status: MachineDetectionStatus;
  readonly #listeners: Array<(status: MachineDetectionStatus) => void> = [];
  #connected = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  /** A result that came before the stream started: acted on at connect. */
  #pending: CarrierMachineDetection | undefined;
  #finished = false;

  constructor(call: DetectedCall, settings: AmdSettings, options: CallMachineDetectionOptions) {
    this.#call = call;
    this.#settings = settings;
    this.#o = options;
    this.#status = { policy: settings.policy, action: "detecting" };
    void call.whenClosed().then(() => {
      this.#closed = true;
      clearTimeout(this.#timer);
    });
    void call.whenConnected().then(() => this.#onConnected());
    if (settings.greet === "at_once") call.releaseGreeting();
  }

  /** Where detection stands (a copy). */
  status(): MachineDetectionStatus {
    return { ...this.#status };
  }

  /** Called with each change of the status (the outbound-call job records it). */
  onChange(listener: (status: MachineDetectionStatus) => void): void {
    this.#listeners.push(listener);
  }

  /** The carrier refused detection (the call was placed without it): the result is unknown. */
  refused(): void {
    this.#pending = {
      callId: this.#call.callSid,
      answeredBy: "unknown",
      greetingEnded: false,
      carrierResult: "",
    };
    this.#status.fallback = "refused";
    if (this.#connected) this.#act();
  }

  /** One AMD callback for this call. A repeated or late one changes nothing once the call was acted on. */
  onResult(detection: CarrierMachineDetection): void {
    if (this.#finished || this.#closed) return;
    const waiting = this.#status.action === "waiting_for_beep";
    if (waiting) {
      // Only the end of the machine's greeting matters now.
      if (detection.answeredBy === "machine" && detection.greetingEnded) this.#leaveMessage(detection);
      return;
    }
    if (this.#status.answeredBy !== undefined) return;
    this.#pending = detection;
    if (this.#connected) this.#act();
  }

  #onConnected(): void {
    if (this.#closed) return;
    this.#connected = true;
    this.#timer = setTimeout(() => this.#onTimeout(), this.#settings.timeoutMs);
    if (this.#pending) this.#act();
  }

  #onTimeout(): void {
    if (this.#finished || this.#closed) return;
    if (this.#status.action === "waiting_for_beep") {
      this.#o.logger.info(
        { callSid: this.#call.callSid },
        "amd: no end of greeting reported; leaving the message",
      );
      this.#status.greetingEndedBy = "timeout";
      this.#leaveMessage(undefined);
      return;
    }
    this.#o.logger.info({ callSid: this.#call.callSid }, "amd: no result in time; treated as unknown");
    this.#status.fallback = "timeout";
    this.#pending = {
      callId: this.#call.callSid,
      answeredBy: "unknown",
      greetingEnded: false,
      carrierResult: "",
    };
    this.#act();
  }

  /** The first result, once the call is connected. */
  #act(): void {
    const d = this.#pending;
    this.#pending = undefined;
    if (!d || this.#finished || this.#closed) return;
    this.#status.answeredBy = d.answeredBy;
    this.#status.greetingEnded = d.greetingEnded;
    if (d.carrierResult) this.#status.carrierResult = d.carrierResult;
    this.#o.logger.info(
      {
        callSid: this.#call.callSid,
        answeredBy: d.answeredBy,
        carrierResult: d.carrierResult,
        policy: this.#settings.policy,
      },
      "amd: result",
    );
    const machine = d.answeredBy === "machine" || d.answeredBy === "fax";
    const policy = this.#settings.policy;
    if (!machine || policy === "continue") return this.#converse();
    if (policy === "hangup" || d.answeredBy === "fax") return void this.#hangUp("hung_up");
    // voicemail: the message follows the machine's greeting (heard on the line when the carrier will not say).
    if (d.greetingEndReported === false) {
      const end = new GreetingEnd();
      this.#call.holdCaller((pcm, rate) => {
        if (end.push(pcm, rate)) this.#greetingEndHeard();
      });
    } else this.#call.holdCaller();
    if (d.greetingEnded) return this.#leaveMessage(d);
    this.#update("waiting_for_beep");
  }

  #greetingEndHeard(): void {
    if (this.#finished || this.#closed || this.#status.action !== "waiting_for_beep") return;
    this.#o.logger.info(
      { callSid: this.#call.callSid },
      "amd: the machine's greeting ended (silence on the line)",
    );
    this.#status.greetingEndedBy = "silence";
    this.#leaveMessage(undefined);
  }

  #converse(): void {
    this.#finish(this.#settings.greet === "after_detection" ? "greeted" : "continued");
    this.#call.releaseGreeting();
  }

  #leaveMessage(d: CarrierMachineDetection | undefined): void {
    if (this.#finished) return;
    this.#status.greetingEnded = true;
    if (d) {
      this.#status.carrierResult = d.carrierResult;
      this.#status.greetingEndedBy = "carrier";
    }
    this.#finish("voicemail_left");
    const message = this.#settings.message ?? "";
    const heard = this.#messageStarted();
    if (!this.#call.speak(message)) {
      this.#o.logger.warn({ callSid: this.#call.callSid }, "amd: voicemail message could not be spoken");
      void this.#hangUp("hung_up");
      return;
    }
    void heard.then(() => this.#hangUp(undefined, true));
  }

  /** Resolves once the message's audio started (or after MESSAGE_START_MS, or the call closed). */
  #messageStarted(): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        off();
        resolve();
      };
      const timer = setTimeout(done, MESSAGE_START_MS);
      const off = this.#call.session.subscribe((event) => {
        if (event.type === "output.audio.started" || event.type === "session.closed") done();
      });
    });
  }

  async #hangUp(action?: "hung_up", afterPlayback = false): Promise<void> {
    if (action) this.#finish(action);
    if (this.#closed) return;
    try {
      await this.#call.hangUp({
        afterPlayback,
        reason: afterPlayback ? "voicemail left" : "answering machine",
        signal: AbortSignal.timeout(this.#o.hangUpTimeoutMs),
      });
    } catch (err) {
      this.#o.logger.warn(
        { callSid: this.#call.callSid, err: toTalkError(err).message },
        "amd: hang-up failed; closing the call",
      );
      await this.#call.close("hung_up");
    }
  }

  #finish(action: MachineDetectionStatus["action"]): void {
    this.#finished = true;
    clearTimeout(this.#timer);
    this.#update(action);
  }

  #update(action: MachineDetectionStatus["action"]): void {
    this.#status.action = action;
    const status = this.status();
    if (this.#call.session.state === "active")
      this.#call.session.emit({
        type: "session.updated",
        payload: { machineDetection: status },
        source: "telephony",
      });
    for (const listener of this.#listeners) {
      try {
        listener(status);
      } catch {
        // A listener cannot break the call.
      }
    }
  }
}
