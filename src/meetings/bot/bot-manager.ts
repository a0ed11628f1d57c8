import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { WebSocket } from "ws";
import { TalkError, linkedSignal } from "../../core/index.js";
import { NOOP_LOGGER, type TalkLogger } from "../../core/index.js";
import type { SessionControllerFactory } from "../../voice/index.js";
import type { AppJobs, JobInfo } from "../../cluster/index.js";
import type { TalkRuntime } from "../../core/index.js";
import { isTerminal, type BotMode, type BotStatus } from "../bot-status.js";
import {
  resolveMeetingsOptions,
  type MeetingsOptions,
  type ResolvedMeetingsOptions,
} from "../meetings-options.js";
import type { PlatformDriver } from "../platforms/platform-driver.js";
import { ChromiumLauncher, type BrowserLauncher } from "./browser-launcher.js";
import { DisplayPool } from "./virtual-display.js";
import { isAllowedCameraUrl } from "./camera-page.js";
import { MeetingBot, type MeetingBotDeps } from "./meeting-bot.js";
import { readTranscript, type TranscriptLine } from "./transcript-log.js";
import { WebhookNotifier } from "./webhook-notifier.js";
import type { VoiceWakeStore } from "../agent/voice-wake-store.js";
import { followLocal, followRemote, type FollowListener } from "./transcript-follow.js";

export interface BotManagerOptions {
  runtime: TalkRuntime;
  /** The process's controller factory: the bots' sessions get their providers and trusted options from it. */
  createController: SessionControllerFactory;
  /** Platform drivers, tried in order when a request names no platform. */
  drivers: readonly PlatformDriver[];
  /** Directory of transcripts (`<dataDir>/meetings/<botId>.transcript.jsonl`). Required. */
  dataDir: string;
  /** http(s) base URL this process answers at on loopback, once listening (the page's capture socket). Required. */
  localBaseUrl(): string | undefined;
  /** Default: Chromium through puppeteer-core at options.chromiumPath. */
  launcher?: BrowserLauncher;
  options?: MeetingsOptions;
  logger?: TalkLogger;
  /** Extra Chromium flags for every bot (tests). Default none. */
  browserArgs?: readonly string[];
  /**
   * The cluster's job queue: each bot runs as a `meeting-bot` job on a worker
   * with the bot role, and DELETE cancels the job wherever it runs. Default:
   * none, the bot runs here at once (no Redis needed).
   */
  jobs?: Pick<AppJobs, "enqueue" | "cancel" | "process" | "inspect">;
  /**
   * Agent mode: the wake triggers (voicewake); the answering session's
   * persona and brain are the controller factory's. Default: none, and
   * `mode: "agent"` is refused with capability_unsupported.
   */
  agent?: { voiceWake: VoiceWakeStore };
}

/** The data of a `meeting-bot` job. */
interface BotJobData {
  id: string;
  request: CreateBotRequest;
}

export interface CreateBotRequest {
  meetingUrl: string;
  platform?: string;
  botName: string;
  mode: BotMode;
  joinAt?: string;
  camera?: "off" | "card" | "url";
  /** camera "url": the page to show, from one of `meetings.camera.urlOrigins`. */
  cameraUrl?: string;
}

/**
 * The bots of this process: creates, finds, stops them, and hands the page's
 * capture socket to its bot. Bots run in-process; finished ones stay readable
 * (status and transcript) until close.
 */
export class BotManager {
  readonly options: ResolvedMeetingsOptions;
  readonly #deps: BotManagerOptions;
  readonly #bots = new Map<string, MeetingBot>();
  readonly #runs = new Set<Promise<BotStatus>>();
  /** Bots whose job runs on this worker: their status and transcript are local; others are read from the job. */
  readonly #runHere = new Set<string>();
  readonly #launcher: BrowserLauncher;
  readonly #logger: TalkLogger;
  readonly #shutdown = new AbortController();
  #state: "ready" | "closing" | "closed" = "ready";
  #closing: Promise<void> | undefined;

  constructor(deps: BotManagerOptions) {
    if (deps.drivers.length === 0)
      throw new TalkError("config_invalid", "BotManager needs at least one platform driver.");
    if (!deps.dataDir) throw new TalkError("config_invalid", "BotManager.dataDir is required.");
    this.options = resolveMeetingsOptions(deps.options);
    this.#deps = deps;
    this.#logger = deps.logger ?? NOOP_LOGGER;
    this.#launcher =
      deps.launcher ??
      new ChromiumLauncher({
        executablePath: this.options.chromiumPath,
        headless: this.options.browser === "headless",
        displays: new DisplayPool(this.options.display),
      });
    deps.jobs?.process<BotJobData>("meeting-bot", { role: "bot" }, (job, signal) =>
      this.#runJob(job, signal),
    );
  }

  get platforms(): string[] {
    return this.#deps.drivers.map((d) => d.platform);
  }

  /** Validates the request and starts the bot. Throws invalid_params, session_limit, shutting_down. */
  /**
   * Creates a bot: started here, or queued as a `meeting-bot` job (resolved
   * once the job is in the queue, so its status reads the same from every
   * worker as soon as the caller has the id).
   */
  async create(request: CreateBotRequest): Promise<BotStatus> {
    if (this.#state !== "ready") throw new TalkError("shutting_down");
    let url: URL;
    try {
      url = new URL(request.meetingUrl);
    } catch {
      throw new TalkError("invalid_params", "meetingUrl is not a URL.", {
        details: { issues: [{ path: "meetingUrl", message: "not a URL" }] },
      });
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw new TalkError("invalid_params", "meetingUrl must be http(s).", {
        details: { issues: [{ path: "meetingUrl", message: "must be http(s)" }] },
      });
    }
    const driver = request.platform
      ? this.#deps.drivers.find((d) => d.platform === request.platform)
      : this.#deps.drivers.find((d) => d.matches(url));
    if (!driver) {
      throw new TalkError(
        "invalid_params",
        request.platform
          ? `Unknown platform ${request.platform}.`
          : "No platform driver handles this meeting URL.",
        {
          details: {
            issues: [
              {
                path: request.platform ? "platform" : "meetingUrl",
                message: "unsupported",
                platforms: this.platforms,
              },
            ],
          },
        },
      );
    }
    // A named platform does not bypass its driver's URL rules (real Meet is https://meet.google.com/<code>).
    if (request.platform && !driver.matches(url)) {
      throw new TalkError("invalid_params", `meetingUrl is not a ${driver.platform} meeting address.`, {
        details: { issues: [{ path: "meetingUrl", message: `not a ${driver.platform} meeting address` }] },
      });
    }
    this.#checkCamera(request);
    if (request.mode === "agent" && !this.#deps.agent) {
      throw new TalkError(
        "capability_unsupported",
        "Agent mode needs an agent and voicewake triggers; this server has none configured.",
      );
    }
    const running = [...this.#bots.values()].filter((b) => !isTerminal(b.status.state)).length;
    if (running >= this.options.maxBots)
      throw new TalkError("session_limit", `This worker runs ${running} bots (meetings.maxBots).`);

    const id = randomUUID();
    const normalized: CreateBotRequest = { ...request, platform: driver.platform };
    const bot = this.#bot(id, normalized, driver);
    const jobs = this.#deps.jobs;
    if (jobs) {
      const delayMs = request.joinAt ? Math.max(0, Date.parse(request.joinAt) - Date.now()) : 0;
      await jobs
        .enqueue<BotJobData>(
          "meeting-bot",
          { id, request: normalized },
          { jobId: id, ...(delayMs > 0 ? { delayMs } : {}) },
        )
        .catch((err: unknown) => {
          this.#logger.error({ err, botId: id }, "meeting bot job not queued");
          bot.fail("capture_failed", "The bot job could not be queued.");
        });
    } else {
      this.#start(bot);
    }
    return bot.status;
  }

  /** camera "url" needs a cameraUrl on an allowed origin; a cameraUrl needs camera "url". */
  #checkCamera(request: CreateBotRequest): void {
    const refuse = (message: string, why: string): never => {
      throw new TalkError("invalid_params", message, {
        details: { issues: [{ path: "cameraUrl", message: why }] },
      });
    };
    if (request.camera !== "url") {
      if (request.cameraUrl !== undefined) refuse('cameraUrl needs camera "url".', 'needs camera "url"');
      return;
    }
    if (request.cameraUrl === undefined) refuse('camera "url" needs a cameraUrl.', "required");
    if (!isAllowedCameraUrl(request.cameraUrl!, this.options.camera.urlOrigins))
      refuse(
        "cameraUrl is not an http(s) page on an allowed origin (meetings.camera.urlOrigins).",
        "origin not allowed",
      );
  }

  #bot(id: string, request: CreateBotRequest, driver: PlatformDriver): MeetingBot {
    const bot = new MeetingBot({
      id,
      request: {
        meetingUrl: request.meetingUrl,
        botName: request.botName,
        mode: request.mode,
        ...(request.joinAt ? { joinAt: request.joinAt } : {}),
        ...(request.camera ? { camera: request.camera } : {}),
        ...(request.cameraUrl ? { cameraUrl: request.cameraUrl } : {}),
      },
      driver,
      launcher: this.#launcher,
      runtime: this.#deps.runtime,
      createController: this.#deps.createController,
      options: this.options,
      captureUrl: (token) => this.#captureUrl(id, token),
      transcriptPath: this.transcriptPath(id),
      recordDir: join(this.#deps.dataDir, "meetings", `${id}.screens`),
      notifier: this.options.webhook
        ? new WebhookNotifier(this.options.webhook, this.#logger, this.#shutdown.signal)
        : undefined,
      logger: this.#logger,
      ...(this.#deps.browserArgs ? { browserArgs: this.#deps.browserArgs } : {}),
      ...(this.#deps.agent ? { assistant: this.#assistant(this.#deps.agent) } : {}),
    });
    this.#bots.set(id, bot);
    return bot;
  }

  #assistant(agent: NonNullable<BotManagerOptions["agent"]>): NonNullable<MeetingBotDeps["assistant"]> {
    const o = this.options;
    return {
      triggers: () => agent.voiceWake.get().triggers,
      options: {
        wakeWindowMs: o.wakeWindowMs,
        bargeInMs: o.bargeInMs,
        echoTailMs: o.echoTailMs,
      },
    };
  }

  #start(bot: MeetingBot): Promise<BotStatus> {
    const run = bot.run();
    this.#runs.add(run);
    void run.finally(() => this.#runs.delete(run));
    return run;
  }

  /** A `meeting-bot` job on this worker: the bot created here by POST, or one built from the job on another worker's behalf. */
  async #runJob(job: JobInfo<BotJobData>, signal: AbortSignal): Promise<BotStatus> {
    const data = job.data;
    const driver = this.#deps.drivers.find((d) => d.platform === data.request.platform);
    if (!driver)
      throw new TalkError("invalid_params", `This worker has no driver for ${data.request.platform}.`);
    const bot = this.#bots.get(data.id) ?? this.#bot(data.id, data.request, driver);
    this.#runHere.add(data.id);
    const leave = (): void => bot.requestLeave("requested");
    signal.addEventListener("abort", leave, { once: true });
    // Status and transcript become readable from every worker: the job's progress and log (BullMQ, in Redis).
    const report = (status: BotStatus): void => {
      job
        .progress?.(status)
        .catch((err: unknown) =>
          this.#logger.debug({ err, botId: data.id }, "meeting bot status not recorded"),
        );
    };
    const offStatus = bot.onChange(report);
    const offLine = bot.onLine((line) => {
      job
        .log?.(JSON.stringify(line))
        .catch((err: unknown) =>
          this.#logger.debug({ err, botId: data.id }, "meeting transcript line not recorded"),
        );
    });
    report(bot.status);
    try {
      const final = await this.#start(bot);
      // Written before the job completes, so a reader never sees a finished job with a running status.
      await job.progress?.(final).catch(() => undefined);
      return final;
    } finally {
      offStatus();
      offLine();
      signal.removeEventListener("abort", leave);
    }
  }

  /** A bot's status from this worker or, in a cluster, from its job on whichever worker runs it. */
  async status(id: string): Promise<BotStatus | undefined> {
    const local = this.#bots.get(id);
    if (local && (!this.#deps.jobs || this.#runHere.has(id))) return local.status;
    const record = await this.#record(id, false);
    return (
      botStatusOf(record?.progress) ??
      local?.status ??
      (record ? this.#scheduledStatus(record.data) : undefined)
    );
  }

  /** Finalized transcript lines: the durable file here, or the job's log for a bot on another worker. */
  async transcriptOf(id: string): Promise<TranscriptLine[] | undefined> {
    if (this.#bots.has(id) && (!this.#deps.jobs || this.#runHere.has(id)))
      return readTranscript(this.transcriptPath(id));
    const record = await this.#record(id, true);
    if (!record) return this.#bots.has(id) ? [] : undefined;
    return record.logs.flatMap((l) => {
      try {
        return [JSON.parse(l) as TranscriptLine];
      } catch {
        return [];
      }
    });
  }

  /**
   * Follows a bot's transcript and status live, read-only, from any worker
   * (transcript-follow.ts): lines with an index above `afterIndex`, status
   * changes, then `end`. Here: the bot itself; in a cluster, for a bot on
   * another worker, its job record polled every `followPollMs`. Stops when
   * `signal` aborts. Answers the status at the start, or undefined (and
   * nothing follows) for an unknown bot.
   */
  async follow(
    id: string,
    afterIndex: number,
    listener: FollowListener,
    signal: AbortSignal,
  ): Promise<BotStatus | undefined> {
    const local = this.#bots.get(id);
    if (local && (!this.#deps.jobs || this.#runHere.has(id))) {
      const status = local.status;
      followLocal(local, this.transcriptPath(id), afterIndex, listener, signal, this.#logger);
      return status;
    }
    const first = await this.status(id);
    if (!first) return undefined;
    const jobs = this.#deps.jobs;
    if (!jobs) return undefined;
    const inspect = async (botId: string, logsFrom: number) => {
      const record = await jobs.inspect<BotJobData>(botId, { logs: true, logsFrom });
      if (record?.kind !== "meeting-bot") return undefined;
      return {
        status: botStatusOf(record.progress) ?? this.#scheduledStatus(record.data),
        logs: record.logs,
      };
    };
    // Not AbortSignal.any: the shutdown signal lives as long as the process and would keep a trace of every follow.
    const follow = linkedSignal([signal, this.#shutdown.signal]);
    void followRemote(inspect, first, afterIndex, listener, follow.signal, {
      pollMs: this.options.followPollMs,
      logger: this.#logger,
    }).finally(follow.unlink);
    return first;
  }

  /** DELETE from any worker: the bot leaves wherever it runs. Undefined for an unknown id. */
  async leave(id: string): Promise<BotStatus | undefined> {
    const local = this.stop(id);
    if (local || !this.#deps.jobs) return local;
    const record = await this.#record(id, false);
    return record ? (botStatusOf(record.progress) ?? this.#scheduledStatus(record.data)) : undefined;
  }

  async #record(id: string, logs: boolean): Promise<Awaited<ReturnType<AppJobs["inspect"]>>> {
    if (!this.#deps.jobs) return undefined;
    const record = await this.#deps.jobs.inspect<BotJobData>(id, { logs });
    return record?.kind === "meeting-bot" ? record : undefined;
  }

  #scheduledStatus(data: unknown): BotStatus | undefined {
    const job = data as Partial<BotJobData> | undefined;
    if (!job?.id || !job.request) return undefined;
    const at = new Date().toISOString();
    return {
      id: job.id,
      meetingUrl: job.request.meetingUrl,
      platform: job.request.platform ?? "unknown",
      botName: job.request.botName,
      mode: job.request.mode,
      state: "scheduled",
      participants: [],
      history: [{ state: "scheduled", at }],
      timings: { requestedAt: at },
    };
  }

  get(id: string): MeetingBot | undefined {
    return this.#bots.get(id);
  }

  /** Asks a bot to leave. Returns its status, or undefined for an unknown id. */
  stop(id: string): BotStatus | undefined {
    const bot = this.#bots.get(id);
    bot?.requestLeave("requested");
    // A bot still waiting (for its join time, or its job) ends here, as "requested", without launching anything.
    if (bot && !bot.started && !this.#deps.jobs) void this.#start(bot);
    // The job may run on another worker: cancelling reaches it there (and removes a job still waiting).
    this.#deps.jobs
      ?.cancel(id, "requested")
      .then((outcome) => {
        if (outcome === "removed" && bot && !bot.started) void this.#start(bot);
      })
      .catch((err: unknown) => this.#logger.warn({ err, botId: id }, "meeting bot job cancel failed"));
    return bot?.status;
  }

  transcriptPath(id: string): string {
    return join(this.#deps.dataDir, "meetings", `${id}.transcript.jsonl`);
  }

  transcript(id: string): TranscriptLine[] | undefined {
    return this.#bots.has(id) ? readTranscript(this.transcriptPath(id)) : undefined;
  }

  /** Hands a capture socket to its bot; false (and the socket closed) when the id or token is wrong. */
  attachCapture(id: string, token: string, socket: WebSocket): boolean {
    const bot = this.#bots.get(id);
    if (bot?.attachCapture(socket, token)) return true;
    socket.close(4401, "unknown bot or bad token");
    return false;
  }

  /** Every bot leaves (ended/requested), browsers die, then pending webhooks are dropped. Idempotent. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#state = "closing";
      for (const bot of this.#bots.values()) bot.requestLeave("requested");
      await Promise.allSettled([...this.#runs]);
      this.#shutdown.abort();
      this.#state = "closed";
    })();
    return this.#closing;
  }

  #captureUrl(id: string, token: string): string {
    const base = this.#deps.localBaseUrl();
    if (!base)
      throw new TalkError("invalid_state", "The server is not listening: bots cannot stream audio back.");
    const url = new URL(`/meetings/bots/${encodeURIComponent(id)}/capture`, base);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("token", token);
    return url.toString();
  }
}

/**
 * A bot job's progress as a status: what the bot's worker reported, if it has. A job's progress is the
 * queue's default (BullMQ: 0) until then, so a worker reading a bot its job has not started yet answers
 * the scheduled status, not that 0.
 */
function botStatusOf(progress: unknown): BotStatus | undefined {
  if (typeof progress !== "object" || progress === null) return undefined;
  const p = progress as Partial<BotStatus>;
  return typeof p.id === "string" && typeof p.state === "string" ? (progress as BotStatus) : undefined;
}
