import { randomUUID } from "node:crypto";
import { TalkError } from "../errors.js";
import type { TalkLogger } from "../logger.js";
import type { AgentMessage, AgentProvider, SttProvider, TtsProvider } from "../provider-types.js";
import type { TalkSession, TalkTurn } from "../session-types.js";
import type { TerminalReason, TranscriptPayload } from "../talk-events.js";
import type { AudioFormat } from "../talk-types.js";
import type { TalkAudioSink, TalkSessionController } from "./controller-types.js";
import type { PipelineProviderResolver, ResolvedPipelineOptions } from "./pipeline-options.js";
import { checkAppend, failTurn, isCancellation, SinkSlot } from "./pipeline-support.js";
import { PartialTracker, SttCapture } from "./stt-capture.js";
import { speak } from "./tts-output.js";

export interface SttTtsPipelineDeps {
  session: TalkSession;
  providers: PipelineProviderResolver;
  options: ResolvedPipelineOptions;
  logger: TalkLogger;
  inputFormat: AudioFormat;
  outputFormat: AudioFormat;
  sink: TalkAudioSink | undefined;
}

/**
 * stt-tts over managed-room: explicit turn verbs drive a walkie-talkie loop.
 *
 *   startTurn  -> capture + STT stream (work "stt")
 *   appendAudio-> converted to the STT format and streamed
 *   endTurn    -> STT final -> transcript.done (user) -> agent consult
 *                 (work "agent-consult", output scope) -> output.text.* ->
 *                 TTS (work "tts", output scope) -> output.audio.* + sink
 *
 * Audio with no active (still capturing) turn is rejected with no_active_turn
 * rather than starting one: a turn here is an explicit press, and starting
 * one from raw audio would let silence or echo supersede (cancel) the
 * assistant's answer, which seed 001 forbids. Speech-gated turn starts belong
 * to adapters (VAD) or the realtime pipeline (provider speech_started).
 */
export class SttTtsPipeline implements TalkSessionController {
  readonly session: TalkSession;
  /** Nothing to connect: ready at once (see SessionController.ready). */
  readonly ready: Promise<void> = Promise.resolve();
  readonly #deps: SttTtsPipelineDeps;
  readonly #sink: SinkSlot;
  readonly #history: AgentMessage[] = [];
  #capture: SttCapture | undefined;
  #closing: Promise<void> | undefined;

  constructor(deps: SttTtsPipelineDeps) {
    this.session = deps.session;
    this.#deps = deps;
    this.#sink = new SinkSlot(deps.sink, deps.logger, deps.session.id);
  }

  appendAudio(data: Uint8Array): void {
    if (!checkAppend(this.session, data, this.#deps.inputFormat, this.#deps.options.maxAppendBytes)) return;
    const turn = this.session.activeTurn;
    const capture = this.#capture;
    if (!turn || turn.state !== "active" || !capture || capture.turnId !== turn.id) {
      throw new TalkError("no_active_turn", "Start a turn (talk.session.startTurn) before sending audio.");
    }
    capture.write(data);
  }

  startTurn(): TalkTurn {
    const stt = this.#require("stt", this.#deps.providers.stt(this.session));
    const previousOutput = this.session.activeOutput;
    // Pressing to talk while the assistant answers supersedes (cancels) that answer.
    const turn = this.session.startTurn({ reason: "superseded" });
    if (previousOutput?.signal.aborted) {
      this.#sink.clear({ turnId: previousOutput.turnId, itemId: previousOutput.itemId, reason: "superseded" });
    }
    this.#capture?.close();
    this.session.startCapture(turn.id);
    const partials = new PartialTracker();
    this.#capture = new SttCapture(
      {
        session: this.session,
        stt,
        inputFormat: this.#deps.inputFormat,
        language: this.#deps.options.language,
        silenceTimeoutMs: this.#deps.options.silenceTimeoutMs,
        logger: this.#deps.logger,
        onPartial: (turnId, text) => {
          const delta = partials.next(text);
          if (!delta) return;
          const payload: TranscriptPayload & { replace?: boolean } = { role: "user", text: delta.text, ...(delta.replace ? { replace: true } : {}) };
          this.session.emit({ type: "transcript.delta", turnId, payload });
        },
        onEndOfSpeech: (turnId) => {
          if (this.session.activeTurn?.id === turnId && this.session.activeTurn.state === "active") {
            this.endTurn(turnId).catch((err: unknown) => this.#deps.logger.debug({ err, turnId }, "automatic endTurn lost a race"));
          }
        },
        onError: (turnId, err) => failTurn(this.session, this.#deps.logger, turnId, err),
      },
      turn,
    );
    return turn;
  }

  async endTurn(turnId: string): Promise<void> {
    const turn = this.session.activeTurn;
    // session.endTurn rejects a stale turnId before touching any state.
    this.session.endTurn(turnId);
    const capture = this.#capture;
    this.#capture = undefined;
    if (!turn || !capture || capture.turnId !== turnId) return;
    const bytes = capture.inputBytes;
    this.session.emit({
      type: "input.audio.committed",
      turnId,
      payload: { bytes, durationMs: (bytes * 1000) / (2 * this.#deps.inputFormat.channels * this.#deps.inputFormat.sampleRate) },
    });
    // The RPC acknowledges the end of the user turn; the answer streams as events.
    void this.#answer(turn, capture);
  }

  cancelTurn(turnId: string | undefined, reason: TerminalReason): boolean {
    const output = this.session.activeOutput;
    const cancelled = this.session.cancelTurn(turnId, reason);
    if (!cancelled) return false;
    if (this.#capture && this.#capture.turnId !== this.session.activeTurn?.id) {
      this.#capture.close();
      this.#capture = undefined;
    }
    if (output?.signal.aborted) this.#sink.clear({ turnId: output.turnId, itemId: output.itemId, reason });
    return true;
  }

  cancelOutput(turnId: string | undefined, reason: TerminalReason): boolean {
    const output = this.session.activeOutput;
    const cancelled = this.session.cancelOutput(turnId, reason);
    if (cancelled && output) this.#sink.clear({ turnId: output.turnId, itemId: output.itemId, reason });
    return cancelled;
  }

  submitToolResult(callId: string, _output: string): void {
    // Agent-consult answers here never surface provider tool calls to the client.
    throw new TalkError("tool_not_found", `No pending tool call ${callId} in this session.`);
  }

  setAudioSink(sink: TalkAudioSink | undefined): void {
    this.#sink.set(sink);
  }

  close(reason: TerminalReason): Promise<void> {
    this.#closing ??= this.#close(reason);
    return this.#closing;
  }

  async #close(reason: TerminalReason): Promise<void> {
    const output = this.session.activeOutput;
    const closed = this.session.close(reason);
    // session.close aborts every signal synchronously; the sink can be cleared now.
    if (output) this.#sink.clear({ turnId: output.turnId, itemId: output.itemId, reason });
    this.#capture?.close();
    this.#capture = undefined;
    await closed;
  }

  async #answer(turn: TalkTurn, capture: SttCapture): Promise<void> {
    const { session } = this;
    const turnId = turn.id;
    try {
      const { text: heard } = await capture.finish();
      const text = heard.trim();
      const transcript: TranscriptPayload = { role: "user", text };
      session.emit({ type: "transcript.done", turnId, final: true, payload: transcript });
      // Nothing heard, nothing to answer: the turn simply ends.
      if (!text) return;
      const agent = this.#require("agent", this.#deps.providers.agent(session));
      const tts = this.#require("tts", this.#deps.providers.tts(session));
      const messages = this.#messagesFor(text);
      this.#remember({ role: "user", content: text });

      const itemId = randomUUID();
      // Output begins with the answer's text, so cancelOutput also stops an answer still being thought of.
      session.beginOutput({ turnId, itemId });
      const answer = await this.#consult(agent, turnId, itemId, messages);
      session.emit({ type: "output.text.done", turnId, itemId, final: true, payload: { text: answer } });
      this.#remember({ role: "assistant", content: answer });
      if (answer.trim()) await this.#speak(tts, turnId, itemId, answer);
      session.endOutput(itemId);
    } catch (err) {
      if (isCancellation(err, turn.signal)) return;
      failTurn(session, this.#deps.logger, turnId, err);
    }
  }

  #consult(agent: AgentProvider, turnId: string, itemId: string, messages: AgentMessage[]): Promise<string> {
    return this.session.runWork(
      "agent-consult",
      async (signal) => {
        let answer = "";
        for await (const delta of agent.consult({ sessionId: this.session.id, turnId, messages, signal })) {
          if (signal.aborted) break;
          if (delta.type === "done") break;
          if (!delta.text) continue;
          answer += delta.text;
          this.session.emit({ type: "output.text.delta", turnId, itemId, payload: { text: delta.text } });
        }
        return answer;
      },
      { turnId, scope: "output" },
    );
  }

  #speak(tts: TtsProvider, turnId: string, itemId: string, text: string): Promise<void> {
    const o = this.#deps.options;
    return speak(
      { session: this.session, tts, outputFormat: this.#deps.outputFormat, voice: o.voice, speed: o.speed, sink: this.#sink.current },
      turnId,
      itemId,
      text,
    );
  }

  /** Persona from trusted config, then recent transcript, then what was just heard. Never request parameters. */
  #messagesFor(heard: string): AgentMessage[] {
    const o = this.#deps.options;
    const recent = o.historyEntries === 0 ? [] : this.#history.slice(-o.historyEntries);
    return [{ role: "system", content: o.persona }, ...recent, { role: "user", content: heard }];
  }

  #remember(message: AgentMessage): void {
    this.#history.push(message);
    // Bounded: only the tail is ever sent.
    const keep = Math.max(this.#deps.options.historyEntries, 1);
    if (this.#history.length > keep * 2) this.#history.splice(0, this.#history.length - keep);
  }

  #require<T>(kind: string, provider: T | undefined): T {
    if (!provider) throw new TalkError("provider_not_found", `No ${kind} provider is configured for this session.`);
    return provider;
  }
}
