import type { WebSocket } from "ws";
import { isTalkError } from "../../core/index.js";
import type { TalkLogger } from "../../core/index.js";
import { decodeCaptureFrame, parseSourcesMessage, type CaptureControlMessage } from "./capture-framing.js";
import type { TrackSourceReport } from "./speaker-attribution.js";
import { SpeakerFloor, type CaptionInput } from "./speaker-floor.js";
import { TrackDecoder } from "./track-decoder.js";
import { UtteranceSegmenter, type Utterance } from "./utterance-segmenter.js";
import type { SpeechDetectorFactory } from "../../voice/index.js";

export interface CaptureReceiverContext {
  /** The bot's transcription leg: one turn per utterance, as the speaker floor decides. */
  input: CaptionInput;
  maxAppendBytes: number;
  utteranceSilenceMs: number;
  maxUtteranceMs: number;
  logger: TalkLogger;
  /** A participant started speaking: a new utterance (silence timer, speaker attribution). */
  onSpeech(utterance: Utterance): void;
  /** A caption turn now carries this utterance. */
  onTurn(turnId: string, utterance: Utterance): void;
  /** A new remote track was announced by the page. */
  onTrack(trackId: string): void;
  /** A remote track ended. */
  onTrackEnded?(trackId: string): void;
  /** The page's periodic report of the RTP sources active on its tracks (speaker attribution). */
  onSources?(reports: TrackSourceReport[]): void;
  /**
   * Decides whether an utterance reaches the floor (captions): true at once,
   * or later (a promise), or never (false: dropped, never transcribed). The
   * agent mode's echo gate and barge-in. Default: every utterance passes.
   */
  admit?(utterance: Utterance): boolean | Promise<boolean>;
  /** The segmenters' detector (talk.input.vad). Default: the codecs' gated WebRTC VAD. */
  detector?: SpeechDetectorFactory | undefined;
}

interface TrackState {
  decoder: TrackDecoder;
  segmenter: UtteranceSegmenter;
}

/**
 * The server end of a bot page's capture socket: per remote track a decoder
 * (Opus or PCM16 to 16 kHz) and an utterance segmenter, all feeding one
 * speaker floor in front of the bot's transcription session. The page may
 * reconnect (a reload): the newest socket wins, tracks survive by id.
 */
export class CaptureReceiver {
  readonly #ctx: CaptureReceiverContext;
  readonly #tracks = new Map<string, TrackState>();
  readonly #floor: SpeakerFloor;
  #socket: WebSocket | undefined;
  #everConnected = false;
  #lostAt: number | undefined;
  #badFrames = 0;
  #closed = false;
  webCodecs: boolean | undefined;

  constructor(ctx: CaptureReceiverContext) {
    this.#ctx = ctx;
    this.#floor = new SpeakerFloor({
      input: ctx.input,
      maxAppendBytes: ctx.maxAppendBytes,
      maxQueuedMs: 30_000,
      onTurn: ctx.onTurn,
      logger: ctx.logger,
    });
  }

  /** Whether the page's socket is open now. */
  get connected(): boolean {
    return this.#socket !== undefined;
  }

  get everConnected(): boolean {
    return this.#everConnected;
  }

  /** When the last socket closed while no other was open (undefined while connected or never connected). */
  get lostAt(): number | undefined {
    return this.#lostAt;
  }

  get trackIds(): string[] {
    return [...this.#tracks.keys()];
  }

  attach(socket: WebSocket): void {
    if (this.#closed) {
      socket.close(1001, "bot finished");
      return;
    }
    this.#socket?.close(4000, "replaced by a newer capture socket");
    this.#socket = socket;
    this.#everConnected = true;
    this.#lostAt = undefined;
    socket.on("message", (data: Buffer, isBinary: boolean) => {
      if (isBinary) this.#media(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      else this.#control(data.toString("utf8"));
    });
    socket.on("close", () => {
      if (this.#socket !== socket) return;
      this.#socket = undefined;
      this.#lostAt = Date.now();
    });
  }

  /** Sends a frame to the page (assistant audio, control). Dropped when no socket is open. */
  send(data: Uint8Array | string): void {
    this.#socket?.send(data);
  }

  #control(text: string): void {
    let message: CaptureControlMessage;
    try {
      message = JSON.parse(text) as CaptureControlMessage;
    } catch {
      return;
    }
    if (typeof message !== "object" || message === null) return;
    if (message.type === "hello") {
      this.webCodecs = message.webCodecs;
      this.#ctx.logger.debug({ webCodecs: message.webCodecs }, "meeting capture connected");
    } else if (message.type === "track" && typeof message.trackId === "string") {
      this.#track(message.trackId);
    } else if (message.type === "sources") {
      let reports: TrackSourceReport[];
      try {
        reports = parseSourcesMessage(message);
      } catch (err) {
        if (++this.#badFrames <= 5)
          this.#ctx.logger.warn({ err: (err as Error).message }, "meeting capture sources dropped");
        return;
      }
      this.#ctx.onSources?.(reports);
    } else if (message.type === "capture-notice") {
      this.#ctx.logger.info(
        { trackId: message.trackId, message: message.message },
        "meeting capture: the page chose its tracks",
      );
    } else if (message.type === "capture-error") {
      this.#ctx.logger.warn(
        { trackId: message.trackId, message: message.message },
        "meeting capture error in the page",
      );
    }
  }

  #track(trackId: string): TrackState {
    let state = this.#tracks.get(trackId);
    if (state) return state;
    state = {
      decoder: new TrackDecoder(trackId),
      segmenter: new UtteranceSegmenter({
        trackId,
        silenceMs: this.#ctx.utteranceSilenceMs,
        maxUtteranceMs: this.#ctx.maxUtteranceMs,
        preRollMs: 300,
        detector: this.#ctx.detector,
        onUtterance: (utterance: Utterance) => {
          this.#ctx.onSpeech(utterance);
          const admitted = this.#ctx.admit?.(utterance) ?? true;
          if (admitted === true) this.#floor.offer(utterance);
          else if (admitted !== false) {
            void admitted.then(
              (ok) => {
                if (ok) this.#floor.offer(utterance);
              },
              (err: unknown) => this.#ctx.logger.warn({ err, trackId }, "meeting: utterance gate failed"),
            );
          }
        },
      }),
    };
    this.#tracks.set(trackId, state);
    this.#ctx.onTrack(trackId);
    return state;
  }

  #media(data: Uint8Array): void {
    if (this.#closed) return;
    try {
      const frame = decodeCaptureFrame(data);
      const track = this.#track(frame.trackId);
      if (frame.kind === "ended") {
        track.segmenter.close();
        track.decoder.close();
        this.#tracks.delete(frame.trackId);
        this.#ctx.onTrackEnded?.(frame.trackId);
        return;
      }
      track.segmenter.write(track.decoder.decode(frame));
    } catch (err) {
      // A bad frame is dropped; only the first few are logged so a broken page cannot flood the log.
      if (++this.#badFrames <= 5)
        this.#ctx.logger.warn({ err: isTalkError(err) ? err.message : err }, "meeting capture frame dropped");
    }
  }

  /** Ends every open utterance and resolves once their captions are final. */
  flush(): Promise<void> {
    for (const track of this.#tracks.values()) track.segmenter.close();
    return this.#floor.whenIdle();
  }

  /** Idempotent. Closes the socket and frees decoders. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#floor.close();
    for (const track of this.#tracks.values()) {
      track.segmenter.close();
      track.decoder.close();
    }
    this.#tracks.clear();
    this.#socket?.close(1000, "bot finished");
    this.#socket = undefined;
  }
}
