import type { TalkLogger } from "../../core/index.js";
import { MediaLeg } from "../../voice/index.js";
import type { SessionControllerFactory } from "../../voice/index.js";
import type { TalkRuntime, TalkSession } from "../../core/index.js";
import type { TalkEvent, TerminalReason } from "../../core/index.js";
import { PCM16_24K } from "../../core/index.js";
import type { Utterance } from "../bot/utterance-segmenter.js";
import { PageAudioSink } from "./page-audio-sink.js";
import { SpokenAnswerTracker, type SpokenAnswer } from "./spoken-answer.js";
import { matchWakePhrase } from "./wake-phrase.js";

interface ChatRequest {
  speaker: string;
  speak: boolean;
  onAnswer(text: string): void;
  answered?: boolean;
}

/** Agent-mode tunables (config `meetings.*`). */
export interface MeetingAssistantOptions {
  /** After a wake phrase alone, the same speaker's next caption within this time is the question, ms. */
  wakeWindowMs: number;
  /** Speech over the assistant must last this long to interrupt it; shorter sounds are dropped as echo, ms. */
  bargeInMs: number;
  /** After the assistant stops, speech is still gated this long (room echo tail), ms. */
  echoTailMs: number;
}

/** What the assistant is given: narrow, no back-reference to the bot. */
export interface MeetingAssistantDeps {
  botId: string;
  /** The bot's display name (the console lists the bot by it). */
  botName?: string;
  platform: string;
  runtime: TalkRuntime;
  /** The process's controller factory (persona, brain, providers bound once). */
  createController: SessionControllerFactory;
  /** The current wake triggers (voicewake.get), read on every caption. */
  triggers(): readonly string[];
  /** Sends a frame down the bot page's capture socket (assistant audio, clear). */
  send(data: Uint8Array | string): void;
  /**
   * Each answer once it ended, as the meeting heard it (cut short on barge-in):
   * the bot's transcript line. `fromChat`: the question came from the chat
   * (its answer was already posted there). Answers kept out of the meeting's
   * audio (chat-only) are never reported: nobody heard them.
   */
  onSpoken?(answer: SpokenAnswer, fromChat: boolean): void;
  /** The assistant's session closed from outside (the runtime, the cluster): the bot leaves. */
  onClosed?(reason: TerminalReason): void;
  options: MeetingAssistantOptions;
  logger: TalkLogger;
}

/**
 * The answering half of a bot in agent mode. Captions come from the bot's
 * transcription session; when one holds a wake phrase, the words after it
 * (or the same speaker's next caption) go to a core `stt-tts` session as
 * user text (`sendUserText`): the brain's path as is (agent answer stream,
 * directive parser, smart chunker, ordered TTS queue, progress cue,
 * timeout apology), on a core media leg whose audio goes to a `PageAudioSink`
 * that plays it as the bot's microphone. Participant speech while the meeting
 * hears the assistant is the echo gate's to judge: shorter than `bargeInMs`
 * it is dropped (never captioned), longer it is real speech, and the leg's
 * one barge-in policy interrupts the output (`barge_in`, one terminal event);
 * it is captioned as usual. Each answer, as heard (the
 * part before a cut, marked interrupted), goes to `onSpoken` for the
 * meeting's transcript.
 */
export class MeetingAssistant {
  readonly session: TalkSession;
  /** Resolves once the leg takes questions (the stt-tts controller is ready at once). */
  readonly ready: Promise<void>;
  readonly #deps: MeetingAssistantDeps;
  readonly #leg: MediaLeg;
  readonly #sink: PageAudioSink;
  #armed: { speaker: string; until: number } | undefined;
  /** Questions from the chat, by request id until their turn is known, then by turn id. */
  readonly #chatRequests = new Map<string, ChatRequest>();
  readonly #chatTurns = new Map<string, ChatRequest>();
  #chatSeq = 0;
  #closing: Promise<void> | undefined;
  /** Questions asked and barge-ins, for status and logs. */
  questions = 0;
  bargeIns = 0;
  echoDropped = 0;

  constructor(deps: MeetingAssistantDeps) {
    this.#deps = deps;
    const sink = new PageAudioSink(deps.send);
    this.#sink = sink;
    this.session = deps.runtime.createSession({
      mode: "stt-tts",
      transport: "managed-room",
      brain: "agent-consult",
      owner: "gateway",
      metadata: {
        surface: "meeting",
        botId: deps.botId,
        ...(deps.botName !== undefined ? { botName: deps.botName } : {}),
        platform: deps.platform,
        role: "assistant",
      },
      source: "meeting",
    });
    this.#leg = new MediaLeg({
      session: this.session,
      createController: deps.createController,
      adapter: {
        sink,
        playing: () => sink.audible(),
        legClosed: (reason) => {
          if (!this.#closing) deps.onClosed?.(reason);
        },
      },
      // Questions arrive as text; the assistant's speech plays at the TTS's own rate.
      format: PCM16_24K,
      turnTaking: { kind: "adapter" },
      logger: deps.logger,
    });
    this.ready = this.#leg.start();
    this.ready.catch((err: unknown) =>
      deps.logger.warn({ err, botId: deps.botId }, "meeting: the assistant's session did not start"),
    );
    this.session.subscribe((event) => this.#followChat(event));
    const onSpoken = deps.onSpoken;
    if (onSpoken) {
      const spoken = new SpokenAnswerTracker({
        playhead: () => sink.audibleUntil,
        onSpoken: (answer) => {
          const chat = this.#chatTurns.get(answer.turnId);
          if (chat && !chat.speak) return;
          try {
            onSpoken(answer, chat !== undefined);
          } catch (err) {
            deps.logger.warn({ err, botId: deps.botId }, "meeting: spoken answer not recorded");
          }
        },
      });
      this.session.subscribe((event) => spoken.observe(event));
    }
  }

  /** Whether the meeting hears the assistant now. */
  get speaking(): boolean {
    return this.#sink.audible();
  }

  /** A participant's final caption: a wake phrase arms or asks; an armed speaker's next caption asks. */
  onCaption(speaker: string, text: string): void {
    if (this.#closing || text.trim() === "") return;
    const now = Date.now();
    const wake = matchWakePhrase(text, this.#deps.triggers());
    if (wake) {
      if (wake.rest !== "") this.#ask(speaker, wake.rest);
      else this.#armed = { speaker, until: now + this.#deps.options.wakeWindowMs };
      return;
    }
    const armed = this.#armed;
    if (armed && armed.speaker === speaker && now <= armed.until) {
      this.#armed = undefined;
      this.#ask(speaker, text.trim());
    }
  }

  /** The echo gate (CaptureReceiver.admit): see the class comment. */
  admit(utterance: Utterance): boolean | Promise<boolean> {
    const { bargeInMs, echoTailMs } = this.#deps.options;
    if (this.#closing || !this.#sink.audible(echoTailMs)) return true;
    return utterance.whenLonger(bargeInMs).then((long) => {
      if (!long) {
        this.echoDropped++;
        return false;
      }
      // Real speech, not echo: the leg's barge-in policy decides (what plays is interrupted).
      if (this.#sink.audible() && this.#leg.bargeIn("local_vad")) {
        this.bargeIns++;
        this.#deps.logger.info({ botId: this.#deps.botId, trackId: utterance.trackId }, "meeting: barge-in");
      }
      return true;
    });
  }

  #ask(speaker: string, question: string): void {
    this.questions++;
    this.#deps.logger.info({ botId: this.#deps.botId, speaker }, "meeting: question for the assistant");
    try {
      this.#leg.sendUserText(question, { speaker });
    } catch (err) {
      this.#deps.logger.warn(
        { err, botId: this.#deps.botId },
        "meeting: the assistant could not take the question",
      );
    }
  }

  /**
   * A question typed in the meeting's chat: asked like a spoken one (same
   * session, same brain path, it supersedes an answer in progress); the
   * answer's full text goes to `onAnswer` (the bot posts it in the chat).
   * With `speak` false its audio is kept out of the meeting.
   */
  askFromChat(
    question: string,
    request: { speaker: string; speak: boolean; onAnswer(text: string): void },
  ): void {
    if (this.#closing || question.trim() === "") return;
    const id = `chat-${++this.#chatSeq}`;
    this.#chatRequests.set(id, { ...request });
    if (this.#chatRequests.size > 50) this.#chatRequests.delete(this.#chatRequests.keys().next().value!);
    this.#armed = undefined;
    this.questions++;
    this.#deps.logger.info(
      { botId: this.#deps.botId, speaker: request.speaker },
      "meeting: chat question for the assistant",
    );
    try {
      this.#leg.sendUserText(question.trim(), { speaker: request.speaker, input: "chat", chatRequest: id });
    } catch (err) {
      this.#chatRequests.delete(id);
      this.#deps.logger.warn(
        { err, botId: this.#deps.botId },
        "meeting: the assistant could not take the chat question",
      );
    }
  }

  /** Maps a chat question to its turn (its transcript.done), mutes it if asked, hands over its answer text. */
  #followChat(event: TalkEvent): void {
    if (event.turnId === undefined) return;
    if (event.type === "transcript.done") {
      const id = (event.payload as { chatRequest?: unknown }).chatRequest;
      const request = typeof id === "string" ? this.#chatRequests.get(id) : undefined;
      if (!request) return;
      this.#chatRequests.delete(id as string);
      this.#chatTurns.set(event.turnId, request);
      if (this.#chatTurns.size > 50) this.#chatTurns.delete(this.#chatTurns.keys().next().value!);
      if (!request.speak) this.#sink.mute(event.turnId);
    } else if (event.type === "output.text.done") {
      const request = this.#chatTurns.get(event.turnId);
      const text = (event.payload as { text?: unknown }).text;
      if (!request || request.answered || typeof text !== "string" || text.trim() === "") return;
      request.answered = true;
      try {
        request.onAnswer(text.trim());
      } catch (err) {
        this.#deps.logger.warn({ err, botId: this.#deps.botId }, "meeting: chat answer not posted");
      }
    }
  }

  /** Stops any answer and closes the session. Idempotent. */
  close(reason: TerminalReason): Promise<void> {
    this.#closing ??= (async () => {
      this.#sink.close();
      await this.#leg.close(reason);
    })();
    return this.#closing;
  }
}
