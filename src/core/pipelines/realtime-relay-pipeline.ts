import { bytesFromPcm16, pcm16FromBytes } from "../../codecs/pcm.js";
import { TalkError, toTalkError } from "../errors.js";
import type { TalkLogger } from "../logger.js";
import type { RealtimeProvider, RealtimeProviderEvent, RealtimeVoiceSession } from "../provider-types.js";
import type { TalkOutput, TalkSession, TalkTurn } from "../session-types.js";
import type { OutputAudioPayload, TerminalReason } from "../talk-events.js";
import type { AudioFormat } from "../talk-types.js";
import { bytesPerSecond, durationMs } from "../talk-types.js";
import type { TalkAudioSink, TalkSessionController, TalkTextInput } from "./controller-types.js";
import { PcmConverter } from "./pcm-converter.js";
import type { PipelineToolDispatcher, ResolvedPipelineOptions } from "./pipeline-options.js";
import { AGENT_CONSULT_TOOL } from "../tools/agent-consult-tool.js";
import { toolOwnershipOf, type ToolOwnership } from "./brain-options.js";
import { ProgressiveSpeech } from "./progressive-speech.js";
import { providerToolsFor } from "./realtime-tool-ownership.js";
import { checkAppend, closeSessionClearingOutput, SinkSlot } from "./pipeline-support.js";

export interface RealtimeRelayPipelineDeps {
  session: TalkSession;
  provider: RealtimeProvider;
  tools: PipelineToolDispatcher | undefined;
  options: ResolvedPipelineOptions;
  logger: TalkLogger;
  inputFormat: AudioFormat;
  outputFormat: AudioFormat;
  sink: TalkAudioSink | undefined;
  /** See SessionControllerDeps.interruptible. */
  interruptible?: ((output: TalkOutput) => boolean) | undefined;
}

interface OutputItem {
  turnId: string;
  converter: PcmConverter | undefined;
  bytes: number;
  /** Bytes delivered but not reported in an output.audio.delta yet (see outputDeltaIntervalMs). */
  unreported: number;
  /** performance.now() of the last output.audio.delta; -Infinity before the first. */
  reportedAt: number;
}

/** Remembered cancelled output items, so their late audio never reaches the sink. */
const CANCELLED_ITEM_MEMORY = 64;

/**
 * realtime over gateway-relay: the Gateway owns one provider session and
 * relays audio both ways, mapping provider events onto the Talk turn model.
 *
 * - speech_started ensures a turn (barge-in: active output is cancelled, the
 *   provider response cancelled, the sink cleared) - real speech only, never
 *   raw audio, is what interrupts;
 * - speech_stopped ends the user turn, the response flows under it;
 * - audio deltas go to the sink in the session's output format, events carry
 *   metadata only;
 * - tool calls go through core's one dispatch path (policy, tool.* events):
 *   a registered tool runs on the server, any other is completed by the
 *   client with submitToolResult.
 */
export class RealtimeRelayPipeline implements TalkSessionController, TalkTextInput {
  readonly session: TalkSession;
  /** Resolves when the provider session is connected; rejects (and closes the session) when it cannot be. */
  readonly ready: Promise<void>;
  readonly #deps: RealtimeRelayPipelineDeps;
  readonly #sink: SinkSlot;
  readonly #providerInput: AudioFormat;
  readonly #providerOutput: AudioFormat;
  /** Undefined when the input passes through as is (same format, e.g. u-law to a provider that takes u-law). */
  readonly #inputConverter: PcmConverter | undefined;
  readonly #items = new Map<string, OutputItem>();
  readonly #cancelledItems = new Set<string>();
  #voice: RealtimeVoiceSession | undefined;
  #held: Uint8Array[] = [];
  #heldBytes = 0;
  #closing: Promise<void> | undefined;
  /** Latched at creation (seed 003): provider_native offers and runs tools, transport_only does neither. */
  readonly toolOwnership: ToolOwnership;
  readonly #progressive: ProgressiveSpeech;

  constructor(deps: RealtimeRelayPipelineDeps) {
    this.session = deps.session;
    this.#deps = deps;
    this.#sink = new SinkSlot(deps.sink, deps.logger, deps.session.id);
    this.toolOwnership = toolOwnershipOf(deps.options.brain.replyPath);
    this.#progressive = new ProgressiveSpeech(() => this.#voice, deps.logger);
    this.#providerInput = providerFormat(deps.inputFormat, deps.provider.capabilities.inputFormats);
    this.#providerOutput = providerFormat(deps.outputFormat, deps.provider.capabilities.outputFormats);
    this.#inputConverter = sameFormat(deps.inputFormat, this.#providerInput)
      ? undefined
      : new PcmConverter(deps.inputFormat, this.#providerInput);
    this.ready = this.#connect();
    // Failures are reported through session.error and close; `ready` is for callers that care.
    this.ready.catch(() => {});
  }

  appendAudio(data: Uint8Array): void {
    if (!checkAppend(this.session, data, this.#deps.inputFormat, this.#deps.options.maxAppendBytes)) return;
    if (!this.#voice) {
      this.#hold(data);
      return;
    }
    this.#forward(data);
  }

  startTurn(): TalkTurn {
    const turn = this.session.startTurn({ reason: "barge_in" });
    this.session.startCapture(turn.id);
    return turn;
  }

  async endTurn(turnId: string): Promise<void> {
    this.session.endTurn(turnId);
    // An explicit end of turn (push-to-talk over the relay) asks the provider to answer now.
    this.#voice?.commitAudio?.();
    this.#voice?.createResponse();
  }

  cancelTurn(turnId: string | undefined, reason: TerminalReason): boolean {
    const output = this.session.activeOutput;
    if (output) this.#reportPending(output.itemId);
    const cancelled = this.session.cancelTurn(turnId, reason);
    if (!cancelled) return false;
    this.#voice?.cancelResponse();
    if (output) this.#dropOutput(output, reason);
    return true;
  }

  cancelOutput(turnId: string | undefined, reason: TerminalReason): boolean {
    const output = this.session.activeOutput;
    if (output && (turnId === undefined || output.turnId === turnId)) this.#reportPending(output.itemId);
    const cancelled = this.session.cancelOutput(turnId, reason);
    if (!cancelled || !output) return cancelled;
    this.#voice?.cancelResponse();
    this.#dropOutput(output, reason);
    return true;
  }

  submitToolResult(callId: string, output: string): void {
    const tools = this.#deps.tools;
    if (!tools)
      throw new TalkError("tool_not_found", `No tool call ${callId} awaits a result in this session.`);
    // The dispatcher settles the call; #toolCall then hands the output to the provider.
    tools.submitToolResult(this.session.id, callId, output);
  }

  setAudioSink(sink: TalkAudioSink | undefined): void {
    this.#sink.set(sink);
  }

  say(text: string): void {
    if (this.session.state !== "active") throw new TalkError("session_closed");
    // The provider speaks in its own voice; the words come from trusted config (a greeting, a farewell).
    this.#requireVoice().createResponse(`Say exactly this, and nothing else: ${JSON.stringify(text)}`);
  }

  sendUserText(text: string, meta: Record<string, string> = {}): void {
    const { session } = this;
    const voice = this.#requireVoice();
    if (!voice.sendText)
      throw new TalkError(
        "capability_unsupported",
        `Provider ${this.#deps.provider.id} takes no text input.`,
      );
    const output = session.activeOutput;
    if (output) this.#bargeIn(output);
    const current = session.activeTurn;
    const own = !current || current.state !== "active";
    const turn = own ? session.startTurn({ reason: "barge_in" }) : current;
    session.emit({
      type: "transcript.done",
      turnId: turn.id,
      final: true,
      payload: { ...meta, role: "user", text },
    });
    if (own) session.endTurn(turn.id);
    voice.sendText(text);
  }

  close(reason: TerminalReason): Promise<void> {
    this.#closing ??= this.#close(reason);
    return this.#closing;
  }

  async #close(reason: TerminalReason): Promise<void> {
    for (const [itemId, item] of this.#items) this.#reportDelta(itemId, item);
    const closed = closeSessionClearingOutput(this.session, this.#sink, reason);
    this.#held = [];
    const voice = this.#voice;
    this.#voice = undefined;
    try {
      await voice?.close();
    } catch (err) {
      this.#deps.logger.warn({ err, sessionId: this.session.id }, "realtime provider session close failed");
    }
    for (const item of this.#items.values()) item.converter?.close();
    this.#items.clear();
    this.#inputConverter?.close();
    await closed;
  }

  async #connect(): Promise<void> {
    const { provider, options, session } = this.#deps;
    if (!provider.connect) {
      throw new TalkError(
        "capability_unsupported",
        `Provider ${provider.id} cannot be driven over a gateway relay.`,
      );
    }
    try {
      const voice = await provider.connect(
        {
          ...(options.realtimeModel !== undefined ? { model: options.realtimeModel } : {}),
          ...(options.realtimeVoice !== undefined ? { voice: options.realtimeVoice } : {}),
          instructions: options.instructions,
          tools: providerToolsFor(this.toolOwnership, this.#deps.tools, provider, this.#deps.logger),
          inputFormat: this.#providerInput,
          outputFormat: this.#providerOutput,
          signal: session.signal,
        },
        (event) => this.#onEvent(event),
      );
      if (session.state !== "active" || this.#closing) {
        await voice.close();
        throw new TalkError("session_closed");
      }
      this.#voice = voice;
      const held = this.#held;
      this.#held = [];
      this.#heldBytes = 0;
      for (const data of held) this.#forward(data);
    } catch (err) {
      const error = toTalkError(err, "provider_unavailable");
      if (session.state === "active" && !this.#closing) {
        session.emit({ type: "session.error", payload: { ...error.toJSON() } });
        void this.close("error");
      }
      throw error;
    }
  }

  #forward(data: Uint8Array): void {
    // Copied: the provider may queue it while the caller reuses its buffer.
    if (!this.#inputConverter) {
      this.#voice?.appendAudio(data.slice());
      return;
    }
    const pcm = this.#inputConverter.convert(pcm16FromBytes(data));
    if (pcm.length > 0) this.#voice?.appendAudio(bytesFromPcm16(pcm).slice());
  }

  #hold(data: Uint8Array): void {
    const limit = (this.#deps.options.heldAudioMs * bytesPerSecond(this.#deps.inputFormat)) / 1000;
    this.#held.push(data.slice());
    this.#heldBytes += data.byteLength;
    while (this.#heldBytes > limit && this.#held.length > 0)
      this.#heldBytes -= this.#held.shift()!.byteLength;
  }

  #onEvent(event: RealtimeProviderEvent): void {
    if (this.session.state !== "active") return;
    try {
      this.#progressive.observe(event);
      this.#handle(event);
    } catch (err) {
      // A mapping failure must not break the provider's event loop.
      this.#deps.logger.warn(
        { err, sessionId: this.session.id, type: event.type },
        "realtime event could not be mapped",
      );
    }
  }

  #handle(event: RealtimeProviderEvent): void {
    const { session } = this;
    switch (event.type) {
      case "ready":
        return;
      case "speech_started": {
        const output = session.activeOutput;
        if (
          output &&
          (!this.#deps.options.interruptOnSpeech || this.#deps.interruptible?.(output) === false)
        ) {
          // Speech over the answer is only noted; the answer keeps playing.
          session.emit({
            type: "input.audio.speech_started",
            turnId: output.turnId,
            ...(event.itemId ? { itemId: event.itemId } : {}),
            payload: speechPayload(event.audioStartMs),
          });
          return;
        }
        if (output) this.#bargeIn(output);
        const turn = session.ensureTurn({ reason: "barge_in" });
        session.startCapture(turn.id);
        session.emit({
          type: "input.audio.speech_started",
          turnId: turn.id,
          ...(event.itemId ? { itemId: event.itemId } : {}),
          payload: speechPayload(event.audioStartMs),
        });
        return;
      }
      case "speech_stopped": {
        const turn = session.activeTurn;
        if (!turn || turn.state !== "active") return;
        session.emit({
          type: "input.audio.speech_stopped",
          turnId: turn.id,
          ...(event.itemId ? { itemId: event.itemId } : {}),
          payload: { ...(event.audioEndMs !== undefined ? { audioEndMs: event.audioEndMs } : {}) },
        });
        // The provider answers after the user stops: end the user turn so its response flows under it.
        session.endTurn(turn.id);
        return;
      }
      case "response_started":
        // A response nobody asked for by speaking (a greeting) still needs a turn to belong to; it takes
        // no user input, so it is ended at once and the next speech starts a turn of its own.
        if (!session.activeTurn) {
          const turn = session.startTurn({ source: "provider" });
          session.endTurn(turn.id);
        }
        return;
      case "audio_delta":
        this.#audioDelta(event);
        return;
      case "audio_done":
        this.#audioDone(event.itemId);
        return;
      case "text_delta": {
        const turn = session.activeTurn;
        if (!turn || this.#cancelledItems.has(event.itemId)) return;
        session.emit({
          type: "output.text.delta",
          turnId: turn.id,
          itemId: event.itemId,
          payload: { text: event.text },
        });
        return;
      }
      case "transcript_delta":
      case "transcript_done": {
        const turn = session.activeTurn;
        if (!turn) return;
        const done = event.type === "transcript_done";
        session.emit({
          type: done ? "transcript.done" : "transcript.delta",
          turnId: turn.id,
          itemId: event.itemId,
          ...(done ? { final: true } : {}),
          payload: { role: event.role, text: event.text },
        });
        return;
      }
      case "tool_call":
        this.#toolCall(event);
        return;
      case "response_done": {
        const output = session.activeOutput;
        if (output) this.#audioDone(output.itemId);
        return;
      }
      case "usage": {
        const { type: _type, ...usage } = event;
        session.emit({ type: "usage.metrics", payload: usage });
        return;
      }
      case "error":
        session.emit({
          type: "session.error",
          payload: {
            code: "provider_error",
            upstreamCode: event.code,
            message: event.message,
            fatal: event.fatal,
          },
        });
        if (event.fatal) void this.close("error");
        return;
      case "closed":
        if (!this.#closing) {
          session.emit({
            type: "session.error",
            payload: {
              code: "provider_unavailable",
              message: `The provider session closed: ${event.reason}`,
            },
          });
          void this.close("error");
        }
        return;
    }
  }

  #audioDelta(event: Extract<RealtimeProviderEvent, { type: "audio_delta" }>): void {
    const { session } = this;
    if (this.#cancelledItems.has(event.itemId)) return; // late audio of an interrupted answer
    const turn = session.activeTurn;
    if (!turn) return;
    let item = this.#items.get(event.itemId);
    if (!item || session.activeOutput?.itemId !== event.itemId) {
      session.beginOutput({ itemId: event.itemId, turnId: turn.id });
      item = { turnId: turn.id, converter: undefined, bytes: 0, unreported: 0, reportedAt: -Infinity };
      this.#items.set(event.itemId, item);
      session.emit({
        type: "output.audio.started",
        turnId: turn.id,
        itemId: event.itemId,
        payload: { format: { ...this.#deps.outputFormat } },
      });
    }
    if (sameFormat(event.format, this.#deps.outputFormat)) {
      // Passthrough (u-law in, u-law out): the provider's bytes go to the sink as they are.
      this.#deliver(event.itemId, item, event.data);
      return;
    }
    if (!item.converter || !sameFormat(item.converter.from, event.format)) {
      item.converter?.close();
      item.converter = new PcmConverter(event.format, this.#deps.outputFormat);
    }
    this.#deliver(event.itemId, item, bytesFromPcm16(item.converter.convert(pcm16FromBytes(event.data))));
  }

  #audioDone(itemId: string): void {
    const item = this.#items.get(itemId);
    if (!item) return;
    this.#items.delete(itemId);
    if (item.converter) {
      this.#deliver(itemId, item, bytesFromPcm16(item.converter.flush()));
      item.converter.close();
    }
    this.#reportDelta(itemId, item);
    const output = this.session.activeOutput;
    const signal = output?.itemId === itemId ? output.signal : this.session.signal;
    const finish = (): void => {
      if (signal.aborted || this.#cancelledItems.has(itemId) || this.session.state !== "active") return;
      const format = this.#deps.outputFormat;
      const payload: OutputAudioPayload = {
        format: { ...format },
        bytes: item.bytes,
        durationMs: durationMs(format, item.bytes),
      };
      this.session.emit({ type: "output.audio.done", turnId: item.turnId, itemId, final: true, payload });
      this.session.endOutput(itemId);
    };
    // Done means heard: the output stays active (interruptible) until a sink that confirms playback has played it.
    if (this.#sink.confirmsPlayback) void this.#sink.drained(itemId, signal).then(finish);
    else finish();
  }

  #deliver(itemId: string, item: OutputItem, data: Uint8Array): void {
    if (data.byteLength === 0 || this.#cancelledItems.has(itemId)) return;
    const format = this.#deps.outputFormat;
    item.bytes += data.byteLength;
    item.unreported += data.byteLength;
    this.#sink.current()?.write({ data, format }, { turnId: item.turnId, itemId });
    const now = performance.now();
    if (now - item.reportedAt >= this.#deps.options.outputDeltaIntervalMs)
      this.#reportDelta(itemId, item, now);
  }

  /** One output.audio.delta for the bytes delivered since the last one (none when nothing is pending). */
  #reportDelta(itemId: string, item: OutputItem, now = performance.now()): void {
    if (item.unreported === 0) return;
    const format = this.#deps.outputFormat;
    const bytes = item.unreported;
    item.unreported = 0;
    item.reportedAt = now;
    const payload: OutputAudioPayload = {
      format: { ...format },
      bytes,
      durationMs: durationMs(format, bytes),
    };
    this.session.emit({ type: "output.audio.delta", turnId: item.turnId, itemId, payload });
  }

  /** Reports what an output item delivered before it is cancelled, while its deltas are still current. */
  #reportPending(itemId: string): void {
    const item = this.#items.get(itemId);
    if (item) this.#reportDelta(itemId, item);
  }

  #bargeIn(output: TalkOutput): void {
    this.#reportPending(output.itemId);
    this.session.cancelOutput(output.turnId, "barge_in");
    this.#voice?.cancelResponse();
    this.#dropOutput(output, "barge_in");
  }

  /** Forgets an output item and clears what the sink still holds of it. */
  #dropOutput(output: TalkOutput, reason: TerminalReason): void {
    this.#cancelledItems.add(output.itemId);
    if (this.#cancelledItems.size > CANCELLED_ITEM_MEMORY) {
      const oldest = this.#cancelledItems.values().next().value;
      if (oldest !== undefined) this.#cancelledItems.delete(oldest);
    }
    this.#items.get(output.itemId)?.converter?.close();
    this.#items.delete(output.itemId);
    // Read before clearing: the heard position is what the provider keeps of the item.
    const heard = this.#sink.heardMs(output.itemId);
    this.#sink.clear({ turnId: output.turnId, itemId: output.itemId, reason });
    if (heard === undefined || !this.#voice) return;
    try {
      this.#voice.truncate(output.itemId, heard);
    } catch (err) {
      this.#deps.logger.warn({ err, sessionId: this.session.id, itemId: output.itemId }, "truncate failed");
    }
  }

  #requireVoice(): RealtimeVoiceSession {
    if (this.session.state !== "active") throw new TalkError("session_closed");
    if (!this.#voice)
      throw new TalkError("invalid_state", "The realtime provider session is not connected yet.");
    return this.#voice;
  }

  #toolCall(event: Extract<RealtimeProviderEvent, { type: "tool_call" }>): void {
    const { session } = this;
    const tools = this.#deps.tools;
    if (this.toolOwnership === "transport_only") {
      // The brain owns planning and tools here; the provider was offered none (seed 003: ignored, not run).
      this.#deps.logger.warn(
        { sessionId: session.id, name: event.name },
        "tool call from a transport-only provider session ignored",
      );
      return;
    }
    if (!tools) {
      // No tools were offered to this session; a call can only be a provider error. Answer it so the provider does not wait.
      this.#deps.logger.warn(
        { name: event.name },
        "realtime provider called a tool in a session without tools",
      );
      this.#voice?.submitToolResult(
        event.callId,
        JSON.stringify({ error: "tool_not_found", message: "No tools are available." }),
      );
      return;
    }
    const turn = session.activeTurn ?? session.ensureTurn({ source: "provider" });
    const request = {
      name: event.name,
      argumentsJson: event.argumentsJson,
      callId: event.callId,
      turnId: turn.id,
      itemId: event.itemId,
      ...(session.provider ? { provider: session.provider } : {}),
    };
    const progress = this.#listenProgress(event, turn.signal);
    tools.handleProviderCall(session, request).then(
      (outcome) => {
        const submit = (): void => {
          if (outcome.ok) this.#voice?.submitToolResult(event.callId, outcome.output);
          else if (outcome.error.code !== "cancelled") {
            // The provider still waits for an output; tell it the tool failed rather than leave it hanging.
            this.#voice?.submitToolResult(
              event.callId,
              JSON.stringify({ error: outcome.error.code, message: outcome.error.message }),
            );
          }
        };
        // Progressive: the output follows the chunks already being spoken, never overlapping them.
        if (progress) progress.settle(submit);
        else submit();
        progress?.close();
      },
      (err: unknown) => {
        progress?.close();
        const error = toTalkError(err);
        this.#deps.logger.warn(
          { name: event.name, code: error.code },
          "realtime tool call rejected before dispatch",
        );
        this.#voice?.submitToolResult(
          event.callId,
          JSON.stringify({ error: error.code, message: error.message }),
        );
      },
    );
  }

  /**
   * agent_consult in a session with agent.realtime.progressive: its chunks are
   * spoken while the consult runs, its output follows them (seed 002).
   * Undefined when that does not apply (other tools, option off, provider
   * without speakText, no progress channel).
   */
  #listenProgress(event: Extract<RealtimeProviderEvent, { type: "tool_call" }>, signal: AbortSignal) {
    const channel = this.#deps.tools?.progress;
    if (!channel || !this.#deps.options.brain.progressive || event.name !== AGENT_CONSULT_TOOL)
      return undefined;
    if (!this.#progressive.supported) {
      this.#deps.logger.warn(
        { sessionId: this.session.id },
        "progressive answers need a provider session with speakText; answering at once",
      );
      return undefined;
    }
    return this.#progressive.listen(channel, this.session.id, event.callId, signal);
  }
}

function speechPayload(audioStartMs: number | undefined): Record<string, unknown> {
  return audioStartMs !== undefined ? { audioStartMs } : {};
}

/**
 * The format the provider session is asked for: the session's own when the
 * provider takes it (or declares nothing), else its first PCM16 format, which
 * the pipeline converts to and from.
 */
function providerFormat(wanted: AudioFormat, accepted: readonly AudioFormat[] | undefined): AudioFormat {
  if (!accepted || accepted.length === 0 || accepted.some((f) => sameFormat(f, wanted))) return wanted;
  return accepted.find((f) => f.encoding === "pcm16") ?? accepted[0]!;
}

function sameFormat(a: AudioFormat, b: AudioFormat): boolean {
  return a.encoding === b.encoding && a.sampleRate === b.sampleRate && a.channels === b.channels;
}
