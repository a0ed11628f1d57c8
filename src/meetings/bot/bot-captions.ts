import type { WebSocket } from "ws";
import { MediaLeg } from "../../voice/index.js";
import type { TalkLogger, TerminalReason } from "../../core/index.js";
import type { SessionControllerFactory } from "../../voice/index.js";
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
import { matchAddress } from "../agent/wake-phrase.js";
import type { ChatMessage } from "../platforms/platform-driver.js";

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
  /** The bot's camera shows a card: each line's text goes to the page for it. */
  cardCaptions?: boolean;
  /** The meeting's chat, when the platform has one: where answers and summaries are posted. */
  chat?: { post(text: string): void; options: ChatOptions } | undefined;
}

/** What the bot does with the meeting's chat (config `meetings.chat`). */
export interface ChatOptions {
  /** Answers to chat questions are also spoken (agent mode). */
  speakAnswers: boolean;
  /** Answers to spoken questions are also posted in the chat, as heard. */
  postSpokenAnswers: boolean;
}

/** Lines kept for a summary on request (the newest; older ones are in the transcript file). */
const SUMMARY_LINES = 200;
/** A chat message asking for the running summary, after the assistant's name. */
const SUMMARY_REQUEST = /^(summary|summarize|summarise|recap)\b/;

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
  /** The newest lines (captions, answers, chat) for a summary on request. */
  readonly #recent: TranscriptLine[] = [];
  #chatSeq = 0;

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
      metadata: {
        surface: "meeting",
        botId: ctx.botId,
        botName: ctx.botName,
        platform: ctx.platform,
        mode: ctx.mode,
      },
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
      detector: this.#ctx.createController.input.vad,
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
      botName: ctx.botName,
      platform: ctx.platform,
      runtime: ctx.runtime,
      createController: ctx.createController,
      onClosed: (reason) => ctx.onSessionClosed("assistant", reason),
      triggers: agent.triggers,
      send: (data) => this.#capture.send(data),
      onSpoken: (answer, fromChat) => this.#onSpoken(answer, fromChat),
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

  /** Who the page marks as speaking now (the driver's activeSpeakers), for attribution. */
  noteActiveSpeakers(names: readonly string[]): void {
    this.#attribution.noteActiveSpeakers(names);
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
    const utterance = this.#turnUtterances.get(event.turnId);
    if (utterance?.endedAt !== undefined) this.#captionLatency(event.turnId, utterance.endedAt);
    this.#appendLine({
      at: event.timestamp,
      ...(utterance
        ? {
            start: new Date(utterance.startedAt).toISOString(),
            end: new Date(utterance.endedAt ?? Date.parse(event.timestamp)).toISOString(),
          }
        : {}),
      speaker: payload.speaker ?? "unknown",
      ...(payload.trackId ? { trackId: payload.trackId } : {}),
      ...(payload.rtpSource !== undefined ? { rtpSource: payload.rtpSource } : {}),
      turnId: event.turnId,
      text: payload.text,
    });
  }

  /**
   * The latency captions have (a transcription bot answers no turn): the
   * utterance's end, as the segmenter decided it, to its caption. Emitted
   * after the caption, so every subscriber sees the events in seq order.
   */
  #captionLatency(turnId: string, endedAt: number): void {
    const ms = Math.max(0, Date.now() - endedAt);
    const session = this.session;
    queueMicrotask(() => {
      if (session.state !== "active") return;
      session.emit({
        type: "latency.metrics",
        turnId,
        source: "meeting",
        payload: { name: "utterance_end_to_caption", ms },
      });
    });
  }

  /**
   * One new message of the meeting's chat: a transcript line; when addressed
   * to the assistant (its name or a wake trigger first), a question for it
   * (agent mode) or, "summary", the running summary posted in the chat.
   */
  onChatMessage(message: ChatMessage): void {
    const text = message.text.trim();
    if (text === "") return;
    this.#appendLine({
      at: isoOr(message.at),
      speaker: message.from,
      turnId: `chat-${++this.#chatSeq}`,
      text,
      role: "chat",
    });
    const chat = this.#ctx.chat;
    if (message.self || !chat) return;
    const names = [this.#ctx.botName, ...(this.#ctx.assistant?.triggers() ?? [])];
    const address = matchAddress(text, names);
    if (!address || address.rest === "") return;
    if (SUMMARY_REQUEST.test(address.rest)) {
      this.#postSummary(message.from);
      return;
    }
    this.#assistant?.askFromChat(address.rest, {
      speaker: message.from,
      speak: chat.options.speakAnswers,
      onAnswer: (answer) => chat.post(answer),
    });
  }

  /**
   * The running summary: in agent mode the agent writes it from the newest
   * lines (kept out of the meeting's audio); otherwise a digest of who said
   * how much and each speaker's latest line.
   */
  #postSummary(asker: string): void {
    const chat = this.#ctx.chat!;
    // The request itself (the newest line) is not material.
    const lines = this.#recent.slice(0, -1);
    if (lines.length === 0) {
      chat.post("Summary so far: nothing has been said yet.");
      return;
    }
    if (this.#assistant) {
      const material = lines.map((l) => `${l.speaker}${l.role === "chat" ? " (chat)" : ""}: ${l.text}`);
      this.#assistant.askFromChat(
        `Summarize this meeting so far in a few sentences, naming who said what.\n${material.join("\n")}`,
        { speaker: asker, speak: false, onAnswer: (answer) => chat.post(`Summary so far: ${answer}`) },
      );
      return;
    }
    chat.post(digest(lines));
  }

  /** An answer the assistant spoke, as the meeting heard it: a line with the bot as speaker. */
  #onSpoken(answer: SpokenAnswer, fromChat = false): void {
    if (answer.text === "") return;
    // A chat question's answer was posted in full already; a spoken one is posted as heard.
    if (!fromChat && this.#ctx.chat?.options.postSpokenAnswers) this.#ctx.chat.post(answer.text);
    this.#appendLine({
      at: new Date(answer.startedAt).toISOString(),
      // Reported when it ended (heard to the end, or cut).
      start: new Date(answer.startedAt).toISOString(),
      end: new Date(Math.max(answer.startedAt, Date.now())).toISOString(),
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
    this.#recent.push(line);
    if (this.#ctx.cardCaptions)
      this.#capture.send(JSON.stringify({ type: "card", caption: `${line.speaker}: ${line.text}` }));
    if (this.#recent.length > SUMMARY_LINES) this.#recent.shift();
    this.#ctx.onLine(line);
  }
}

/** A time as ISO-8601 when it parses, else now (a platform that shows "10:04 AM"). */
function isoOr(at: string): string {
  const t = Date.parse(at);
  return Number.isFinite(t) ? new Date(t).toISOString() : new Date().toISOString();
}

/** The summary without an agent: who spoke how much, and each speaker's latest words. */
export function digest(lines: readonly TranscriptLine[]): string {
  const bySpeaker = new Map<string, { count: number; last: string }>();
  for (const line of lines) {
    const entry = bySpeaker.get(line.speaker) ?? { count: 0, last: "" };
    entry.count++;
    entry.last = line.text;
    bySpeaker.set(line.speaker, entry);
  }
  const parts = [...bySpeaker].map(
    ([speaker, { count, last }]) =>
      `${speaker} (${count} line${count === 1 ? "" : "s"}), latest: "${last.length > 160 ? `${last.slice(0, 157)}...` : last}"`,
  );
  return `Summary so far: ${parts.join("; ")}.`;
}
