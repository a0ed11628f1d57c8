/**
 * What the bot needs from a meeting platform. A driver knows one platform's
 * pages (URLs, join flow, texts, roster) and nothing of capture, sessions or
 * timers; adding Zoom web or Teams is a new driver, with no change to the bot,
 * the capture script or core.
 */

/** The narrow page surface drivers use (puppeteer's Page fits). Page-side code is passed as strings. */
export interface DriverPage {
  evaluate<T>(script: string): Promise<T>;
  click(selector: string): Promise<void>;
  type(selector: string, text: string): Promise<void>;
  url(): string;
}

/** What the page shows, as far as the bot's lifecycle is concerned. */
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

export interface MeetingObservation {
  phase: MeetingPhase;
  /** Other participants in the call (never the bot itself); empty outside the call. */
  participants: string[];
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
  /** The page text that decided the phase, for diagnostics. */
  detail?: string;
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
}

export interface PlatformDriver {
  /** Platform name as requested over HTTP ("test-room", "google-meet", ...). */
  readonly platform: string;
  /** Whether this driver handles a meeting URL (used when the request names no platform). */
  matches(url: URL): boolean;
  /** The URL the bot opens (its name, the pinned locale...). */
  joinUrl(url: URL, botName: string): string;
  /**
   * Runs the join actions on the loaded page (name entry, microphone and
   * camera off, "Join now" / "Ask to join"). Resolves once the request to
   * join was made; admission is observed afterwards.
   */
  join(page: DriverPage, context: JoinContext): Promise<void>;
  /** Reads the page once. Must not throw for an unexpected page: answer "joining" with a detail. */
  observe(page: DriverPage, context: JoinContext): Promise<MeetingObservation>;
  /** Leaves the meeting politely (the browser is closed afterwards anyway). */
  leave(page: DriverPage): Promise<void>;
  /** The meeting's chat, read and written while in the call; absent when the platform has none. */
  readonly chat?: MeetingChat;
}
