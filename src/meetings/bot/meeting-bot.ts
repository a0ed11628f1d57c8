import { randomBytes, timingSafeEqual } from "node:crypto";
import type { WebSocket } from "ws";
import type { TalkLogger } from "../../core/index.js";
import type { SessionControllerFactory } from "../../voice/index.js";
import type { TalkRuntime } from "../../core/index.js";
import { isTerminal, type BotMode, type BotStatus, type EndedCode, type FatalCode } from "../bot-status.js";
import type { ResolvedMeetingsOptions } from "../meetings-options.js";
import type { DriverPage, MeetingObservation, PlatformDriver } from "../platforms/platform-driver.js";
import type { BrowserLauncher, LaunchedBrowser } from "./browser-launcher.js";
import { BotCaptions, type CaptionSessionKind } from "./bot-captions.js";
import { BotStatusRecord } from "./bot-status-record.js";
import { captureScript } from "./capture-script.js";
import type { TranscriptLine } from "./transcript-log.js";
import type { WebhookNotifier } from "./webhook-notifier.js";
import type { MeetingAssistantOptions } from "../agent/meeting-assistant.js";
import { interruptibleSleep } from "../../core/index.js";
import { BotEnd, ended, fatal, withTimeout, type Outcome } from "./bot-outcome.js";
import { driverPage, openMeetingPage } from "./bot-page.js";
import { BotChat } from "./bot-chat.js";
import { startCameraPage, type CameraPage } from "./camera-page.js";
import { ScreenMachine, type ScreenStep } from "./screen-machine.js";
import { UNKNOWN_SCREEN, type JoinContext } from "../platforms/platform-driver.js";
import { DESCRIBE_SCREEN_SCRIPT, type ScreenDescription } from "../platforms/screen-text.js";
import type { ScreenVisit } from "../bot-status.js";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** How often the platform's device toggles are checked in the call, ms. */
const DEVICE_CHECK_MS = 2000;

/** A screen the bot passed, as the probe and tests see it: with what the page showed and its picture. */
export interface ScreenSeen extends ScreenVisit {
  seen?: ScreenDescription;
  png?: Uint8Array;
}

export interface BotRequest {
  meetingUrl: string;
  botName: string;
  mode: BotMode;
  /** When to join (ISO-8601); default now. */
  joinAt?: string;
  /**
   * The bot's camera: "off" (default), "card" (a card the page draws) or
   * "url" (`cameraUrl`, a page from an allowed origin), docs/meetings.md "Bot camera".
   */
  camera?: "off" | "card" | "url";
  /** camera "url": the page shown (checked by the manager against meetings.camera.urlOrigins). */
  cameraUrl?: string;
}

/** What a bot is given: narrow, no back-reference to its manager. */
export interface MeetingBotDeps {
  id: string;
  request: BotRequest;
  driver: PlatformDriver;
  launcher: BrowserLauncher;
  runtime: TalkRuntime;
  /** The process's controller factory (providers and trusted pipeline options bound once). */
  createController: SessionControllerFactory;
  options: ResolvedMeetingsOptions;
  /** ws:// URL of this bot's capture socket (the page connects to it). */
  captureUrl(token: string): string;
  transcriptPath: string;
  /** Where this bot's unknown screens are saved (`<dataDir>/meetings/<botId>.screens/`). */
  recordDir: string;
  notifier: WebhookNotifier | undefined;
  logger: TalkLogger;
  /** Extra Chromium flags (tests). */
  browserArgs?: readonly string[];
  /** Agent mode: wake triggers and the answering session's options. Required for mode "agent". */
  assistant?: { options: MeetingAssistantOptions; triggers(): readonly string[] };
}

/**
 * One bot in one meeting: launch, join through the platform driver, capture,
 * captions, timers, leave. `run()` drives the whole life and always ends in
 * `ended` or `fatal`; the browser always dies with it.
 */
export class MeetingBot {
  readonly id: string;
  readonly #deps: MeetingBotDeps;
  readonly #captureToken = randomBytes(24).toString("base64url");
  readonly #leave = new AbortController();
  readonly #status: BotStatusRecord;
  /** The transcription session, the capture socket, the assistant and the transcript (from #openSession on). */
  #captions: BotCaptions | undefined;
  #browser: LaunchedBrowser | undefined;
  #running: Promise<BotStatus> | undefined;
  #lastSpeechAt = 0;
  #aloneSince: number | undefined;
  /** Others in the call as the platform last counted them (MeetingObservation.participantCount). */
  #othersCounted: number | undefined;
  #lineListeners = new Set<(line: TranscriptLine) => void>();
  #screenListeners = new Set<(screen: ScreenSeen) => void>();
  /** Lines finalized so far (the next line's index in the transcript). */
  #lineCount = 0;
  /** The meeting's chat, when the platform has one and `meetings.chat.enabled`. */
  #chat: BotChat | undefined;
  /** camera "url": the second page whose frames are the camera. */
  #camera: CameraPage | undefined;

  constructor(deps: MeetingBotDeps) {
    this.id = deps.id;
    this.#deps = deps;
    this.#status = new BotStatusRecord({
      id: deps.id,
      meetingUrl: deps.request.meetingUrl,
      platform: deps.driver.platform,
      botName: deps.request.botName,
      mode: deps.request.mode,
      joinAt: deps.request.joinAt,
      logger: deps.logger,
      notifier: deps.notifier,
      session: () => this.#captions?.session,
    });
  }

  get status(): BotStatus {
    return this.#status.snapshot();
  }

  /** Called on every state change (the manager, tests). A throwing listener is ignored. */
  onChange(listener: (status: BotStatus) => void): () => void {
    return this.#status.onChange(listener);
  }

  /** Called with every finalized transcript line (the cluster's job log). A throwing listener is ignored. */
  onLine(listener: (line: TranscriptLine) => void): () => void {
    this.#lineListeners.add(listener);
    return () => this.#lineListeners.delete(listener);
  }

  /**
   * Called with every screen the bot passes (the probe), with what the page
   * showed and a screenshot. A throwing listener is ignored.
   */
  onScreen(listener: (screen: ScreenSeen) => void): () => void {
    this.#screenListeners.add(listener);
    return () => this.#screenListeners.delete(listener);
  }

  /** Leave now (DELETE). Idempotent; a bot that has not joined yet ends without launching. */
  requestLeave(reason: EndedCode = "requested"): void {
    this.#leave.abort(ended(reason));
  }

  /** Accepts the page's capture socket when the token matches. */
  attachCapture(socket: WebSocket, token: string): boolean {
    const a = Buffer.from(token);
    const b = Buffer.from(this.#captureToken);
    if (a.length !== b.length || !timingSafeEqual(a, b) || !this.#captions) return false;
    this.#captions.attach(socket);
    return true;
  }

  /** Whether run() was called (a queued bot waits for its job). */
  get started(): boolean {
    return this.#running !== undefined;
  }

  /** Ends a bot that never ran (its job could not be queued). */
  fail(subCode: FatalCode, message: string): void {
    this.#running ??= this.#finish({ state: "fatal", subCode, message }).then(() => this.status);
  }

  /** Runs the bot to its end. Returns the same promise on every call. */
  run(): Promise<BotStatus> {
    this.#running ??= this.#run();
    return this.#running;
  }

  async #run(): Promise<BotStatus> {
    let outcome: Outcome;
    try {
      await this.#waitForJoinTime();
      await this.#openSession();
      await this.#launchAndJoin();
      await this.#attend();
      outcome = { state: "ended", subCode: "requested" };
    } catch (err) {
      outcome = this.#outcomeOf(err);
    }
    await this.#finish(outcome);
    return this.status;
  }

  #outcomeOf(err: unknown): Outcome {
    if (err instanceof BotEnd) return err.outcome;
    const leave = this.#leave.signal.reason;
    if (leave instanceof BotEnd && !this.#browser?.crashed.aborted) return leave.outcome;
    if (this.#browser?.crashed.aborted)
      return { state: "fatal", subCode: "browser_crashed", message: "The browser died." };
    this.#deps.logger.error({ err, botId: this.id }, "meeting bot failed");
    return { state: "fatal", subCode: "capture_failed", message: (err as Error)?.message ?? String(err) };
  }

  async #waitForJoinTime(): Promise<void> {
    const at = this.#deps.request.joinAt ? Date.parse(this.#deps.request.joinAt) : NaN;
    const delay = Number.isFinite(at) ? at - Date.now() : 0;
    if (delay > 0) await this.#sleep(delay);
    this.#throwIfLeaving();
  }

  async #openSession(): Promise<void> {
    const { runtime, createController, options, logger, request } = this.#deps;
    const agent = request.mode === "agent" ? this.#deps.assistant : undefined;
    const platformChat = options.chat.enabled ? this.#deps.driver.chat : undefined;
    const chat =
      platformChat &&
      new BotChat({
        botId: this.id,
        maxChars: platformChat.maxChars,
        post: (text) =>
          this.#browser ? platformChat.send(this.#page(), text) : Promise.reject(new Error("no page")),
        onMessage: (message) => this.#captions?.onChatMessage(message),
        logger,
      });
    this.#chat = chat;
    const captions = new BotCaptions({
      botId: this.id,
      botName: request.botName,
      platform: this.#deps.driver.platform,
      mode: request.mode,
      runtime,
      createController,
      options,
      transcriptPath: this.#deps.transcriptPath,
      logger,
      assistant: agent,
      onSessionClosed: (which, reason) => this.#sessionClosed(which, reason),
      onSpeech: () => {
        this.#lastSpeechAt = Date.now();
      },
      onLine: (line) => this.#emitLine(line),
      chat: chat && { post: (text) => chat.say(text), options: options.chat },
      cardCaptions: request.camera === "card",
    });
    this.#captions = captions;
    this.#status.value.sessionId = captions.session.id;
    if (request.mode === "agent" && !agent)
      throw fatal("capture_failed", "Agent mode is not configured on this worker.");
    const assistantSessionId = captions.assistantSessionId;
    if (assistantSessionId !== undefined) this.#status.value.assistantSessionId = assistantSessionId;
    await captions.start();
    this.#status.transition("joining");
  }

  /**
   * One of the bot's sessions was closed from outside (the runtime, the
   * cluster taking its lease away): the bot has nothing left to caption or
   * answer with, so it leaves the meeting.
   */
  #sessionClosed(which: CaptionSessionKind, reason: string): void {
    if (this.#leave.signal.aborted || isTerminal(this.#status.value.state)) return;
    this.#deps.logger.warn(
      { botId: this.id, which, reason },
      "meeting: the bot's session was closed; leaving",
    );
    this.#leave.abort(ended("session_closed", `The ${which} session was closed (${reason}).`));
  }

  /** Tells the line listeners (the cluster's job log) and the webhook of a line already in the durable transcript. */
  #emitLine(line: TranscriptLine): void {
    const index = this.#lineCount++;
    const notifier = this.#deps.notifier;
    if (notifier?.wants("meeting.transcript.line")) {
      // The id names the line (the bot and its index in the transcript): the same on every retry.
      void notifier.notify(
        { type: "meeting.transcript.line", timestamp: line.at, botId: this.id, index, line },
        `msg_${this.id}_line_${index}`,
      );
    }
    for (const listener of this.#lineListeners) {
      try {
        listener(line);
      } catch {
        // A listener cannot break the captions.
      }
    }
    this.#postCaption(line);
  }

  /** A participant's caption shown to the meeting, where the platform has a place for it (the test room). */
  #postCaption(line: TranscriptLine): void {
    const post = this.#deps.driver.postCaption;
    if (!post || line.role !== undefined || !this.#browser || this.#browser.crashed.aborted) return;
    post
      .call(this.#deps.driver, this.#page(), { speaker: line.speaker, text: line.text })
      .catch((err: unknown) => {
        this.#deps.logger.debug({ err, botId: this.id }, "meeting: caption not shown in the meeting");
      });
  }

  async #launchAndJoin(): Promise<void> {
    const { launcher, options, request, driver } = this.#deps;
    const signal = this.#leave.signal;
    this.#browser = await launcher.launch({
      initScript:
        captureScript({
          url: this.#deps.captureUrl(this.#captureToken),
          forcePcm: options.forcePcm,
          camera: request.camera ?? "off",
          cameraFps: options.camera.fps,
          ...(this.#deps.driver.cameraFrameRate ? { cameraTrackFps: this.#deps.driver.cameraFrameRate } : {}),
          receiveVideo: options.receiveVideo,
          botName: request.botName,
          // A transcribing bot never speaks: its microphone's audio graph need not run.
          microphone: request.mode === "transcribe" ? "silent" : "assistant",
          ...(driver.capture
            ? {
                preferStream: driver.capture.preferStream,
                ...(driver.capture.graceMs !== undefined
                  ? { preferStreamGraceMs: driver.capture.graceMs }
                  : {}),
              }
            : {}),
        }) + (driver.pageScript ? `\n${driver.pageScript}` : ""),
      extraArgs: this.#deps.browserArgs ?? [],
      label: this.id,
      signal,
    });
    this.#throwIfLeaving();
    await this.#openMeeting();
    await this.#startCamera();
  }

  /** Loads the join URL (again, on a retry). */
  async #openMeeting(): Promise<void> {
    const { driver, options, request } = this.#deps;
    const url = driver.joinUrl(new URL(request.meetingUrl), request.botName);
    await openMeetingPage(this.#browser!, url, options.joinTimeoutMs, () => this.#throwIfGone());
    this.#throwIfGone();
  }

  #context(): JoinContext {
    const { request } = this.#deps;
    return {
      botName: request.botName,
      signal: this.#leave.signal,
      wants: { microphone: request.mode === "agent", camera: (request.camera ?? "off") !== "off" },
    };
  }

  /** camera "url": opens the page beside the meeting; a page that does not load leaves the camera black. */
  async #startCamera(): Promise<void> {
    const { request, options, logger } = this.#deps;
    if (request.camera !== "url" || !request.cameraUrl || !this.#browser) return;
    try {
      this.#camera = await startCameraPage(this.#browser.page, {
        url: request.cameraUrl,
        allowedOrigins: options.camera.urlOrigins,
        fps: options.camera.fps,
        timeoutMs: options.joinTimeoutMs,
        logger,
        botId: this.id,
      });
    } catch (err) {
      this.#throwIfGone();
      logger.warn({ err, botId: this.id, url: request.cameraUrl }, "meeting: the camera page did not load");
    }
  }

  /**
   * Runs the join state machine (screen-machine.ts) over the driver's
   * readings until something ends the stay: each poll reads the page once,
   * then acts on the screen, reloads a retried or unknown screen, records
   * it, or ends with the screen's sub-code; in the call, timers, devices
   * and chat.
   */
  async #attend(): Promise<never> {
    const { options, driver } = this.#deps;
    const machine = new ScreenMachine(driver.screens, {
      unknownScreenMs: options.unknownScreenMs,
      unknownScreenRetries: options.unknownScreenRetries,
    });
    let joinStartedAt = Date.now();
    let waitingSince: number | undefined;
    let joinedAt: number | undefined;
    let devicesCheckedAt = 0;
    let failures = 0;
    for (;;) {
      this.#throwIfGone();
      const context = this.#context();
      let seen: MeetingObservation;
      try {
        seen = await driver.observe(this.#page(), context);
        failures = 0;
      } catch (err) {
        this.#throwIfGone();
        // A navigation in progress destroys the execution context: transient, unless it persists.
        if (++failures >= 10)
          throw fatal("browser_crashed", `The page stopped answering: ${(err as Error).message}`);
        await this.#sleep(options.pollIntervalMs);
        continue;
      }
      const now = Date.now();
      const step = machine.step(seen, now, joinedAt !== undefined);
      if (step.changed || step.record) await this.#noteScreen(step, step.record === true);
      if (step.end) throw new BotEnd(step.end);
      if (step.reload) {
        this.#deps.logger.info(
          { botId: this.id, screen: step.screen, why: step.reload.why },
          "meeting: loading the meeting again",
        );
        machine.reloaded();
        await this.#openMeeting();
        joinStartedAt = Date.now();
        await this.#sleep(options.pollIntervalMs);
        continue;
      }
      if (step.act) {
        try {
          await step.act(this.#page(), context);
        } catch (err) {
          this.#throwIfGone();
          this.#deps.logger.debug(
            { err, botId: this.id, screen: step.screen },
            "meeting: screen action failed",
          );
        }
      }
      if (step.screen !== UNKNOWN_SCREEN) {
        this.#captions!.setNames(seen.speakers, seen.sources);
        if (seen.activeSpeakers) this.#captions!.noteActiveSpeakers(seen.activeSpeakers);
      }
      switch (step.phase) {
        case "waiting_room":
          waitingSince ??= now;
          if (this.#status.value.state !== "in_waiting_room") this.#status.transition("in_waiting_room");
          if (now - waitingSince >= options.waitingRoomTimeoutMs) throw ended("waiting_room_timeout");
          break;
        case "joining":
          if (joinedAt === undefined && now - joinStartedAt >= options.joinTimeoutMs)
            throw fatal("blocked_by_platform", `not admitted: ${step.reason}`);
          break;
        case "in_call":
          if (joinedAt === undefined) {
            joinedAt = now;
            this.#lastSpeechAt = now;
            this.#status.value.timings.joinedAt = new Date(now).toISOString();
          }
          // An unknown screen in the call says nothing about who is there: the roster stays as last read.
          if (step.screen !== UNKNOWN_SCREEN) {
            this.#status.setParticipants(seen.participants);
            this.#othersCounted = seen.participantCount;
          }
          if (now - devicesCheckedAt >= DEVICE_CHECK_MS) {
            devicesCheckedAt = now;
            await this.#keepDevices(context);
          }
          this.#checkInCall(now, joinedAt);
          await this.#readChat();
          break;
        default:
          // End phases always come with `end` from the machine.
          break;
      }
      await this.#sleep(options.pollIntervalMs);
    }
  }

  /**
   * In the call, the platform's own microphone and camera toggles where the
   * bot needs them (agent mode heard: the microphone on; a card camera on),
   * checked by the platform's state and switched with a real click.
   */
  async #keepDevices(context: JoinContext): Promise<void> {
    const devices = this.#deps.driver.devices;
    if (!devices) return;
    for (const [name, toggle, on] of [
      ["microphone", devices.microphone, context.wants.microphone],
      ["camera", devices.camera, context.wants.camera],
    ] as const) {
      if (!toggle) continue;
      try {
        const state = await toggle.read(this.#page());
        if (state === undefined || state === on) continue;
        await toggle.set(this.#page(), on);
        this.#deps.logger.info({ botId: this.id, device: name, on }, "meeting: platform device switched");
      } catch (err) {
        this.#throwIfGone();
        this.#deps.logger.debug({ err, botId: this.id, device: name }, "meeting: device not switched");
      }
    }
  }

  /**
   * A screen passed: into the status (bounded) and to the screen listeners;
   * an unknown one (every one with `recordScreens: "all"`) saved with the
   * bot's record: its PNG and what the page showed, never in logs.
   */
  async #noteScreen(step: ScreenStep, unknown: boolean): Promise<void> {
    const keep = unknown || this.#deps.options.recordScreens === "all";
    const wanted = keep || this.#screenListeners.size > 0;
    let description: ScreenDescription | undefined;
    let png: Uint8Array | undefined;
    if (wanted) {
      // The page may be navigating: the screen then goes without its picture or description.
      description = await this.#page()
        .evaluate<ScreenDescription>(DESCRIBE_SCREEN_SCRIPT)
        .catch(() => undefined);
      png = await this.#page()
        .screenshot()
        .catch(() => undefined);
    }
    const files: { screenshot?: string; description?: string } = {};
    if (keep && (png || description)) {
      const n = String(this.#status.value.screens?.length ?? 0).padStart(3, "0");
      const base = join(this.#deps.recordDir, `${n}-${step.screen.replace(/[^a-z0-9_-]/gi, "_")}`);
      try {
        await mkdir(this.#deps.recordDir, { recursive: true });
        if (png) {
          await writeFile(`${base}.png`, png);
          files.screenshot = `${base}.png`;
        }
        if (description) {
          await writeFile(`${base}.json`, JSON.stringify(description, null, 2));
          files.description = `${base}.json`;
        }
      } catch (err) {
        this.#deps.logger.warn({ err, botId: this.id }, "meeting: screen not saved");
      }
    }
    const visit: ScreenVisit = {
      at: new Date().toISOString(),
      screen: step.screen,
      phase: step.phase,
      reason: step.reason,
      ...files,
    };
    this.#status.noteScreen(visit);
    for (const listener of this.#screenListeners) {
      try {
        listener({ ...visit, ...(description ? { seen: description } : {}), ...(png ? { png } : {}) });
      } catch {
        // A listener cannot break the bot.
      }
    }
  }

  /** New chat messages to the captions (transcript lines, questions). A failed read waits for the next poll. */
  async #readChat(): Promise<void> {
    const chat = this.#deps.driver.chat;
    if (!this.#chat || !chat) return;
    try {
      this.#chat.observe(await chat.read(this.#page(), this.#context()));
    } catch (err) {
      this.#deps.logger.debug({ err, botId: this.id }, "meeting: chat not readable");
    }
  }

  #checkInCall(now: number, joinedAt: number): void {
    const { options } = this.#deps;
    const capture = this.#captions!;
    // The platform's own count decides where it shows one: a roster panel may be closed or lag behind it.
    if ((this.#othersCounted ?? this.#status.value.participants.length) === 0) {
      this.#aloneSince ??= now;
      if (now - this.#aloneSince >= options.aloneTimeoutMs) throw ended("left_alone");
    } else {
      this.#aloneSince = undefined;
    }
    if (options.silenceTimeoutMs > 0 && now - this.#lastSpeechAt >= options.silenceTimeoutMs)
      throw ended("silence_timeout");
    if (now - joinedAt >= options.maxDurationMs) throw ended("max_duration");
    if (!capture.everConnected && now - joinedAt >= options.captureTimeoutMs)
      throw fatal("capture_failed", "The page never opened its capture socket.");
    if (capture.lostAt !== undefined && now - capture.lostAt >= options.captureTimeoutMs)
      throw fatal("capture_failed", "The page's capture socket closed.");
  }

  async #finish(outcome: Outcome): Promise<void> {
    const { logger, driver } = this.#deps;
    this.#chat?.close();
    await this.#camera?.close();
    const crashed = this.#browser?.crashed.aborted ?? false;
    if (this.#browser && !crashed && this.#status.value.state !== "scheduled") {
      this.#status.transition("leaving", outcome.subCode);
      try {
        await withTimeout(driver.leave(this.#page()), 3000);
      } catch (err) {
        logger.debug({ err, botId: this.id }, "meeting: polite leave failed");
      }
    }
    try {
      await this.#browser?.close();
    } catch (err) {
      logger.warn({ err, botId: this.id }, "meeting: browser close failed");
    }
    // Captions of speech already captured still finalize (bounded), so no spoken line is lost at the end.
    try {
      await withTimeout(this.#captions?.flush() ?? Promise.resolve(), 5000);
    } catch {
      logger.warn({ botId: this.id }, "meeting: last captions did not finalize in time");
    }
    const reason = outcome.state === "fatal" ? "error" : "completed";
    await this.#captions?.stop(reason);
    this.#status.value.timings.endedAt = new Date().toISOString();
    this.#status.transition(outcome.state, outcome.subCode, outcome.message);
    if (outcome.state === "fatal") {
      this.#captions?.session.emit({
        type: "health.changed",
        payload: { ok: false, botId: this.id, state: "fatal", subCode: outcome.subCode },
      });
    }
    await this.#captions?.close(reason);
  }

  #page(): DriverPage {
    return driverPage(this.#browser!);
  }

  #throwIfLeaving(): void {
    const reason = this.#leave.signal.reason;
    if (this.#leave.signal.aborted) throw reason instanceof BotEnd ? reason : ended("requested");
  }

  #throwIfGone(): void {
    if (this.#browser?.crashed.aborted) throw fatal("browser_crashed", "The browser died.");
    this.#throwIfLeaving();
  }

  /** Sleeps, waking early when asked to leave or when the browser dies. */
  #sleep(ms: number): Promise<void> {
    return interruptibleSleep(ms, [this.#leave.signal, ...(this.#browser ? [this.#browser.crashed] : [])]);
  }
}
