import { audioFromBytes, expectPcm, TalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import type { TalkSession, TalkTurn } from "../../core/index.js";
import type { TerminalReason, TranscriptPayload } from "../../core/index.js";
import type { AudioFormat } from "../../core/index.js";
import type { TalkAudioSink, TalkSessionController } from "./controller-types.js";
import type { PipelineProviderResolver, ResolvedPipelineOptions } from "./pipeline-options.js";
import { checkAppend, checkAppendPcm, failTurn, isCancellation } from "./pipeline-support.js";
import type { SttCapture } from "./stt-capture.js";
import { startUserTurnCapture } from "./user-turn-capture.js";

export interface TranscriptionPipelineDeps {
  session: TalkSession;
  providers: PipelineProviderResolver;
  options: ResolvedPipelineOptions;
  logger: TalkLogger;
  inputFormat: AudioFormat;
}

/**
 * transcription over gateway-relay (brain none): speech to text, no assistant
 * audio. Captions flow continuously, so appendAudio ensures a turn (there is
 * no assistant output a stray frame could interrupt). endTurn, or the VAD
 * after silenceTimeoutMs, finalizes the turn's transcript; the next frame
 * starts the next turn.
 */
export class TranscriptionPipeline implements TalkSessionController {
  readonly session: TalkSession;
  /** Nothing to connect: ready at once (see SessionController.ready). */
  readonly ready: Promise<void> = Promise.resolve();
  readonly #deps: TranscriptionPipelineDeps;
  #capture: SttCapture | undefined;
  #closing: Promise<void> | undefined;
  /** Set while a turn's final is computed: a new turn now would supersede (cancel) it. */
  #finalizing: Promise<void> | undefined;
  /** The last turn the silence timer ended: a client's endTurn for it is acknowledged, not refused. */
  #silenceEnded: string | undefined;
  /** Audio that arrived while finalizing, replayed into the next turn. */
  #held: Int16Array[] = [];
  #heldBytes = 0;

  constructor(deps: TranscriptionPipelineDeps) {
    this.session = deps.session;
    this.#deps = deps;
  }

  get inputFormat(): AudioFormat {
    return this.#deps.inputFormat;
  }

  appendAudio(data: Uint8Array): void {
    if (!checkAppend(this.session, data, this.#deps.inputFormat, this.#deps.options.maxAppendBytes)) return;
    // Recognized as samples: an encoded input format is refused, never read as PCM.
    this.#capturePcm(
      expectPcm(audioFromBytes(data, this.#deps.inputFormat), "A transcription session's input").samples,
    );
  }

  appendPcm(pcm: Int16Array): void {
    if (!checkAppendPcm(this.session, pcm, this.#deps.inputFormat, this.#deps.options.maxAppendBytes)) return;
    this.#capturePcm(pcm);
  }

  #capturePcm(data: Int16Array): void {
    if (this.#finalizing) {
      this.#hold(data);
      return;
    }
    const turn = this.session.activeTurn;
    const capture =
      turn?.state === "active" && this.#capture?.turnId === turn.id
        ? this.#capture
        : this.#begin(this.session.ensureTurn());
    capture.write(data);
  }

  startTurn(): TalkTurn {
    const turn = this.session.startTurn();
    this.#begin(turn);
    return turn;
  }

  async endTurn(turnId: string): Promise<void> {
    // The client's end of an utterance the silence timer already ended: the caption is (being) finalized.
    if (turnId === this.#silenceEnded) {
      await this.#finalizing;
      return;
    }
    const turn = this.session.activeTurn;
    this.session.endTurn(turnId);
    const capture = this.#capture;
    this.#capture = undefined;
    if (!turn || !capture || capture.turnId !== turnId) return;
    // Resolves with the final transcript: for captions the final is the whole point of endTurn.
    const finalizing = this.#finalize(turn, capture);
    this.#finalizing = finalizing;
    try {
      await finalizing;
    } finally {
      if (this.#finalizing === finalizing) this.#finalizing = undefined;
      this.#replayHeld();
    }
  }

  async #finalize(turn: TalkTurn, capture: SttCapture): Promise<void> {
    try {
      const { text } = await capture.finish();
      const payload: TranscriptPayload = { role: "user", text: text.trim() };
      this.session.emit({ type: "transcript.done", turnId: turn.id, final: true, payload });
    } catch (err) {
      if (isCancellation(err, turn.signal)) return;
      failTurn(this.session, this.#deps.logger, turn.id, err);
    }
  }

  #hold(data: Int16Array): void {
    const f = this.#deps.inputFormat;
    const limit = (this.#deps.options.heldAudioMs * f.sampleRate * f.channels * 2) / 1000;
    this.#held.push(data.slice());
    this.#heldBytes += data.byteLength;
    // Bounded: the oldest audio goes first if the recognizer is slow to finalize.
    while (this.#heldBytes > limit && this.#held.length > 0)
      this.#heldBytes -= this.#held.shift()!.byteLength;
  }

  #replayHeld(): void {
    const held = this.#held;
    this.#held = [];
    this.#heldBytes = 0;
    if (this.session.state !== "active") return;
    try {
      for (const data of held) this.#capturePcm(data);
    } catch (err) {
      this.#deps.logger.warn(
        { err, sessionId: this.session.id },
        "audio held during finalization was dropped",
      );
    }
  }

  cancelTurn(turnId: string | undefined, reason: TerminalReason): boolean {
    const cancelled = this.session.cancelTurn(turnId, reason);
    if (cancelled && this.#capture && this.#capture.turnId !== this.session.activeTurn?.id) {
      this.#capture.close();
      this.#capture = undefined;
    }
    return cancelled;
  }

  cancelOutput(_turnId: string | undefined, _reason: TerminalReason): boolean {
    return false; // transcription never produces assistant output
  }

  submitToolResult(callId: string, _output: string): void {
    throw new TalkError("tool_not_found", `No pending tool call ${callId} in this session.`);
  }

  setAudioSink(_sink: TalkAudioSink | undefined): void {
    // No assistant audio in transcription mode.
  }

  close(reason: TerminalReason): Promise<void> {
    this.#closing ??= (async () => {
      const closed = this.session.close(reason);
      this.#capture?.close();
      this.#capture = undefined;
      await closed;
    })();
    return this.#closing;
  }

  #begin(turn: TalkTurn): SttCapture {
    const stt = this.#deps.providers.stt(this.session);
    if (!stt) throw new TalkError("provider_not_found", "No stt provider is configured for this session.");
    this.#capture?.close();
    const capture = startUserTurnCapture(this.#deps, stt, turn, (turnId) => {
      const ended = this.endTurn(turnId);
      this.#silenceEnded = turnId;
      return ended;
    });
    this.#capture = capture;
    return capture;
  }
}
