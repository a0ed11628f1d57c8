import { TalkError } from "../core/index.js";
import { webhookKey } from "./bot/webhook-signing.js";

/** Webhook event types. */
export const WEBHOOK_EVENTS = ["meeting.bot.state", "meeting.transcript.line"] as const;

/** Where lifecycle webhooks go. */
export interface MeetingsWebhookOptions {
  /** http(s) URL receiving a POST per bot state change. Required. */
  url: string;
  /**
   * Signing secret. Required: a Standard Webhooks `whsec_<base64 of 24..64
   * bytes>` (the key is the decoded bytes), or any string of 16+ characters
   * (the key is its UTF-8 bytes).
   */
  secret: string;
  /** Secrets still signed with during a rotation (one more `v1,` signature each). Default none. */
  previousSecrets?: string[];
  /** Event types sent. Default both: `meeting.bot.state`, `meeting.transcript.line`. */
  events?: string[];
  /** Deliveries tried per event (first try included). Default 5. */
  maxAttempts?: number;
  /** Backoff before the first retry, doubled each retry, ms. Default 500. */
  initialBackoffMs?: number;
  /** Per-attempt timeout, ms. Default 5000. */
  timeoutMs?: number;
}

/** The meeting's chat (`meetings.chat`). */
export interface MeetingsChatOptions {
  /** Read the chat into the transcript and answer messages addressed to the bot. Default true. */
  enabled?: boolean;
  /** Agent mode: answers to chat questions are also spoken in the meeting. Default true. */
  speakAnswers?: boolean;
  /** Agent mode: answers to spoken questions are also posted in the chat, as heard. Default true. */
  postSpokenAnswers?: boolean;
}

/** The bot camera (`meetings.camera`). */
export interface MeetingsCameraOptions {
  /** Origins whose pages `camera: "url"` may show (exact `scheme://host[:port]`). Default none. */
  urlOrigins?: string[];
  /** Frames a second the card or URL page is drawn and sent at. Default 2 (5 cost ~0.06 core more). */
  fps?: number;
}

/** Meeting bots: timers, browser and capture settings (the `meetings` config section). */
export interface MeetingsOptions {
  /** Chromium executable. Default "/usr/bin/chromium". */
  chromiumPath?: string;
  /** Bots one worker runs at once; more are refused with session_limit. Default 4. */
  maxBots?: number;
  /** Time allowed in a waiting room before giving up (ended/waiting_room_timeout), ms. Default 600 000. */
  waitingRoomTimeoutMs?: number;
  /** Time the bot stays once nobody else is in the meeting (ended/left_alone), ms. Default 30 000. */
  aloneTimeoutMs?: number;
  /** Time without any participant speech before the bot leaves (ended/silence_timeout), ms; 0 never. Default 1 800 000. */
  silenceTimeoutMs?: number;
  /** Longest stay in a meeting (ended/max_duration), ms. Default 14 400 000 (4 h). */
  maxDurationMs?: number;
  /** Time from launch to the waiting room or the call before the join counts as blocked, ms. Default 60 000. */
  joinTimeoutMs?: number;
  /** Time in the call without the page's capture socket before capture_failed, ms. Default 15 000. */
  captureTimeoutMs?: number;
  /** An unrecognised screen during the join this long is saved (screenshot) and the page reloaded, ms. Default 15 000. */
  unknownScreenMs?: number;
  /** Reloads for unrecognised screens per bot; then fatal / blocked_by_platform. Default 2. */
  unknownScreenRetries?: number;
  /**
   * Which screens are saved with the bot's record (a PNG and what the page
   * showed: buttons, labels, headings, dialogs): "unknown" (default) or
   * "all" (`talkgate meetings probe`).
   */
  recordScreens?: "unknown" | "all";
  /**
   * The bot's browser: "headed" (default: Debian Chromium on an Xvfb virtual
   * display, as the live platforms need) or "headless" (development only:
   * no Xvfb needed, but platforms may refuse it).
   */
  browser?: "headed" | "headless";
  /** Headed browsers: one Xvfb display shared by the process's bots (default) or one per bot. */
  display?: "shared" | "per-bot";
  /** How often the platform driver reads the page (admission, roster, end), ms. Default 500. */
  pollIntervalMs?: number;
  /** Non-speech that ends a caption line, ms (multiple of 10). Default 600. */
  utteranceSilenceMs?: number;
  /** Longest caption line before it is cut, ms. Default 20 000. */
  maxUtteranceMs?: number;
  /** Send PCM16 from the page even where WebCodecs Opus is available (diagnostics). Default false. */
  forcePcm?: boolean;
  /** Lifecycle webhook; default none. */
  webhook?: MeetingsWebhookOptions;
  /** Agent mode: wake triggers until `voicewake.set` persists others. Default ["talkgate", "computer"]. */
  wakeTriggers?: string[];
  /** Agent mode: after a wake phrase alone, the same speaker's next caption within this time is the question, ms. Default 10 000. */
  wakeWindowMs?: number;
  /** Agent mode: speech over the assistant must last this long to interrupt it (shorter is dropped as echo), ms. Default 300. */
  bargeInMs?: number;
  /** Agent mode: speech is still gated this long after the assistant stops (echo tail), ms. Default 300. */
  echoTailMs?: number;
  /** The meeting's chat. */
  chat?: MeetingsChatOptions;
  /** The bot camera: origins for `camera: "url"`, frame rate. */
  camera?: MeetingsCameraOptions;
  /**
   * Receive the participants' video. Default false: the bot shows no video,
   * so its page answers every video section as not receiving and nobody
   * sends it video to decode (docs/notes/performance-history.md, "Meetings").
   */
  receiveVideo?: boolean;
  /** Extra Chromium flags for every bot (each `--name` or `--name=value`), after the built-in ones. Default none. */
  chromiumArgs?: string[];
  /** Cluster: how often a follower of a bot on another worker reads its new lines from Redis, ms. Default 500. */
  followPollMs?: number;
}

export type ResolvedMeetingsOptions = Required<Omit<MeetingsOptions, "webhook" | "chat" | "camera">> & {
  webhook: Required<MeetingsWebhookOptions> | undefined;
  chat: Required<MeetingsChatOptions>;
  camera: Required<MeetingsCameraOptions>;
};

export const MEETINGS_DEFAULTS = Object.freeze({
  chromiumPath: "/usr/bin/chromium",
  maxBots: 4,
  waitingRoomTimeoutMs: 600_000,
  aloneTimeoutMs: 30_000,
  silenceTimeoutMs: 1_800_000,
  maxDurationMs: 14_400_000,
  joinTimeoutMs: 60_000,
  captureTimeoutMs: 15_000,
  pollIntervalMs: 500,
  unknownScreenMs: 15_000,
  unknownScreenRetries: 2,
  recordScreens: "unknown" as "unknown" | "all",
  browser: "headed" as "headed" | "headless",
  display: "shared" as "shared" | "per-bot",
  utteranceSilenceMs: 600,
  maxUtteranceMs: 20_000,
  forcePcm: false,
  receiveVideo: false,
  wakeTriggers: Object.freeze(["talkgate", "computer"]) as unknown as string[],
  wakeWindowMs: 10_000,
  bargeInMs: 300,
  echoTailMs: 300,
  followPollMs: 500,
  chromiumArgs: Object.freeze([]) as unknown as string[],
  chat: Object.freeze({
    enabled: true,
    speakAnswers: true,
    postSpokenAnswers: true,
  }) as Required<MeetingsChatOptions>,
  camera: Object.freeze({
    urlOrigins: Object.freeze([]) as unknown as string[],
    fps: 2,
  }) as Required<MeetingsCameraOptions>,
});

/** Merges over the defaults and validates; config_invalid names the bad field. */
export function resolveMeetingsOptions(input: MeetingsOptions = {}): ResolvedMeetingsOptions {
  const defined = Object.fromEntries(
    Object.entries(input).filter(([, v]) => v !== undefined),
  ) as MeetingsOptions;
  const o = { ...MEETINGS_DEFAULTS, ...defined };
  const bad = (field: string, why: string): never => {
    throw new TalkError("config_invalid", `meetings.${field} ${why}`);
  };
  const int = (
    field: Exclude<
      keyof typeof MEETINGS_DEFAULTS,
      | "chat"
      | "chromiumArgs"
      | "camera"
      | "receiveVideo"
      | "forcePcm"
      | "wakeTriggers"
      | "chromiumPath"
      | "browser"
      | "display"
      | "recordScreens"
    >,
    min: number,
  ): void => {
    const v = o[field];
    if (typeof v !== "number" || !Number.isInteger(v) || v < min) bad(field, `must be an integer >= ${min}`);
  };
  if (typeof o.chromiumPath !== "string" || o.chromiumPath === "") bad("chromiumPath", "must be a path");
  int("maxBots", 1);
  int("waitingRoomTimeoutMs", 1);
  int("aloneTimeoutMs", 0);
  int("silenceTimeoutMs", 0);
  int("maxDurationMs", 1);
  int("joinTimeoutMs", 1);
  int("captureTimeoutMs", 1);
  int("pollIntervalMs", 10);
  int("unknownScreenMs", 100);
  int("unknownScreenRetries", 0);
  if (o.browser !== "headed" && o.browser !== "headless") bad("browser", 'must be "headed" or "headless"');
  if (o.display !== "shared" && o.display !== "per-bot") bad("display", 'must be "shared" or "per-bot"');
  if (o.recordScreens !== "unknown" && o.recordScreens !== "all")
    bad("recordScreens", 'must be "unknown" or "all"');
  int("utteranceSilenceMs", 100);
  int("maxUtteranceMs", 1000);
  int("wakeWindowMs", 1);
  int("bargeInMs", 20);
  int("echoTailMs", 0);
  int("followPollMs", 50);
  if (
    !Array.isArray(o.chromiumArgs) ||
    o.chromiumArgs.some((a) => typeof a !== "string" || !/^--[a-z0-9-]+(=.*)?$/i.test(a))
  )
    bad("chromiumArgs", "must be a list of --flags");
  if (
    !Array.isArray(o.wakeTriggers) ||
    o.wakeTriggers.length === 0 ||
    o.wakeTriggers.some((t) => typeof t !== "string" || t.trim() === "")
  ) {
    bad("wakeTriggers", "must be a non-empty list of words or phrases");
  }
  if (o.utteranceSilenceMs % 10 !== 0) bad("utteranceSilenceMs", "must be a multiple of 10");
  const chat = { ...MEETINGS_DEFAULTS.chat, ...(input.chat ?? {}) };
  for (const key of ["enabled", "speakAnswers", "postSpokenAnswers"] as const) {
    if (typeof chat[key] !== "boolean") bad(`chat.${key}`, "must be true or false");
  }
  if (typeof o.receiveVideo !== "boolean") bad("receiveVideo", "must be true or false");
  const camera = { ...MEETINGS_DEFAULTS.camera, ...(input.camera ?? {}) };
  if (
    !Array.isArray(camera.urlOrigins) ||
    camera.urlOrigins.some((origin) => typeof origin !== "string" || !isHttpOrigin(origin))
  )
    bad("camera.urlOrigins", "must be a list of http(s) origins (scheme://host[:port])");
  if (!Number.isInteger(camera.fps) || camera.fps < 1 || camera.fps > 30)
    bad("camera.fps", "must be an integer from 1 to 30");
  let webhook: Required<MeetingsWebhookOptions> | undefined;
  if (input.webhook) {
    const w = input.webhook;
    if (typeof w.url !== "string" || !/^https?:\/\//.test(w.url))
      bad("webhook.url", "must be an http(s) URL");
    const secretProblem = (secret: unknown): string | undefined => {
      if (typeof secret !== "string" || secret.length < 16) return "must be at least 16 characters";
      try {
        webhookKey(secret);
      } catch (err) {
        return (err as Error).message;
      }
      return undefined;
    };
    const problem = secretProblem(w.secret);
    if (problem) bad("webhook.secret", problem);
    for (const [i, old] of (w.previousSecrets ?? []).entries()) {
      const why = secretProblem(old);
      if (why) bad(`webhook.previousSecrets[${i}]`, why);
    }
    webhook = {
      maxAttempts: 5,
      initialBackoffMs: 500,
      timeoutMs: 5000,
      previousSecrets: [],
      events: [...WEBHOOK_EVENTS],
      ...w,
    };
    if (
      !Array.isArray(webhook.events) ||
      webhook.events.some((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e))
    )
      bad("webhook.events", `must list some of ${WEBHOOK_EVENTS.join(", ")}`);
    if (!Number.isInteger(webhook.maxAttempts) || webhook.maxAttempts < 1)
      bad("webhook.maxAttempts", "must be an integer >= 1");
    if (!Number.isInteger(webhook.initialBackoffMs) || webhook.initialBackoffMs < 0)
      bad("webhook.initialBackoffMs", "must be an integer >= 0");
    if (!Number.isInteger(webhook.timeoutMs) || webhook.timeoutMs < 1)
      bad("webhook.timeoutMs", "must be an integer >= 1");
  }
  return { ...o, webhook, chat, camera };
}

function isHttpOrigin(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.origin === value;
  } catch {
    return false;
  }
}
