import { createVad, type Vad } from "../../codecs/index.js";
import { isTalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { SttProvider } from "../../core/index.js";
import type { TalkSession, TalkTurn } from "../../core/index.js";
import { PCM16_16K, type AudioFormat } from "../../core/index.js";
import { failTurn } from "./pipeline-support.js";
import { PcmConverter } from "./pcm-converter.js";
import type { SttCapture } from "./stt-capture.js";
import { startUserTurnCapture } from "./user-turn-capture.js";

/** Audio kept from before the VAD noticed speech, so the first syllable reaches the recognizer, ms. */
const PRE_ROLL_MS = 300;

/** End of speech when the session sets no talk.input.silenceTimeoutMs, ms. */
export const DEFAULT_LOCAL_END_OF_SPEECH_MS = 800;

/** What the local listener needs from its pipeline: narrow, no back-reference to it. */
export interface LocalSpeechTurnsContext {
  session: TalkSession;
  stt: SttProvider;
  /** PCM16 format of the samples passed to write(). */
  inputFormat: AudioFormat;
  language: string | undefined;
  /** Non-speech after speech that ends a turn the VAD started, ms (a multiple of 10). */
  endOfSpeechMs: number;
  /** talk.input.appendedEventIntervalMs: input.audio.appended coalescing, ms of audio. */
  inputAppendedIntervalMs: number;
  logger: TalkLogger;
  /**
   * The VAD heard speech start: the pipeline stops what plays (barge-in) and
   * returns the turn to capture into, or undefined to let the answer play on
   * (the speech is then only noted).
   */
  speechStarted(): TalkTurn | undefined;
  /** A turn's final transcript (already emitted as transcript.done), non-empty. */
  heard(turn: TalkTurn, text: string): void;
}

/**
 * The caller's ears when ASR is outboard (reply paths bridge and brain): the
 * caller's audio goes to the session's STT provider instead of the realtime
 * provider. A VAD (the codecs one, on 16 kHz audio) starts a turn when speech
 * begins, keeping a short pre-roll; the capture's own VAD ends it after
 * `endOfSpeechMs` of silence (or the client ends it: push-to-talk); the final
 * transcript is emitted as `transcript.done` and handed to `heard`.
 */
export class LocalSpeechTurns {
  readonly #ctx: LocalSpeechTurnsContext;
  readonly #vadInput: PcmConverter;
  readonly #vad: Vad;
  #vadRest: Int16Array = new Int16Array(0);
  #preRoll: Int16Array[] = [];
  #preRollSamples = 0;
  #capture: SttCapture | undefined;
  /** The turn of #capture. */
  #turn: TalkTurn | undefined;
  /** The capture's turn is the client's (startTurn): only its endTurn ends it. */
  #explicit = false;
  #closed = false;

  constructor(ctx: LocalSpeechTurnsContext) {
    this.#ctx = ctx;
    this.#vadInput = new PcmConverter(ctx.inputFormat, PCM16_16K);
    this.#vad = createVad({ sampleRate: 16_000, hangoverMs: ctx.endOfSpeechMs });
  }

  /** Input samples in the session's input format. */
  write(pcm: Int16Array): void {
    if (this.#closed) return;
    // A capture whose turn was cancelled or superseded (cancelTurn, typed text) listens no more.
    if (this.#turn?.signal.aborted) this.drop();
    const capture = this.#capture;
    if (capture) capture.write(pcm);
    else this.#keep(pcm);
    // The VAD hears everything, so its noise floor and state follow the line between turns too.
    if (this.#detectStart(this.#vadInput.convert(pcm)) && !this.#capture) this.#startFromSpeech();
  }

  /** Push-to-talk: captures into `turn` until end(turn.id). */
  begin(turn: TalkTurn): void {
    this.#open(turn, true);
  }

  /** Ends `turnId`'s capture: the turn ends, its transcript is finalized and handed on. */
  async end(turnId: string): Promise<void> {
    const { session } = this.#ctx;
    const capture = this.#capture;
    const turn = session.activeTurn;
    if (turn?.id === turnId && turn.state === "active") session.endTurn(turnId);
    if (!capture || capture.turnId !== turnId || !turn || turn.id !== turnId) return;
    this.#capture = undefined;
    this.#turn = undefined;
    this.#explicit = false;
    let text: string;
    try {
      text = (await capture.finish()).text.trim();
    } catch (err) {
      if (turn.signal.aborted || (isTalkError(err) && err.code === "cancelled")) return;
      failTurn(session, this.#ctx.logger, turnId, err);
      return;
    }
    if (turn.signal.aborted || session.state !== "active") return;
    session.emit({ type: "transcript.done", turnId, final: true, payload: { role: "user", text } });
    if (text !== "") this.#ctx.heard(turn, text);
  }

  /** Text from the user (typed, keypad digits) in `turn`: answered as the words of speech are. */
  answer(turn: TalkTurn, text: string): void {
    this.#ctx.heard(turn, text);
  }

  /** Drops the capture in progress (its turn was cancelled or superseded). */
  drop(): void {
    this.#capture?.close();
    this.#capture = undefined;
    this.#turn = undefined;
    this.#explicit = false;
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.drop();
    this.#vad.close();
    this.#vadInput.close();
    this.#preRoll = [];
  }

  #startFromSpeech(): void {
    const turn = this.#ctx.speechStarted();
    if (!turn) return;
    this.#open(turn, false);
    const preRoll = this.#preRoll;
    this.#preRoll = [];
    this.#preRollSamples = 0;
    for (const pcm of preRoll) this.#capture?.write(pcm);
  }

  #open(turn: TalkTurn, explicit: boolean): void {
    const ctx = this.#ctx;
    this.#capture?.close();
    this.#explicit = explicit;
    this.#turn = turn;
    this.#capture = startUserTurnCapture(
      {
        session: ctx.session,
        inputFormat: ctx.inputFormat,
        options: {
          language: ctx.language,
          silenceTimeoutMs: ctx.endOfSpeechMs,
          inputAppendedIntervalMs: ctx.inputAppendedIntervalMs,
        },
        logger: ctx.logger,
      },
      ctx.stt,
      turn,
      // The capture's VAD heard the end of speech: it ends a turn the VAD started, not the client's.
      (turnId) => (this.#explicit ? Promise.resolve() : this.#speechStopped(turnId)),
    );
  }

  #speechStopped(turnId: string): Promise<void> {
    this.#ctx.session.emit({ type: "input.audio.speech_stopped", turnId, payload: {} });
    return this.end(turnId);
  }

  /** Keeps the last PRE_ROLL_MS of input while nobody speaks. */
  #keep(pcm: Int16Array): void {
    const f = this.#ctx.inputFormat;
    const limit = (f.sampleRate * f.channels * PRE_ROLL_MS) / 1000;
    this.#preRoll.push(pcm.slice());
    this.#preRollSamples += pcm.length;
    while (this.#preRoll.length > 1 && this.#preRollSamples - this.#preRoll[0]!.length >= limit)
      this.#preRollSamples -= this.#preRoll.shift()!.length;
  }

  /** Feeds the VAD whole 10 ms frames; true when speech started in them. */
  #detectStart(pcm: Int16Array): boolean {
    let samples = pcm;
    if (this.#vadRest.length > 0) {
      samples = new Int16Array(this.#vadRest.length + pcm.length);
      samples.set(this.#vadRest);
      samples.set(pcm, this.#vadRest.length);
    }
    const frame = 160;
    const whole = samples.length - (samples.length % frame);
    this.#vadRest = samples.slice(whole);
    let started = false;
    for (let i = 0; i < whole; i += frame)
      if (this.#vad.process(samples.subarray(i, i + frame)) === "speech-start") started = true;
    return started;
  }
}
