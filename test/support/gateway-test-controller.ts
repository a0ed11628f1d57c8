import { TalkError, isTalkError } from "../../src/core/errors.js";
import type { TalkAudioSink, TalkSessionController } from "../../src/core/pipelines/controller-types.js";
import type { AgentProvider, TtsProvider } from "../../src/core/provider-types.js";
import type { TalkSession, TalkTurn } from "../../src/core/session-types.js";
import type { TerminalReason } from "../../src/core/talk-events.js";

/**
 * A minimal, test-only session controller (used until pipelines' real
 * createSessionController is wired here): input audio is counted, not
 * transcribed; endTurn consults the agent and speaks the answer through the
 * TTS provider into the audio sink, all as work registered under the turn,
 * so cancellation reaches the providers' AbortSignals.
 */
export class TestSessionController implements TalkSessionController {
  readonly session: TalkSession;
  readonly #agent: AgentProvider;
  readonly #tts: TtsProvider;
  #sink: TalkAudioSink | undefined;
  #bytes = 0;

  constructor(session: TalkSession, providers: { agent: AgentProvider; tts: TtsProvider }) {
    this.session = session;
    this.#agent = providers.agent;
    this.#tts = providers.tts;
  }

  appendAudio(data: Uint8Array): void {
    if (this.session.state !== "active") throw new TalkError("session_closed");
    if (data.byteLength % 2 !== 0) throw new TalkError("invalid_audio", "PCM16 frames have an even byte length.");
    this.#bytes += data.byteLength;
    this.session.emit({ type: "input.audio.appended", payload: { bytes: data.byteLength } });
  }

  startTurn(): TalkTurn {
    const turn = this.session.startTurn({ source: "gateway" });
    this.session.startCapture(turn.id);
    this.#bytes = 0;
    return turn;
  }

  async endTurn(turnId: string): Promise<void> {
    this.session.endTurn(turnId);
    if (this.session.mode === "stt-tts") void this.#answer(turnId, `I heard ${this.#bytes} bytes`);
  }

  cancelTurn(turnId: string | undefined, reason: TerminalReason): boolean {
    const cancelled = this.session.cancelTurn(turnId, reason);
    if (cancelled) this.#sink?.clear({ turnId: turnId ?? "", reason });
    return cancelled;
  }

  cancelOutput(turnId: string | undefined, reason: TerminalReason): boolean {
    return this.session.cancelOutput(turnId, reason);
  }

  submitToolResult(callId: string): void {
    throw new TalkError("tool_not_found", `No pending tool call ${callId}.`);
  }

  setAudioSink(sink: TalkAudioSink | undefined): void {
    this.#sink = sink;
  }

  close(reason: TerminalReason): Promise<void> {
    return this.session.close(reason);
  }

  async #answer(turnId: string, heard: string): Promise<void> {
    const s = this.session;
    try {
      s.emit({ type: "transcript.done", turnId, final: true, payload: { role: "user", text: heard } });
      const text = await s.runWork(
        "agent-consult",
        async (signal) => {
          let out = "";
          const messages = [{ role: "user" as const, content: heard }];
          for await (const d of this.#agent.consult({ sessionId: s.id, turnId, messages, signal })) {
            if (d.type === "text") out += d.text;
          }
          return out;
        },
        { turnId },
      );
      s.emit({ type: "output.text.done", turnId, payload: { text } });
      const output = s.beginOutput({ turnId });
      const itemId = output.itemId;
      s.emit({ type: "output.audio.started", turnId, itemId, payload: {} });
      await s.runWork(
        "tts",
        async (signal) => {
          for await (const chunk of this.#tts.synthesize({ text, signal })) {
            signal.throwIfAborted();
            this.#sink?.write(chunk, { turnId, itemId });
            s.emit({ type: "output.audio.delta", turnId, itemId, payload: { bytes: chunk.data.byteLength } });
          }
        },
        { turnId, scope: "output" },
      );
      s.emit({ type: "output.audio.done", turnId, itemId, payload: {} });
      s.endOutput(itemId);
    } catch (err) {
      if (isTalkError(err) && (err.code === "cancelled" || err.code === "session_closed")) return;
      if ((err as Error)?.name === "AbortError") return;
      s.emit({ type: "session.error", payload: { message: (err as Error).message } });
    }
  }
}
