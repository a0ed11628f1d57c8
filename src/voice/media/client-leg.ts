/**
 * A Talk API session's media leg: what `/talk` sessions (relay, stt-tts,
 * transcription) run through, as phone calls and meeting bots do, so the one
 * barge-in policy, the input processing (noise suppression) and the
 * interruption sequence are the leg's on every surface. Two things stay the
 * client's: its turns (push-to-talk verbs; a realtime provider's own turn
 * detection stays on) and a provider failure (session.error and the close
 * with `error`, as before: nothing is spoken to it). The echo guard of a
 * realtime session's leg takes its reference from what was sent to the client,
 * aligned by the client's playback reports (ClientReference): once the client
 * reports, its microphone hearing its own speaker no longer interrupts the
 * answer (the leg's gate on the cleaned audio decides barge-in, as on a
 * realtime phone call with echo cancellation); a client that reports nothing
 * is heard as before. The gateway still
 * sees a session controller (its verbs and its one audio sink per session);
 * each verb goes to the leg:
 *
 *   client --(talk.session.* verbs, audio bytes)--> ClientLeg --> MediaLeg --> controller --> provider
 *   client <--(talk.audio, the gateway's sink)----- ClientSink <-- MediaLeg <-- controller
 *
 * The gateway's sink (one per session, following the owner) is set after the
 * leg is built, so the leg's sink forwards to whatever the gateway set; the
 * heard position and whether the client still plays come from the client's
 * `playback` reports (gateway/client-playback.ts) through that sink.
 */
import type {
  AudioFormat,
  RealtimeToolDefinition,
  TalkLogger,
  TalkSession,
  TalkTurn,
} from "../../core/index.js";
import type { TerminalReason } from "../../core/index.js";
import type { SessionControllerFactory } from "../pipelines/controller-factory.js";
import type {
  DirectToolCall,
  DirectToolResult,
  TalkAudioSink,
  TalkDirectTools,
  TalkSessionController,
} from "../pipelines/controller-types.js";
import {
  DEFAULT_INPUT_FORMAT,
  DEFAULT_OUTPUT_FORMAT,
  type PipelineOptions,
} from "../pipelines/pipeline-options.js";
import { ClientReference } from "./client-reference.js";
import { MediaLeg } from "./media-leg.js";

/**
 * The local barge-in gate of a client's leg once its echo is cancelled: the telephony VAD's defaults
 * (telephony.vad: -45 dBFS, 120 ms of speech) and a caller turn's usual silence.
 */
const CLIENT_BARGE_IN = Object.freeze({ threshold: -45, minSpeechMs: 120, silenceMs: 500 });
/**
 * The client rates the echo guard runs at: the phone lines' and the talk page's 24 kHz (a realtime
 * provider's own rate; the gate's detector hears a 16 kHz copy of it). A client at another is heard as before.
 */
const GATE_RATES: readonly number[] = [8000, 16_000, 24_000];

export interface ClientLegOptions {
  session: TalkSession;
  createController: SessionControllerFactory;
  /** The client's audio format (PCM16, or u-law a realtime provider carries). Default PCM16 16 kHz. */
  inputFormat?: AudioFormat | undefined;
  /** The assistant audio's format. Default PCM16 24 kHz. */
  outputFormat?: AudioFormat | undefined;
  /** The gateway's overrides of the trusted pipeline options (frame size, model, voice, reply path). */
  options?: PipelineOptions;
  clientTools?: readonly RealtimeToolDefinition[] | undefined;
  logger: TalkLogger;
}

/** Builds a Talk API session's leg and waits until it takes audio; rejects (the session closed) when it cannot. */
export async function startClientLeg(o: ClientLegOptions): Promise<ClientLeg> {
  const format = o.inputFormat ?? DEFAULT_INPUT_FORMAT;
  const { echo } = o.createController;
  // A realtime session's PCM caller audio: the echo guard runs once the client reports its playback.
  const echoGuard =
    o.session.mode === "realtime" &&
    format.encoding === "pcm16" &&
    format.channels === 1 &&
    GATE_RATES.includes(format.sampleRate) &&
    echo.options.enabled &&
    echo.create !== undefined;
  const sink = new ClientSink(echoGuard ? new ClientReference(format) : undefined);
  const leg = new MediaLeg({
    session: o.session,
    createController: o.createController,
    adapter: {
      sink,
      playing: () => sink.playing(),
      // The gateway closes its sessions through close(); nothing else to tell it.
      legClosed: () => {},
    },
    format,
    outputFormat: o.outputFormat ?? DEFAULT_OUTPUT_FORMAT,
    turnTaking: echoGuard ? { kind: "client", localBargeIn: CLIENT_BARGE_IN } : { kind: "client" },
    ...(echoGuard ? { echoReference: "reported" as const } : {}),
    ...(o.options ? { options: o.options } : {}),
    ...(o.clientTools ? { clientTools: o.clientTools } : {}),
    // A Talk API client hears of a failure (session.error, the close) and decides; nothing is spoken to it.
    faults: "pipeline",
    logger: o.logger,
  });
  try {
    await leg.start();
  } catch (err) {
    await leg.close("error");
    throw err;
  }
  return new ClientLeg(leg, sink);
}

/** The gateway's view of a Talk API session's leg: the session controller verbs, each the leg's. */
export class ClientLeg implements TalkSessionController, TalkDirectTools {
  readonly session: TalkSession;
  readonly leg: MediaLeg;
  readonly #sink: ClientSink;

  constructor(leg: MediaLeg, sink: ClientSink) {
    this.leg = leg;
    this.session = leg.session;
    this.#sink = sink;
  }

  appendAudio(data: Uint8Array, base64?: string): void {
    this.leg.appendBytes(data, base64, this.#sink.reference);
  }

  /** The client played `playedMs` of `itemId` (its `playback` report): aligns the echo reference. */
  playbackReported(position: { itemId: string; playedMs: number }): void {
    this.#sink.reported(position);
  }

  appendPcm(pcm: Int16Array): void {
    this.leg.appendBytes(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength));
  }

  startTurn(): TalkTurn {
    return this.leg.startTurn();
  }

  endTurn(turnId: string): Promise<void> {
    return this.leg.endTurn(turnId);
  }

  cancelTurn(turnId: string | undefined, reason: TerminalReason): boolean {
    return this.leg.cancelTurn(turnId, reason);
  }

  cancelOutput(turnId: string | undefined, reason: TerminalReason): boolean {
    return this.leg.cancelOutput(reason, turnId);
  }

  submitToolResult(callId: string, output: string): void {
    this.leg.submitToolResult(callId, output);
  }

  callTool(request: DirectToolCall): Promise<DirectToolResult> {
    return this.leg.callTool(request);
  }

  setAudioSink(sink: TalkAudioSink | undefined): void {
    this.#sink.set(sink);
  }

  async close(reason: TerminalReason): Promise<void> {
    await this.leg.close(reason);
    this.#sink.close();
  }
}

/**
 * The leg's sink: forwards to the sink the gateway sets (its connection's,
 * following the session's owner). Until one is set, audio has nowhere to go
 * and nothing is heard.
 */
class ClientSink implements TalkAudioSink {
  #sink: TalkAudioSink | undefined;
  readonly #reference: ClientReference | undefined;

  constructor(reference: ClientReference | undefined) {
    this.#reference = reference;
  }

  /**
   * What the client played over the next `samples` of its audio, once it reports its playback
   * (undefined before, or without an echo guard).
   */
  readonly reference = (samples: number): Int16Array | undefined =>
    this.#reference?.reporting ? this.#reference.take(samples) : undefined;

  reported(position: { itemId: string; playedMs: number }): void {
    this.#reference?.reported(position);
  }

  set(sink: TalkAudioSink | undefined): void {
    this.#sink = sink;
  }

  close(): void {
    this.#reference?.close();
  }

  write(chunk: Parameters<TalkAudioSink["write"]>[0], meta: { turnId: string; itemId: string }): void {
    if (!this.#sink) return;
    this.#sink.write(chunk, meta);
    this.#reference?.written(chunk, meta.itemId);
  }

  clear(meta: { turnId: string; itemId?: string; reason: TerminalReason }): void {
    this.#sink?.clear(meta);
    this.#reference?.clear();
  }

  drained(itemId: string, signal: AbortSignal): Promise<void> {
    return this.#sink?.drained?.(itemId, signal) ?? Promise.resolve();
  }

  heardMs(itemId: string): number | undefined {
    return this.#sink?.heardMs?.(itemId);
  }

  /** Whether the client still plays audio it was sent (its reports say; false while it reports nothing). */
  playing(): boolean {
    return this.#sink?.playingOut?.() === true;
  }
}
