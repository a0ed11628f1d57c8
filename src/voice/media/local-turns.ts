/**
 * A media leg's local turn-taking (the provider has none): the speech gate on
 * the caller's audio (after the echo guard) starts turns and barges in at the
 * onset, or, with talk.input.bargeIn.confirmWithWords on a controller that
 * can hold its answer, holds the answer and lets the words decide
 * (HeldSpeech, BargeInPolicy.judge); the end of a turn is the end-of-turn
 * rule's (TurnEndpoint). Everything it does to the session goes through the
 * narrow context its leg gives it.
 */
import type { TalkLogger } from "../../core/index.js";
import type { BargeInPolicy, BargeInSource } from "../pipelines/barge-in-policy.js";
import { canHoldOutput, type SessionController } from "../pipelines/session-controller.js";
import type { TalkSession } from "../../core/index.js";
import { HeldSpeech } from "./held-speech.js";
import type { SpeechGate } from "./speech-gate.js";
import type { TurnEndpoint } from "./turn-endpoint.js";

export interface LocalTurnsContext {
  session: TalkSession;
  controller: SessionController;
  gate: SpeechGate;
  endpoint: TurnEndpoint;
  policy: BargeInPolicy;
  minSpeechMs: number;
  /** Caller audio taken so far, ms (the leg's input clock). */
  inputMs(): number;
  /** The leg's barge-in: cancels the active output when the policy says so, or clears a tail. */
  bargeIn(source: BargeInSource): boolean;
  /** The leg's input.audio.speech_started / speech_stopped. */
  speech(
    type: "input.audio.speech_started" | "input.audio.speech_stopped",
    turnId: string,
    atMs: number,
    endpointMs?: number,
  ): void;
  bargeInDetected?(): void;
  bargeInHandled?(): void;
  /** The turn ended after `endpointMs` of silence (the end-of-turn rule's endpoint for it). */
  speechEnded?(endpointMs: number): void;
  logger: TalkLogger;
}

/** Speech kept over a protected answer, at most this long (the rest of it still reaches the turn live), ms. */
const MAX_PENDING_MS = 30_000;

/** Speech over an answer the policy keeps playing: kept until that answer is over, then a turn of its own. */
interface PendingSpeech {
  onsetMs: number;
  audio: Int16Array[];
  samples: number;
  /** The gate heard the speech end (its silence) while the answer still played. */
  ended: boolean;
}

export class LocalTurns {
  readonly #ctx: LocalTurnsContext;
  #capturingTurn: string | undefined;
  #held: HeldSpeech | undefined;
  #pending: PendingSpeech | undefined;
  readonly #unsubscribe: () => void;

  constructor(ctx: LocalTurnsContext) {
    this.#ctx = ctx;
    // The endpoint reads the turn's running transcript (the recognizer's partials).
    this.#unsubscribe = ctx.session.subscribe((event) => {
      // Kept speech waits for the answer's end: also when no caller audio follows it (a line gone quiet).
      if (this.#pending && (event.type === "output.audio.done" || event.type === "output.audio.cancelled"))
        setImmediate(() => this.#flushPending());
      if (event.type !== "transcript.delta" || event.payload.role !== "user") return;
      ctx.endpoint.transcriptDelta(event.turnId, event.payload.text, event.payload.replace === true);
    });
  }

  /** Caller audio (echo removed): onsets, held speech, turn audio and its end. */
  audio(pcm: Int16Array): void {
    const { gate, controller, endpoint } = this.#ctx;
    const event = gate.process(pcm);
    if (this.#pending) {
      this.#pendingAudio(pcm, event);
      return;
    }
    if (event === "speech-start") {
      if (this.#capturingTurn !== undefined) {
        // Speech again before the endpoint: the same turn goes on (its pre-roll is already in it).
        endpoint.speechResumed();
        this.#tellPause(this.#capturingTurn);
        controller.appendPcm(pcm);
        return;
      }
      this.#onset();
      return;
    }
    if (this.#held) {
      this.#heldAudio(pcm, event === "speech-end");
      return;
    }
    const turnId = this.#capturingTurn;
    if (turnId === undefined) return;
    controller.appendPcm(pcm);
    if (endpoint.frame(event, gate, (pcm.length / gate.sampleRate) * 1000)) {
      this.#endTurn(turnId);
      return;
    }
    this.#tellPause(turnId);
    const words = controller.prepareAnswer ? endpoint.prepareDue() : undefined;
    if (words !== undefined) controller.prepareAnswer?.(turnId, words);
  }

  /** The caller paused, or their voice came back after a pause: the turn's recognizer is told. */
  #tellPause(turnId: string): void {
    const pause = this.#ctx.endpoint.pauseChange();
    if (pause !== undefined) this.#ctx.controller.callerPause?.(turnId, pause === "paused");
  }

  close(): void {
    this.#unsubscribe();
    this.#held?.release();
    this.#held = undefined;
    this.#pending = undefined;
  }

  #onset(): void {
    const { session, policy, controller } = this.#ctx;
    // New speech while an ended one still waits for its words: that wait is over.
    if (this.#held) {
      this.#held.release();
      this.#held = undefined;
    }
    const output = session.activeOutput;
    if (
      output &&
      !output.signal.aborted &&
      policy.confirmWithWords &&
      policy.interrupts(output) &&
      canHoldOutput(controller)
    ) {
      this.#ctx.bargeInDetected?.();
      const held = controller.holdOutput();
      this.#ctx.bargeInHandled?.();
      if (held) {
        const h = new HeldSpeech(this.#onsetMs(), this.#ctx.gate.takePreRoll());
        this.#held = h;
        this.#ctx.speech("input.audio.speech_started", output.turnId, h.onsetMs);
        h.listen(controller.probeWords((text) => this.#words(h, text)));
        return;
      }
    }
    this.#ctx.bargeIn("local_vad");
    // Speech over an answer the policy keeps playing (a protected greeting) starts no turn yet: a turn would
    // supersede, and so cancel, that answer. The speech is noted on it and kept; once that answer is over it
    // becomes a turn of its own (its words and the answer to them are not the greeting's).
    const playing = session.activeOutput;
    if (playing && !playing.signal.aborted && !policy.interrupts(playing)) {
      const onsetMs = this.#onsetMs();
      this.#ctx.speech("input.audio.speech_started", playing.turnId, onsetMs);
      const audio = this.#ctx.gate.takePreRoll();
      const samples = audio.reduce((n, frame) => n + frame.length, 0);
      this.#pending = { onsetMs, audio, samples, ended: false };
      return;
    }
    this.#startTurn(this.#onsetMs(), this.#ctx.gate.takePreRoll());
  }

  /**
   * Caller audio while speech over a protected answer is kept: the speech's audio is added (up to its
   * end; again when it resumes); once that answer is over, the speech is a turn of its own, ended at
   * once when the speech already ended, else it goes on live to its endpoint.
   */
  #pendingAudio(pcm: Int16Array, event: "speech-start" | "speech-end" | undefined): void {
    const p = this.#pending!;
    if (event === "speech-start") {
      // Speech again over an answer the policy no longer keeps (a greeting's protection ran out): a barge-in.
      const output = this.#ctx.session.activeOutput;
      if (output && !output.signal.aborted && this.#ctx.policy.interrupts(output)) {
        this.#pending = undefined;
        this.#onset();
        return;
      }
      p.ended = false;
    }
    const max = (MAX_PENDING_MS / 1000) * this.#ctx.gate.sampleRate;
    if (!p.ended && p.samples < max) {
      p.audio.push(pcm);
      p.samples += pcm.length;
    }
    if (event === "speech-end") p.ended = true;
    this.#flushPending();
  }

  /** The answer kept playing over the pending speech is over: the speech is a turn of its own now. */
  #flushPending(): void {
    const p = this.#pending;
    if (!p || this.#ctx.session.state !== "active") return;
    const output = this.#ctx.session.activeOutput;
    if (output && !output.signal.aborted) return;
    this.#pending = undefined;
    try {
      const turnId = this.#startTurn(p.onsetMs, p.audio);
      if (p.ended) this.#endTurn(turnId);
    } catch (err) {
      this.#ctx.logger.debug(
        { err, sessionId: this.#ctx.session.id },
        "media leg: speech kept over an answer lost its turn",
      );
    }
  }

  /** The onset was confirmed after minSpeechMs of speech: that is where it began. */
  #onsetMs(): number {
    return Math.max(0, this.#ctx.inputMs() - this.#ctx.minSpeechMs);
  }

  #startTurn(onsetMs: number, audio: Int16Array[]): string {
    const { controller, endpoint } = this.#ctx;
    const turn = controller.startTurn();
    this.#capturingTurn = turn.id;
    endpoint.begin(turn.id);
    this.#ctx.speech("input.audio.speech_started", turn.id, onsetMs);
    for (const frame of audio) controller.appendPcm(frame);
    return turn.id;
  }

  #endTurn(turnId: string): void {
    const { controller, endpoint } = this.#ctx;
    this.#capturingTurn = undefined;
    const silence = endpoint.silenceMs;
    this.#ctx.speech(
      "input.audio.speech_stopped",
      turnId,
      Math.max(0, this.#ctx.inputMs() - silence),
      silence,
    );
    this.#ctx.speechEnded?.(silence);
    controller.endTurn(turnId).catch((err: unknown) => {
      this.#ctx.logger.debug({ err, sessionId: this.#ctx.session.id }, "media leg: turn end lost a race");
    });
  }

  /**
   * Speech over the held answer: kept and recognized. Its end without an interrupting word resumes the
   * answer (late words may still cut it for `resumeAfterMs`), as does `maxHoldMs` of it.
   */
  #heldAudio(pcm: Int16Array, ended: boolean): void {
    const h = this.#held!;
    h.add(pcm);
    const { controller, policy } = this.#ctx;
    if (h.endedAtMs !== undefined) {
      // After the speech: the recognizer hears the silence that lets it conclude, within the grace.
      if (this.#ctx.inputMs() - h.endedAtMs >= policy.bargeIn.resumeAfterMs) {
        this.#held = undefined;
        h.release();
      }
      return;
    }
    if (ended) {
      this.#decide(h);
      return;
    }
    // Still speaking, no interrupting word yet: held on (the recognizer may give words only at a pause), up
    // to maxHoldMs (a noise that goes on).
    if (!h.resumed && this.#ctx.inputMs() - h.onsetMs >= policy.bargeIn.maxHoldMs) {
      h.resumed = true;
      if (canHoldOutput(controller)) controller.resumeOutput(this.#resumeReason(h.text));
    }
  }

  /**
   * The held speech ended (the gate's silence) without an interrupting word: the answer resumes (if the
   * window has not already). A recognizer that reports words only once its own endpointing ends the
   * utterance (the local one) gives them after this, later still on a loaded machine: so the held speech
   * keeps listening for `resumeAfterMs` of line audio, and an interrupting word then still cuts the answer
   * and takes the turn. Only the running text counts, never a final forced out of the recognizer: one
   * made to conclude on a cough or on echo residue guesses words.
   */
  #decide(h: HeldSpeech): void {
    const { controller } = this.#ctx;
    if (!h.resumed && canHoldOutput(controller)) controller.resumeOutput(this.#resumeReason(h.text));
    h.resumed = true;
    h.endedAtMs = this.#ctx.inputMs();
  }

  #resumeReason(text: string): "backchannel" | "no_words" {
    return this.#ctx.policy.judge(text) === "backchannel" ? "backchannel" : "no_words";
  }

  /** The recognizer's running text over the held answer: a word that is not a backchannel takes the turn. */
  #words(h: HeldSpeech, text: string): void {
    if (this.#held !== h) return;
    h.text = text;
    if (this.#ctx.policy.judge(text) === "interrupt") this.#interrupt(h);
  }

  /** Words that are not a backchannel: the caller takes the turn, with all the audio kept since the onset. */
  #interrupt(h: HeldSpeech): void {
    this.#held = undefined;
    const audio = h.release();
    try {
      // Cuts the answer (held, or resumed meanwhile): output.audio.cancelled, turn.cancelled as on any barge-in.
      this.#ctx.bargeIn("local_vad");
      this.#startTurn(h.onsetMs, audio);
    } catch (err) {
      this.#ctx.logger.debug(
        { err, sessionId: this.#ctx.session.id },
        "media leg: confirmed barge-in lost a race",
      );
    }
  }
}
