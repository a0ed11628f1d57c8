import type { BotSubCode } from "../bot-status.js";

/**
 * What the bot needs from a meeting platform: the driver contract.
 *
 * A driver knows one platform's pages (addresses, screens, texts, roster,
 * devices, chat) and nothing of capture, sessions or timers. The bot runs
 * one join state machine for every platform (bot/screen-machine.ts); a
 * driver fills it in:
 *
 * 1. **Addresses.** `matches(url)` takes only the platform's own hosts and
 *    URL forms (meet.google.com, *.zoom.us, teams.microsoft.com /
 *    teams.live.com...) plus explicitly configured test origins: a driver is
 *    the only thing standing between a write token and the bot's browser
 *    fetching an arbitrary address (docs/operations.md, "What a write token
 *    can make the server fetch").
 * 2. **Screens.** `observe(page)` reads the page once and names the screen
 *    it shows (`screen`, a key of `screens`, or `"unknown"`), with the reason
 *    (which fact matched). Every screen is recognised from facts of the
 *    maintained open bots (selectors, texts, with curly apostrophes as the
 *    live copy has them), cited beside the fact (`source`). Rules:
 *    - admission (`in_call`) only from signals that exist only inside the
 *      call (participant tiles, the call-controls region, the captions
 *      button): never from a Leave button, which lobbies show too;
 *    - an end (`ended`, `removed`, `denied`...) only from the platform's
 *      own end screens and dialogs (their headings, the dialog's text),
 *      never from the page's whole text: a participant typing "the meeting
 *      has ended" in the chat must not end the bot (`screenText()` in
 *      screen-text.ts reads a page without its chat);
 *    - an unexpected page answers `"unknown"`, never throws.
 * 3. **What each screen means** (`screens[id]`, a `ScreenRule`): its
 *    lifecycle `phase`, the sub-code when it ends the bot, the real-input
 *    `act` to run on it (type the name, set the devices, click Join, dismiss
 *    a dialog, accept a recording notice), and `retry` where the references
 *    retry (Meet's "You can't join this video call", Zoom's "host has not
 *    started": reload after a wait, bounded, then end with the sub-code).
 *    The machine runs an act when its screen appears and again every
 *    `repeatMs` while it stays (a Join button disabled until ready, a click
 *    the page did not take). An unknown screen during the join is
 *    screenshotted into the bot's record (never into logs) after
 *    `meetings.unknownScreenMs` and the page reloaded, at most
 *    `meetings.unknownScreenRetries` times, then `fatal` /
 *    `blocked_by_platform`.
 * 4. **Input.** Every click and keystroke goes through `DriverPage`
 *    (`click`, `clickText`, `type`, `press`): real CDP input events on the
 *    element's box. Page scripts only read; they never `el.click()` or
 *    dispatch synthetic events (platforms ignore untrusted input).
 * 5. **Devices.** `devices.microphone` / `devices.camera` read and set the
 *    platform's own toggles. The machine keeps them where the bot needs
 *    them, checked by the platform's own state: the microphone ON for the
 *    whole call in agent mode (the assistant must be heard; the bot's
 *    microphone track itself is silent until the assistant speaks) and OFF
 *    in transcribe mode; the camera ON for `card` / `url` bots, else OFF.
 *    Pre-join acts read the wanted state from `JoinContext.wants`.
 * 6. **In the call.** `participants` (never the bot), `speakers`, `sources`,
 *    `activeSpeakers` as documented on `MeetingObservation`; `leave(page)`;
 *    an optional `chat`.
 */

/**
 * The narrow page surface drivers use (the bot's puppeteer page, bot/bot-page.ts).
 * Page-side code is passed as strings. Every click and keystroke is a real
 * input event (CDP), never a script in the page.
 */
export interface DriverPage {
  /** Runs a script in the page; for reading (and marking), never for clicking. */
  evaluate<T>(script: string): Promise<T>;
  /**
   * Clicks the first visible, enabled element matching `selector` that a
   * pointer at its centre would hit (not under a dialog), with real mouse
   * input. False when there is none.
   */
  click(selector: string, options?: { within?: string }): Promise<boolean>;
  /**
   * Clicks the first visible, enabled button / link / role=button whose text
   * or aria-label is one of `texts` (in order of preference; case and
   * typographic apostrophes ignored; `match: "prefix"` for labels that go on,
   * as "Turn off microphone (ctrl + d)"). Answers the text clicked, or null.
   */
  clickText(
    texts: readonly string[],
    options?: { within?: string; match?: "exact" | "prefix" },
  ): Promise<string | null>;
  /** Clicks the field, selects what it holds and types `text` over it key by key. False without such a field. */
  type(selector: string, text: string): Promise<boolean>;
  /** One key press ("Enter", "Escape"). */
  press(key: string): Promise<void>;
  /** A PNG of the window (unknown screens, the probe). */
  screenshot(): Promise<Uint8Array>;
  /** Moves the pointer a little (platforms hide their toolbars without pointer movement). */
  wake(): Promise<void>;
  url(): string;
}

/** What a screen means for the bot's lifecycle. */
export type MeetingPhase =
  | "joining"
  | "waiting_room"
  | "in_call"
  | "ended"
  | "removed"
  | "denied"
  | "not_found"
  | "sign_in_required"
  | "blocked";

/** The screen `observe()` answers when it recognises none. */
export const UNKNOWN_SCREEN = "unknown";

export interface MeetingObservation {
  /** The screen the page shows: a key of the driver's `screens`, or "unknown". */
  screen: string;
  /** Why: the fact that decided the screen (a selector, a text), for status messages and the probe. */
  reason: string;
  /** Other participants in the call (never the bot itself); empty outside the call. */
  participants: string[];
  /**
   * Others in the call as the platform counts them (the number on its
   * participants / People button, less the bot), where it shows one. Names
   * come from a panel that may be closed or lag; the count is what decides
   * that the bot is alone (`left_alone`) when present.
   */
  participantCount?: number;
  /**
   * Remote audio track id -> participant name, only for tracks that carry
   * exactly one participant (mesh calls: the tile whose audio plays the track).
   */
  speakers: Record<string, string>;
  /**
   * RTP source (SSRC or CSRC, decimal) -> participant name, where the platform
   * says which source is whom (its signalling, its DOM). SFU platforms forward
   * or mix several participants over a few receivers; the capture script
   * reports which sources are active on each track, and this table names them.
   * Names are sticky in the bot: omit what is not known rather than guess.
   */
  sources?: Record<string, string>;
  /**
   * Participants the page marks as speaking now (the platform's active-speaker
   * indication), where it has one; an empty list when it marks nobody, absent
   * when the platform has no marks. Speaker attribution names an utterance
   * after the one participant the marks read during it show
   * (speaker-attribution.ts), where neither its track nor its RTP source
   * names anyone else.
   */
  activeSpeakers?: string[];
}

/** What one screen means and what the bot does on it. */
export interface ScreenRule {
  /** The lifecycle this screen means. */
  phase: MeetingPhase;
  /**
   * The sub-code when this screen ends the bot (an end phase, or retries
   * exhausted). Default by phase: ended -> meeting_ended, removed -> kicked,
   * denied -> admission_denied, not_found -> meeting_not_found,
   * sign_in_required -> sign_in_required, blocked -> blocked_by_platform.
   */
  subCode?: BotSubCode;
  /** Real-input actions on this screen (DriverPage only). Run when it appears and every `repeatMs` while it stays. */
  act?(page: DriverPage, context: JoinContext): Promise<void>;
  /** How often `act` runs again while the screen stays, ms. Default 2 000. */
  repeatMs?: number;
  /**
   * A screen the references retry: after `waitMs` the join URL is loaded
   * again, at most `max` times per bot; then the bot ends with `subCode`.
   */
  retry?: { max: number; waitMs: number };
  /** Where the facts came from (repository + path), for docs and the probe. */
  source: string;
}

/** A platform device the driver can read and switch through the platform's own toggle. */
export interface DeviceToggle {
  /** On (true), off (false), or not shown (undefined). */
  read(page: DriverPage): Promise<boolean | undefined>;
  /** Switches it with a real click when it is not already `on`. Answers whether a click was made. */
  set(page: DriverPage, on: boolean): Promise<boolean>;
}

/** One message of the meeting's chat, as the page shows it. */
export interface ChatMessage {
  /** The sender's display name. */
  from: string;
  text: string;
  /** When it was sent, as the platform says (ISO-8601 when it says so; else what the page shows). */
  at: string;
  /** Posted by the bot itself (the platform marks own messages, or the sender is the bot's name). */
  self: boolean;
}

/**
 * The meeting's chat, for drivers whose platform has one. `read` answers the
 * messages the page currently shows, oldest first (the bot finds the new ones
 * itself, so a list the platform trims or re-renders is fine); `send` posts
 * one message of at most `maxChars` characters (the bot splits longer text).
 */
export interface MeetingChat {
  readonly maxChars: number;
  read(page: DriverPage, context: JoinContext): Promise<ChatMessage[]>;
  send(page: DriverPage, text: string): Promise<void>;
}

export interface JoinContext {
  botName: string;
  signal: AbortSignal;
  /** The devices the bot wants on: microphone in agent mode, camera for card / url bots. */
  wants: { microphone: boolean; camera: boolean };
}

export interface PlatformDriver {
  /** Platform name as requested over HTTP ("test-room", "google-meet", ...). */
  readonly platform: string;
  /** Whether this driver handles a meeting URL: the platform's own hosts and forms only (see above). */
  matches(url: URL): boolean;
  /** The URL the bot opens (its name, the pinned locale...). */
  joinUrl(url: URL, botName: string): string;
  /** What each screen `observe()` names means, and does. */
  readonly screens: Readonly<Record<string, ScreenRule>>;
  /** Reads the page once. Must not throw for an unexpected page: screen "unknown". */
  observe(page: DriverPage, context: JoinContext): Promise<MeetingObservation>;
  /**
   * The camera track's frame rate the platform needs for a `card` / `url`
   * camera, where it needs more than `meetings.camera.fps` (Meet: 30).
   */
  readonly cameraFrameRate?: number;
  /** The platform's microphone and camera toggles, where it has them. */
  readonly devices?: { microphone?: DeviceToggle; camera?: DeviceToggle };
  /** Leaves the meeting politely (the browser is closed afterwards anyway). */
  leave(page: DriverPage): Promise<void>;
  /**
   * A script the bot's browser runs in every document before the platform's
   * own (with the capture script): where a platform says who is speaking only
   * in its signalling (Meet's `collections` channel), the driver reads it
   * there and answers it from `observe()` (`sources`).
   */
  readonly pageScript?: string;
  /**
   * How the capture script picks the remote audio: `preferStream` where the
   * platform sends one mix beside per-speaker copies of the same voices
   * (Teams' `mainAudio`), so nothing is captured twice.
   */
  readonly capture?: { preferStream: string; graceMs?: number };
  /**
   * Shows a finalized caption to the meeting, where the platform has a place
   * for it (the test room's caption strip). Platforms without one omit it:
   * the bot never posts captions into a real meeting's chat.
   */
  postCaption?(page: DriverPage, caption: { speaker: string; text: string }): Promise<void>;
  /** The meeting's chat, read and written while in the call; absent when the platform has none. */
  readonly chat?: MeetingChat;
}
