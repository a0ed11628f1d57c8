import type { WebSocket } from "ws";
import { MediaLeg } from "../../core/index.js";
import type { TalkLogger, TerminalReason } from "../../core/index.js";
import type { SessionControllerFactory } from "../../core/index.js";
import type { TalkRuntime, TalkSession } from "../../core/index.js";
import type { TalkEvent } from "../../core/index.js";
import type { BotMode } from "../bot-status.js";
import type { ResolvedMeetingsOptions } from "../meetings-options.js";
import { CaptureReceiver } from "./capture-receiver.js";
import { CAPTURE_FORMAT } from "./speaker-floor.js";
import { SpeakerAttribution } from "./speaker-attribution.js";
import { speakerTaggedSession } from "./speaker-tagged-session.js";
import type { Utterance } from "./utterance-segmenter.js";
import { TranscriptLog, type TranscriptLine } from "./transcript-log.js";
import { MeetingAssistant, type MeetingAssistantOptions } from "../agent/meeting-assistant.js";
import type { SpokenAnswer } from "../agent/spoken-answer.js";

/** Which of the bot's sessions closed. */
export type CaptionSessionKind = "transcription" | "assistant";

/** What the captions are given: narrow, no back-reference to the bot. */
export interface BotCaptionsContext {
  botId: string;
  /** The bot's display name: the speaker of the assistant's spoken answers. */
  botName: string;
  platform: string;
  mode: BotMode;
  runtime: TalkRuntime;
  createController: SessionControllerFactory;
  options: Pick<ResolvedMeetingsOptions, "utteranceSilenceMs" | "maxUtteranceMs">;
  transcriptPath: string;
  logger: TalkLogger;
  /** Wake triggers and the answering session's options: when set, a MeetingAssistant answers in the meeting. */
  assistant?: { options: MeetingAssistantOptions; triggers(): readonly string[] } | undefined;
  /** One of the sessions was closed from outside (the runtime, the cluster). */
  onSessionClosed(which: CaptionSessionKind, reason: string): void;
  /** Someone spoke (the bot's silence timer). */
  onSpeech(): void;
  /** A finalized transcript line, after it was written to the transcript file. */
  onLine(line: TranscriptLine): void;
}

/**
 * A bot's captions: the transcription session on a media leg, the page's
 * capture socket feeding it, speaker attribution of each caption turn, the
 * optional assistant, and the durable transcript. Built when the bot opens its
 * session; `stop()` then `close()` when the bot finishes.
 */
export class BotCaptions {
  /** The transcription session (the bot's status events go out on it too). */
  readonly session: TalkSession;
  readonly #ctx: BotCaptionsContext;
  /** The transcription leg: captions in, nothing out; its close (from anywhere) ends the bot. */
  readonly #leg: MediaLeg;
  readonly #capture: CaptureReceiver;
  readonly #assistant: MeetingAssistant | undefined;
  readonly #transcript: TranscriptLog;
  readonly #attribution: SpeakerAttribution;
  /** Caption turn -> the utterance it carries (bounded: the oldest are forgotten). */
  readonly #turnUtterances = new Map<string, Utterance>();

  constructor(ctx: BotCaptionsContext) {
    this.#ctx = ctx;
    const { runtime, createController, options, logger } = ctx;
    // Source reports cover the longest utterance plus its wait for the speaker floor (30 s of queued audio).
    const attribution = new SpeakerAttribution({ historyMs: options.maxUtteranceMs + 40_000 });
    this.#attribution = attribution;
    const session = runtime.createSession({
      mode: "transcription",
      transport: "gateway-relay",
      brain: "none",
      owner: "gateway",
      metadata: { surface: "meeting", botId: ctx.botId, platform: ctx.platform, mode: ctx.mode },
      source: "meeting",
    });
    this.session = session;
    this.#transcript = new TranscriptLog(ctx.transcriptPath, logger);
    session.subscribe((event) => this.#onSessionEvent(event));
    const tagged = speakerTaggedSession(session, (turnId) => {
      const utterance = this.#turnUtterances.get(turnId);
      return utterance === undefined
        ? undefined
        : { trackId: utterance.trackId, ...attribution.speakerOf(utterance) };
    });
    // The floor decides turns (one utterance of one participant each), so the pipeline's own VAD stays off.
    this.#leg = new MediaLeg({
      session: tagged,
      createController,
      tools: false,
      adapter: { legClosed: (reason) => ctx.onSessionClosed("transcription", reason) },
      format: CAPTURE_FORMAT,
      turnTaking: { kind: "adapter" },
      logger,
    });
    this.#capture = this.#captureReceiver();
    this.#assistant = ctx.assistant && this.#meetingAssistant(ctx.assistant);
  }

  #captureReceiver(): CaptureReceiver {
    const { options, logger, botId } = this.#ctx;
    const attribution = this.#attribution;
    return new CaptureReceiver({
      input: this.#leg,
      maxAppendBytes: 65_536,
      utteranceSilenceMs: options.utteranceSilenceMs,
      maxUtteranceMs: options.maxUtteranceMs,
      logger,
      onSpeech: (utterance) => {
        this.#ctx.onSpeech();
        attribution.follow(utterance);
      },
      onTurn: (turnId, utterance) => {
        this.#turnUtterances.set(turnId, utterance);
        if (this.#turnUtterances.size > 1000)
          this.#turnUtterances.delete(this.#turnUtterances.keys().next().value!);
      },
      onTrack: (trackId) => logger.debug({ botId, trackId }, "meeting: remote audio track"),
      onTrackEnded: (trackId) => attribution.dropTrack(trackId),
      onSources: (reports) => {
        for (const report of reports) attribution.note(report);
      },
      admit: (utterance) => this.#assistant?.admit(utterance) ?? true,
    });
  }

  #meetingAssistant(agent: NonNullable<BotCaptionsContext["assistant"]>): MeetingAssistant {
    const ctx = this.#ctx;
    return new MeetingAssistant({
      botId: ctx.botId,
      platform: ctx.platform,
      runtime: ctx.runtime,
      createController: ctx.createController,
      onClosed: (reason) => ctx.onSessionClosed("assistant", reason),
      triggers: agent.triggers,
      send: (data) => this.#capture.send(data),
      onSpoken: (answer) => this.#onSpoken(answer),
      options: agent.options,
      logger: ctx.logger,
    });
  }

  /** The answering session's id, in agent mode. */
  get assistantSessionId(): string | undefined {
    return this.#assistant?.session.id;
  }

  /** Starts the transcription leg, then waits for the assistant to be ready. */
  async start(): Promise<void> {
    await this.#leg.start();
    await this.#assistant?.ready;
  }

  /** Hands the page's capture socket (token already checked) to the receiver. */
  attach(socket: WebSocket): void {
    this.#capture.attach(socket);
  }

  /** Whether the page ever opened its capture socket. */
  get everConnected(): boolean {
    return this.#capture.everConnected;
  }

  /** When the capture socket closed, while it stays closed. */
  get lostAt(): number | undefined {
    return this.#capture.lostAt;
  }

  /** The platform's names for speakers and audio sources, as last observed on the page. */
  setNames(speakers: Readonly<Record<string, string>>, sources?: Readonly<Record<string, string>>): void {
    this.#attribution.setNames(speakers, sources);
  }

  /** Finalizes the captions of speech already captured. */
  flush(): Promise<void> {
    return this.#capture.flush();
  }

  /** Stops taking audio: closes the assistant, then the capture socket. The session stays open. */
  async stop(reason: TerminalReason): Promise<void> {
    await this.#assistant?.close(reason);
    this.#capture.close();
  }

  /** Closes the transcription leg (and its session), then the transcript file. */
  async close(reason: TerminalReason): Promise<void> {
    await this.#leg.close(reason);
    this.#transcript.close();
  }

  #onSessionEvent(event: TalkEvent): void {
    if (event.type !== "transcript.done" || event.turnId === undefined) return;
    const { payload } = event;
    if (!payload.text) return;
    this.#assistant?.onCaption(payload.speaker ?? "unknown", payload.text);
    this.#appendLine({
      at: event.timestamp,
      speaker: payload.speaker ?? "unknown",
      ...(payload.trackId ? { trackId: payload.trackId } : {}),
      ...(payload.rtpSource !== undefined ? { rtpSource: payload.rtpSource } : {}),
      turnId: event.turnId,
      text: payload.text,
    });
  }

  /** An answer the assistant spoke, as the meeting heard it: a line with the bot as speaker. */
  #onSpoken(answer: SpokenAnswer): void {
    if (answer.text === "") return;
    this.#appendLine({
      at: new Date(answer.startedAt).toISOString(),
      speaker: this.#ctx.botName,
      turnId: answer.turnId,
      text: answer.text,
      role: "assistant",
      ...(answer.interrupted ? { interrupted: true as const } : {}),
    });
  }

  /** Writes a final line to the durable transcript, then tells the bot. */
  #appendLine(line: TranscriptLine): void {
    this.#transcript.append(line);
    this.#ctx.onLine(line);
  }
}
